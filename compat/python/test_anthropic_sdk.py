"""The official Anthropic Python SDK against the gateway's /v1/messages, for every provider type behind it (Anthropic
passed through; OpenAI-compatible and Gemini translated; mock upstreams started by compat/python-sdk.test.ts),
authenticated with auth_token (a Bearer), as the gateway asks of Anthropic clients."""

import os

import anthropic
import pytest

# The SDK appends /v1/messages to the gateway's root.
ROOT_URL = os.environ["SWITCHBOARD_BASE_URL"].removesuffix("/v1")
KEY = os.environ["SWITCHBOARD_KEY"]
PREFIXES = ["", "claude-", "gemini-"]
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def text_model(prefix):
    return "gpt-4o-mini" if prefix == "" else f"{prefix}mock"


def tools_model(prefix):
    return "tools" if prefix == "" else f"{prefix}tools"


@pytest.fixture()
def client():
    return anthropic.Anthropic(base_url=ROOT_URL, auth_token=KEY, api_key=None, max_retries=0)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_create(client, prefix):
    message = client.messages.create(
        model=text_model(prefix), max_tokens=100, messages=[{"role": "user", "content": "Say hello"}]
    )
    assert message.type == "message"
    assert message.content[0].type == "text"
    assert message.content[0].text == "Echo: Say hello"
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens > 0
    assert message.usage.output_tokens > 0


@pytest.mark.parametrize("prefix", PREFIXES)
def test_stream(client, prefix):
    with client.messages.stream(
        model=text_model(prefix), max_tokens=100, messages=[{"role": "user", "content": "Say hello"}]
    ) as stream:
        text = "".join(stream.text_stream)
        message = stream.get_final_message()
    assert text == "Echo: Say hello"
    assert message.content[0].text == "Echo: Say hello"
    assert message.stop_reason == "end_turn"


@pytest.mark.parametrize("prefix", PREFIXES)
def test_tool_round_trip(client, prefix):
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.messages.create(model=tools_model(prefix), max_tokens=200, tools=[WEATHER_TOOL], messages=messages)
    assert first.stop_reason == "tool_use"
    tool_use = next(block for block in first.content if block.type == "tool_use")
    assert tool_use.name == "get_weather"
    assert tool_use.input["city"] == "Paris"
    messages += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use.id, "content": "18 C"}]},
    ]
    second = client.messages.create(model=tools_model(prefix), max_tokens=200, tools=[WEATHER_TOOL], messages=messages)
    assert second.stop_reason == "end_turn"
    assert "18 C" in second.content[0].text


@pytest.mark.parametrize("prefix", PREFIXES)
def test_count_tokens(client, prefix):
    counted = client.messages.count_tokens(
        model=text_model(prefix), messages=[{"role": "user", "content": "How long is this prompt?"}]
    )
    assert counted.input_tokens > 0


def test_errors_are_typed(client):
    with pytest.raises(anthropic.NotFoundError) as raised:
        client.messages.create(model="no-such-model", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert raised.value.body["error"]["type"] == "not_found_error"
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model="gpt-4o-mini", max_tokens=-1, messages=[{"role": "user", "content": "x"}])
    assert refused.value.body["error"]["message"] == "max_tokens: Input should be greater than or equal to 0"
