"""The official OpenAI Python SDK's embeddings.create through the gateway (started by compat/python-sdk.test.ts with
the OpenAI-compatible mock as upstream). The SDK asks for base64 by default and decodes it as little-endian float32:
the vectors must equal the mock's exactly, computed here as the mock computes them."""

import base64
import json
import math
import os
import struct

import pytest
from openai import BadRequestError, OpenAI

BASE_URL = os.environ["SWITCHBOARD_BASE_URL"]
KEY = os.environ["SWITCHBOARD_KEY"]


def fround(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def mock_embedding(value, dimensions=8):
    """test/support/mock-openai-embeddings.ts mockEmbedding: FNV-1a of the input's JSON, then sin steps."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    seed = 0x811C9DC5
    for character in text:
        seed ^= ord(character)
        seed = (seed * 0x01000193) & 0xFFFFFFFF
    return [fround(math.sin(seed + index * 7.3) / 3) for index in range(dimensions)]


@pytest.fixture()
def client():
    return OpenAI(base_url=BASE_URL, api_key=KEY, max_retries=0)


def test_default_encoding_gives_the_upstream_vectors(client):
    result = client.embeddings.create(model="text-embedding-3-small", input=["first", "second"])
    assert [item.embedding for item in result.data] == [mock_embedding("first"), mock_embedding("second")]
    assert result.usage.prompt_tokens == 2


@pytest.mark.parametrize("model", ["embed-float-only", "embed-base64-only"])
def test_either_upstream_encoding_gives_the_same_vectors(client, model):
    expected = mock_embedding("some text")
    # The SDK decodes base64 itself only when it chose it (no encoding_format given).
    assert client.embeddings.create(model=model, input="some text").data[0].embedding == expected
    floats = client.embeddings.create(model=model, input="some text", encoding_format="float")
    assert floats.data[0].embedding == expected
    asked = client.embeddings.create(model=model, input="some text", encoding_format="base64").data[0].embedding
    raw = base64.b64decode(asked)
    assert list(struct.unpack(f"<{len(raw) // 4}f", raw)) == expected


def test_a_chat_model_is_refused(client):
    with pytest.raises(BadRequestError) as raised:
        client.embeddings.create(model="gpt-4o-mini", input="x")
    assert raised.value.body["param"] == "model"
