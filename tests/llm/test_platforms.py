"""Bedrock's and Vertex's own parts (`llm/platforms.py`): the SigV4 signer against AWS's
published test vectors, the event-stream reader however its bytes are cut, and the
credential lookups that say where they looked."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cloud_fakes import eventstream_frame
from hypothesis import given
from hypothesis import strategies as st

from coder_ls.llm.base import ProviderError
from coder_ls.llm.platforms import (
    AwsCredentials,
    EventStreamReader,
    aws_credentials,
    aws_region,
    bedrock_model_id,
    sigv4_authorization,
    table_id,
    vertex_platform,
)

SUITE = AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
HEADERS = {"host": "example.amazonaws.com", "x-amz-date": "20150830T123600Z"}


@pytest.mark.parametrize(
    ("method", "url", "signature"),
    [  # the AWS SigV4 test suite: get-vanilla, post-vanilla, get-vanilla-query-order-key-case
        ("GET", "https://example.amazonaws.com/", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
        ("POST", "https://example.amazonaws.com/", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
        (
            "GET",
            "https://example.amazonaws.com/?Param2=value2&Param1=value1",
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
        ),
    ],
)
def test_sigv4_reproduces_the_aws_test_suite(method: str, url: str, signature: str) -> None:
    header = sigv4_authorization(method, url, HEADERS, b"", SUITE, "us-east-1", "service", "20150830T123600Z")
    assert header == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        f"SignedHeaders=host;x-amz-date, Signature={signature}"
    )


def chunk(event: dict[str, object]) -> bytes:
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode()
    return eventstream_frame({":event-type": "chunk", ":message-type": "event"}, payload)


EVENTS = [{"type": "message_start", "message": {}}, {"type": "ping"}, {"type": "message_stop"}]


@given(st.lists(st.integers(min_value=0, max_value=400), max_size=10))
def test_the_event_stream_survives_any_cut(cuts: list[int]) -> None:
    raw = b"".join(chunk(e) for e in EVENTS)
    points = sorted({min(c, len(raw)) for c in cuts})
    reader = EventStreamReader(1 << 20, 1 << 24)
    found = [e for a, b in zip([0, *points], [*points, len(raw)], strict=True) for e in reader.feed(raw[a:b])]
    assert [json.loads(e) for e in found] == EVENTS


def test_a_broken_frame_is_retried_and_an_exception_frame_is_its_error() -> None:
    broken = bytearray(chunk({"type": "ping"}))
    broken[-6] ^= 1
    with pytest.raises(ProviderError) as caught:
        EventStreamReader(1 << 20, 1 << 24).feed(bytes(broken))
    assert caught.value.retryable and "checksum" in caught.value.message
    frame = eventstream_frame(
        {":message-type": "exception", ":exception-type": "throttlingException"}, b'{"message":"slow down"}'
    )
    with pytest.raises(ProviderError) as caught:
        EventStreamReader(1 << 20, 1 << 24).feed(frame)
    assert (caught.value.kind, caught.value.retryable) == ("rate_limit", True) and "slow down" in caught.value.message
    with pytest.raises(ProviderError, match="oversized"):
        EventStreamReader(1000, 1 << 24).feed(b"\x00\x10\x00\x00" + b"\x00" * 20)


def test_model_ids_as_bedrock_names_them_and_back() -> None:
    assert bedrock_model_id("claude-sonnet-5-5") == "anthropic.claude-sonnet-5-5-v1:0"
    assert bedrock_model_id("us.anthropic.claude-opus-4-6-v1:0") == "us.anthropic.claude-opus-4-6-v1:0"
    assert table_id("us.anthropic.claude-haiku-4-5-20251001-v1:0") == "claude-haiku-4-5-20251001"
    assert table_id("claude-sonnet-4-5@20250929") == "claude-sonnet-4-5"


def test_aws_credentials_come_from_the_environment_then_the_profile(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK", "AWS_SESSION_TOKEN": "T"}
    found = aws_credentials(env)
    assert (found.key, found.secret, found.token) == ("AK", "SK", "T")
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[work]\naws_access_key_id = AK2\naws_secret_access_key = SK2\n")
    (tmp_path / ".aws" / "config").write_text("[profile work]\nregion = eu-west-3\n")
    env = {"HOME": str(tmp_path), "AWS_PROFILE": "work"}
    assert aws_credentials(env).key == "AK2" and aws_region(env) == "eu-west-3"
    with pytest.raises(ProviderError) as caught:
        aws_credentials({"HOME": str(tmp_path), "AWS_PROFILE": "other"})
    message = caught.value.message
    assert "AWS_ACCESS_KEY_ID" in message and str(tmp_path / ".aws" / "credentials") in message and "'other'" in message


def test_vertex_says_which_credential_is_missing_and_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as caught:
        vertex_platform({"HOME": str(tmp_path), "CLOUD_ML_REGION": "us-east5"})
    message = caught.value.message
    assert "GOOGLE_APPLICATION_CREDENTIALS" in message and "application_default_credentials.json" in message
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps({"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"})
    )
    with pytest.raises(ProviderError, match="ANTHROPIC_VERTEX_PROJECT_ID"):
        vertex_platform({"HOME": str(tmp_path), "GOOGLE_APPLICATION_CREDENTIALS": str(adc), "CLOUD_ML_REGION": "x"})
    with pytest.raises(ProviderError, match="CLOUD_ML_REGION"):
        vertex_platform({"GOOGLE_APPLICATION_CREDENTIALS": str(adc), "ANTHROPIC_VERTEX_PROJECT_ID": "p"})
