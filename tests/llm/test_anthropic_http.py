"""The Messages API client's own reading of the wire: server-sent events however the bytes
are cut, and error bodies that are not the API's (a proxy's HTML page)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from coder_ls.llm.anthropic_http import SseReader, http_error

EVENTS = [
    b'{"type":"message_start","message":{"usage":{"input_tokens":3}}}',
    b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\r\\nb"}}',
    b'{"type":"message_stop"}',
]


def wire(newline: bytes) -> bytes:
    out = b": keep-alive comment" + newline + newline
    for data in EVENTS:
        out += b"event: x" + newline + b"data: " + data + newline + newline
    return out


def read(chunks: list[bytes]) -> list[bytes]:
    reader = SseReader()
    found: list[bytes] = []
    for chunk in chunks:
        found += reader.feed(chunk)
    return found


@given(st.sampled_from([b"\n", b"\r\n", b"\r"]), st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_events_survive_any_cut_and_any_line_end(newline: bytes, cuts: list[int]) -> None:
    raw = wire(newline)
    points = sorted({min(c, len(raw)) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert read(chunks) == EVENTS


def test_data_on_several_lines_is_joined() -> None:
    assert read([b'data: {"type":\ndata: "ping"}\n\n']) == [b'{"type":\n"ping"}']


def test_an_html_error_page_is_a_retryable_server_error_with_its_start() -> None:
    error = http_error(502, b"<html><body>Bad gateway</body></html>", {})
    assert error.kind == "server" and error.retryable and "Bad gateway" in error.message


def test_an_api_error_body_keeps_its_type_and_retry_after() -> None:
    body = b'{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    error = http_error(429, body, {"retry-after": "2"})
    assert (error.kind, error.retryable, error.retry_after) == ("rate_limit", True, 2.0)


def test_the_proxy_comes_from_the_environment_once() -> None:
    from coder_ls.llm.anthropic_http import proxy_for

    env = {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost,.internal"}
    assert proxy_for("https://api.anthropic.com", env) == "http://proxy:3128"
    assert proxy_for("https://gw.internal/anthropic", env) is None
    assert proxy_for("https://api.anthropic.com", {"all_proxy": "http://any:1"}) == "http://any:1"
    assert proxy_for("http://127.0.0.1:9", {"HTTPS_PROXY": "http://proxy:3128"}) is None  # http, not https


async def test_requests_go_through_the_proxy_the_environment_names(monkeypatch) -> None:
    """The endpoint is a name that does not resolve; only the proxy (the fake, which
    answers a proxy's absolute-form request) can reach it."""
    from anthropic_server import FakeAnthropicServer, reply

    from coder_ls.llm.anthropic_provider import AnthropicProvider
    from coder_ls.llm.base import ProviderRequest, TextDelta
    from coder_ls.protocol.messages import Message, TextBlock

    with FakeAnthropicServer([reply("through the proxy")]) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        provider = AnthropicProvider(
            api_key="k", base_url="http://anthropic.invalid", max_attempts=1, allow_insecure=True
        )
        request = ProviderRequest(model="claude-haiku-4-5", system="", messages=[Message("user", [TextBlock("hi")])])
        try:
            text = "".join([i.text async for i in provider.stream(request) if isinstance(i, TextDelta)])
        finally:
            await provider.aclose()
    assert text == "through the proxy"
    assert proxy.message_requests[0].via_proxy == "http://anthropic.invalid/v1/messages"


def test_plain_http_is_refused_off_this_machine_only() -> None:
    from coder_ls.llm.anthropic_http import insecure_base_url

    for ok in ("https://api.anthropic.com", "http://127.0.0.1:8080", "http://localhost/x", "http://[::1]:9"):
        assert insecure_base_url(ok) is None, ok
    for bad in ("http://gateway.corp:8080", "http://10.0.0.5", "HTTP://api.anthropic.com", "ftp://x"):
        assert insecure_base_url(bad), bad


def test_an_origin_is_scheme_host_and_port() -> None:
    from coder_ls.llm.anthropic_http import same_origin

    assert same_origin("https://a.example/v1", "https://A.example:443/v2")
    assert not same_origin("https://a.example/v1", "http://a.example/v1")  # a downgrade
    assert not same_origin("http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1")


def test_a_line_an_event_and_a_response_have_bounds() -> None:
    import pytest

    from coder_ls.llm.base import ProviderError

    reader = SseReader(max_event=100, max_total=1000)
    assert reader.feed(b"data: " + b"a" * 50 + b"\n\n") == [b"a" * 50]
    with pytest.raises(ProviderError, match="one line over"):
        for _ in range(20):  # a line that never ends, fed in small pieces
            reader.feed(b"b" * 10)
    reader = SseReader(max_event=100, max_total=1000)
    with pytest.raises(ProviderError, match="one event over"):
        reader.feed(b"data: " + b"c" * 60 + b"\ndata: " + b"c" * 60 + b"\n")  # no blank line
    reader = SseReader(max_event=100, max_total=1000)
    with pytest.raises(ProviderError, match="a response over"):
        while True:
            reader.feed(b'data: {"type":"ping"}\n\n')


def test_a_partial_line_is_kept_apart_not_searched_again() -> None:
    """Many pieces of one long line: each byte is handled once (the unfinished line is
    kept apart), and the event comes out whole at its end."""
    reader = SseReader()
    pieces = [b"data: "] + [b"x" * 7] * 10_000 + [b"\n", b"\n"]
    found = [event for piece in pieces for event in reader.feed(piece)]
    assert found == [b"x" * 70_000]


def test_the_server_says_whether_to_retry() -> None:
    body = b'{"type":"error","error":{"type":"api_error","message":"x"}}'
    assert not http_error(500, body, {"x-should-retry": "false"}).retryable
    assert http_error(400, body, {"x-should-retry": "true"}).retryable
    assert http_error(500, body, {}).retryable and not http_error(400, body, {}).retryable


def test_a_retry_after_is_honoured_when_positive_and_not_past_five_minutes() -> None:
    from coder_ls.llm.anthropic_provider import AnthropicProvider
    from coder_ls.llm.base import ProviderError

    provider = AnthropicProvider(api_key="k", base_delay=1.0, jitter=0.0)
    assert provider._delay(1, ProviderError("rate_limit", "", True, retry_after=120)) == 120  # not cut to 60
    assert provider._delay(2, ProviderError("rate_limit", "", True, retry_after=0)) == 2.0  # the backoff
    assert provider._delay(1, ProviderError("rate_limit", "", True, retry_after=900)) is None  # said, not waited
