"""The official OpenAI Python SDK against every provider type behind the gateway (OpenAI-compatible, Anthropic and
Gemini mock upstreams speaking their real wire formats; started by compat/python-sdk.test.ts)."""

import json
import os

import pytest
from openai import OpenAI

BASE_URL = os.environ["SWITCHBOARD_BASE_URL"]
KEY = os.environ["SWITCHBOARD_KEY"]
PREFIXES = ["", "claude-", "gemini-"]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def text_model(prefix):
    return "gpt-4o-mini" if prefix == "" else f"{prefix}mock"


@pytest.fixture()
def client():
    return OpenAI(base_url=BASE_URL, api_key=KEY, max_retries=0)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_completion(client, prefix):
    completion = client.chat.completions.create(
        model=text_model(prefix), messages=[{"role": "user", "content": "Say hello"}]
    )
    assert completion.choices[0].message.content == "Echo: Say hello"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.total_tokens > 0


@pytest.mark.parametrize("prefix", PREFIXES)
def test_stream_with_usage(client, prefix):
    stream = client.chat.completions.create(
        model=text_model(prefix),
        messages=[{"role": "user", "content": "Say hello"}],
        stream=True,
        stream_options={"include_usage": True},
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


@pytest.mark.parametrize("prefix", PREFIXES)
def test_stream_helper_accumulates_tool_calls(client, prefix):
    # The helper concatenates every string field of repeated deltas: a role or tool id sent twice would corrupt it.
    with client.chat.completions.stream(
        model=f"{prefix}tools", messages=[{"role": "user", "content": "Weather in Paris?"}], tools=[WEATHER_TOOL]
    ) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.role == "assistant"
    assert final.choices[0].finish_reason == "tool_calls"
    call = message.tool_calls[0]
    assert call.type == "function"
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris", "unit": "celsius"}


@pytest.mark.parametrize("prefix", PREFIXES)
def test_tool_round_trip(client, prefix):
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.create(model=f"{prefix}tools", messages=messages, tools=[WEATHER_TOOL])
    message = first.choices[0].message
    call = message.tool_calls[0]
    # The assistant message goes back exactly as the SDK parsed it.
    messages.append(message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"temperature": 20}'})
    second = client.chat.completions.create(model=f"{prefix}tools", messages=messages, tools=[WEATHER_TOOL])
    assert "The weather:" in second.choices[0].message.content
    assert "20" in second.choices[0].message.content


THINKING = {"type": "enabled", "budget_tokens": 1024}


@pytest.mark.parametrize("stream", [False, True])
def test_claude_thinking_across_a_tool_call(client, stream):
    # Claude's signed thinking comes as `thinking_blocks`; the stream helper merges its fragments by their index, and
    # the assistant message goes back as the SDK parsed it, blocks included, so thinking stays on for the results.
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    request = {"model": "claude-thinking-tools", "tools": [WEATHER_TOOL], "extra_body": {"thinking": THINKING}}
    if stream:
        with client.chat.completions.stream(messages=messages, **request) as events:
            first = events.get_final_completion()
    else:
        first = client.chat.completions.create(messages=messages, **request)
    message = first.choices[0].message
    assistant = message.model_dump(exclude_none=True)
    kinds = [block["type"] for block in assistant["thinking_blocks"]]
    assert kinds == ["thinking", "redacted_thinking"]
    assert assistant["thinking_blocks"][0]["signature"]
    messages.append(assistant)
    messages.append({"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "18 C"})
    raw = client.chat.completions.with_raw_response.create(messages=messages, **request)
    assert raw.headers.get("x-switchboard-dropped-parameters") is None
    assert raw.parse().choices[0].message.content == "The weather: 18 C"
