"""The official OpenAI Python SDK against a running Switchboard (started by compat/python-sdk.test.ts)."""

import json
import os

import openai
import pytest
from openai import OpenAI

BASE_URL = os.environ["SWITCHBOARD_BASE_URL"]
KEY = os.environ["SWITCHBOARD_KEY"]
MESSAGES = [{"role": "user", "content": "Say hello"}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


@pytest.fixture()
def client():
    return OpenAI(base_url=BASE_URL, api_key=KEY, max_retries=0)


def test_completion(client):
    completion = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    assert completion.choices[0].message.content == "Echo: Say hello"
    assert completion.choices[0].message.role == "assistant"
    assert completion.usage.total_tokens > 0
    assert completion._request_id.startswith("req_")


def test_stream_with_usage(client):
    stream = client.chat.completions.create(
        model="gpt-4o-mini", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    text, usage, finish = "", None, None
    for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            finish = chunk.choices[0].finish_reason or finish
        if chunk.usage:
            usage = chunk.usage
    assert text == "Echo: Say hello"
    assert finish == "stop"
    assert usage.completion_tokens > 0


def test_stream_helper_accumulates_tool_calls(client):
    # The helper concatenates every string field of repeated deltas: a role or tool id sent twice would corrupt it.
    with client.chat.completions.stream(model="tools", messages=MESSAGES, tools=[WEATHER_TOOL]) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.role == "assistant"
    call = message.tool_calls[0]
    assert call.id == "call_mock_1"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris", "unit": "celsius"}
    assert final.choices[0].finish_reason == "tool_calls"


def test_models(client):
    ids = [model.id for model in client.models.list()]
    assert "gpt-4o-mini" in ids
    assert client.models.retrieve("gpt-4o-mini").id == "gpt-4o-mini"


def test_error_classes(client):
    bad = OpenAI(base_url=BASE_URL, api_key="sk-sb-not-a-real-key-000000000000", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as auth:
        bad.chat.completions.create(model="mock", messages=MESSAGES)
    assert auth.value.code == "invalid_api_key"
    assert auth.value.request_id.startswith("req_")

    with pytest.raises(openai.NotFoundError) as not_found:
        client.chat.completions.create(model="nope", messages=MESSAGES)
    assert not_found.value.code == "model_not_found"

    with pytest.raises(openai.BadRequestError) as bad_request:
        client.chat.completions.create(model="mock", messages=MESSAGES, temperature=5)
    assert bad_request.value.param == "temperature"

    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="error-429", messages=MESSAGES)

    with pytest.raises(openai.InternalServerError) as upstream:
        client.chat.completions.create(model="error-500", messages=MESSAGES)
    assert upstream.value.status_code == 502


def test_mid_stream_failure_raises(client):
    stream = client.chat.completions.create(model="midstream-reset", messages=MESSAGES, stream=True)
    text = ""
    with pytest.raises(openai.APIError):
        for chunk in stream:
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
    assert text
