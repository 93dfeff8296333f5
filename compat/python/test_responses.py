"""The official OpenAI Python SDK's Responses API against a running Switchboard (started by compat/python-sdk.test.ts)."""

import json
import os

import openai
import pytest
from openai import OpenAI
from pydantic import BaseModel

BASE_URL = os.environ["SWITCHBOARD_BASE_URL"]
KEY = os.environ["SWITCHBOARD_KEY"]
WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "strict": False,
}


@pytest.fixture()
def client():
    return OpenAI(base_url=BASE_URL, api_key=KEY, max_retries=0)


def test_create(client):
    response = client.responses.create(model="gpt-4o-mini", input="Say hello")
    assert response.output_text == "Echo: Say hello"
    assert response.status == "completed"
    assert response.usage.total_tokens > 0
    assert response.id.startswith("resp_")


def test_stream(client):
    text, types = "", []
    with client.responses.stream(model="gpt-4o-mini", input="Say hello") as stream:
        for event in stream:
            types.append(event.type)
            if event.type == "response.output_text.delta":
                text += event.delta
        final = stream.get_final_response()
    assert text == "Echo: Say hello"
    assert final.output_text == text
    assert types[0] == "response.created" and types[-1] == "response.completed"


def test_tool_round_trip_and_state(client):
    first = client.responses.create(model="tools", input="Weather in Paris?", tools=[WEATHER_TOOL])
    call = next(item for item in first.output if item.type == "function_call")
    assert json.loads(call.arguments)["city"] == "Paris"
    second = client.responses.create(
        model="tools",
        previous_response_id=first.id,
        tools=[WEATHER_TOOL],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "rainy"}],
    )
    assert second.output_text == "The weather: rainy"
    assert client.responses.retrieve(second.id).output_text == "The weather: rainy"
    items = list(client.responses.input_items.list(second.id, order="asc"))
    assert [item.type for item in items] == ["message", "function_call", "function_call_output"]
    client.responses.delete(second.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(second.id)


class Weather(BaseModel):
    city: str
    temperature: float


def test_structured_output_parsed_with_pydantic(client):
    # The mock's `structured` scenario answers {"city": "Paris", "temperature": 21} whatever the schema.
    parsed = client.responses.parse(model="structured", input="Weather in Paris?", text_format=Weather)
    assert parsed.output_parsed == Weather(city="Paris", temperature=21)
    with client.responses.stream(model="structured", input="Weather in Paris?", text_format=Weather) as stream:
        final = stream.get_final_response()
    assert final.output_parsed == Weather(city="Paris", temperature=21)
    chat = client.chat.completions.parse(
        model="structured", messages=[{"role": "user", "content": "Weather in Paris?"}], response_format=Weather
    )
    assert chat.choices[0].message.parsed == Weather(city="Paris", temperature=21)


def test_bad_input_names_the_parameter(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-4o-mini", input="hi", temperature=5)
    assert caught.value.body["param"] == "temperature"
