"""Fakes of Amazon Bedrock and Google Vertex AI serving Claude, on a `RawEndpoint`.

Each checks what the real service checks before it answers, and speaks its wire format:

- `FakeBedrock`: `POST /model/{id}/invoke-with-response-stream`; the AWS Signature
  Version 4 of the request is verified here, by code of its own (not the client's signer):
  key id, date and scope, the signed headers, the body's hash, the path encoded twice;
  a bad one gets Bedrock's 403 `InvalidSignatureException`. The body must carry
  `anthropic_version: "bedrock-2023-05-31"` and neither `model` nor `stream` (Bedrock's
  400 `ValidationException`), then the strict rules of the Messages API
  (anthropic_rules.py). The answer is AWS's binary event stream: each Messages event in a
  `chunk` frame, base64 in `{"bytes": ...}`, with both CRC32 checksums.
  (The SDK's own `anthropic_version`, the API's dated one, is accepted too.)
- `FakeVertex`: an OAuth token endpoint (`POST /token`, a refresh-token grant) and
  `POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{id}:streamRawPredict`
  (and `count-tokens:rawPredict`), which want that token as a bearer and
  `anthropic_version: "vertex-2023-10-16"` without `model`; the answer is server-sent
  events, as Anthropic's own.

`replies` are RESPONSE specs as for FakeAnthropicServer (anthropic_sse.reply); `models`
records the model id of each request; `rejections` what was refused and why.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import hmac
import json
import struct
import time
import urllib.parse
import zlib
from typing import Any

from anthropic_count import count_tokens
from anthropic_rules import check_request
from anthropic_sse import build_events, reply
from raw_endpoint import RawEndpoint, RawRequest, http_head, json_answer, sse_bytes

__all__ = ["FakeBedrock", "FakeVertex", "eventstream_frame"]

# The platform's own version is what its documentation names; the installed SDK (2.14)
# sends the Messages API's dated version instead, which is taken too.
SDK_API_VERSION = "2026-10-21"


def eventstream_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One frame of AWS's event stream (string headers only)."""
    raw = b""
    for name, value in headers.items():
        raw += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value)) + value.encode()
    total = 12 + len(raw) + len(payload) + 4
    prelude = struct.pack(">II", total, len(raw))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + raw + payload
    return head + struct.pack(">I", zlib.crc32(head))


class _Fake:
    def __init__(self) -> None:
        self.endpoint = RawEndpoint()
        self.replies: list[dict[str, Any]] = []
        self.models: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        self.rejections: list[str] = []

    @property
    def url(self) -> str:
        return self.endpoint.url

    def push(self, *specs: dict[str, Any]) -> None:
        self.replies.extend(specs)

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(body.get("messages", []))
        for i, spec in enumerate(self.replies):
            if spec.get("when") is None or spec["when"] in text:
                return self.replies.pop(i)
        return reply("(fake cloud: script exhausted)")

    def _refuse(self, status: int, why: str, headers: dict[str, str] | None = None) -> bytes:
        self.rejections.append(why)
        return json_answer(status, {"message": why}, headers)

    def _checked(self, request: RawRequest, version: str, refused: tuple[str, ...]) -> dict[str, Any] | bytes:
        try:
            body = json.loads(request.body)
        except ValueError:
            return self._refuse(400, "the body is not JSON")
        if body.get("anthropic_version") not in (version, SDK_API_VERSION):
            return self._refuse(400, f"anthropic_version must be {version}")
        extra = [k for k in refused if k in body]
        if extra:
            return self._refuse(400, f"extraneous key [{extra[0]}] is not permitted")
        return body


class FakeBedrock(_Fake):
    def __init__(self, key: str, secret: str, region: str, token: str | None = None, bearer: str | None = None):
        super().__init__()
        self.key, self.secret, self.region, self.token, self.bearer = key, secret, region, token, bearer
        self.endpoint.route("POST", "/model/*", self._invoke)

    def __enter__(self) -> FakeBedrock:
        self.endpoint.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.endpoint.__exit__(*exc)

    def _signature_problem(self, request: RawRequest) -> str | None:
        """Why the SigV4 signature does not hold, verified from the raw request."""
        header = request.headers.get("authorization", "")
        if self.bearer is not None:
            return None if header == f"Bearer {self.bearer}" else "not the Bedrock API key"
        if not header.startswith("AWS4-HMAC-SHA256 "):
            return "no AWS4-HMAC-SHA256 authorization"
        fields = dict(part.strip().split("=", 1) for part in header[len("AWS4-HMAC-SHA256 ") :].split(","))
        key, day, region, service, term = fields.get("Credential", "").split("/")
        amz_date = request.headers.get("x-amz-date", "")
        if key != self.key or region != self.region or service != "bedrock" or term != "aws4_request":
            return f"wrong credential scope {fields.get('Credential')}"
        when = calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))
        if not amz_date.startswith(day) or abs(when - time.time()) > 300:
            return "the date is not now"
        signed = fields["SignedHeaders"].split(";")
        if "host" not in signed or "x-amz-date" not in signed:
            return "host and x-amz-date must be signed"
        if self.token is not None and request.headers.get("x-amz-security-token") != self.token:
            return "the session token is missing"
        path, _, query = request.target.partition("?")
        canonical = "\n".join([
            "POST",
            urllib.parse.quote(path, safe="/~"),
            query,
            "".join(f"{h}:{request.headers.get(h, '').strip()}\n" for h in signed),
            ";".join(signed),
            hashlib.sha256(request.body).hexdigest(),
        ])  # fmt: skip
        scope = f"{day}/{region}/bedrock/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        k = f"AWS4{self.secret}".encode()
        for part in (day, region, "bedrock", "aws4_request"):
            k = hmac.new(k, part.encode(), hashlib.sha256).digest()
        expected = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
        return None if hmac.compare_digest(expected, fields.get("Signature", "")) else "the signature does not match"

    def _invoke(self, request: RawRequest) -> bytes:
        problem = self._signature_problem(request)
        if problem is not None:
            return self._refuse(403, problem, {"x-amzn-errortype": "InvalidSignatureException"})
        parts = request.path.split("/")
        if len(parts) != 4 or parts[3] != "invoke-with-response-stream":
            return self._refuse(404, f"no route {request.path}")
        model = urllib.parse.unquote(parts[2])
        body = self._checked(request, "bedrock-2023-05-31", ("model", "stream"))
        if isinstance(body, bytes):
            return body
        problem = check_request({**body, "model": model})
        if problem is not None:
            return self._refuse(400, problem, {"x-amzn-errortype": "ValidationException"})
        self.models.append(model)
        self.bodies.append(body)
        frames = b""
        for _, event in build_events(self._next(body), model):
            chunk = json.dumps({"bytes": base64.b64encode(json.dumps(event).encode()).decode()}).encode()
            frames += eventstream_frame(
                {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, chunk
            )
        head = {"content-type": "application/vnd.amazon.eventstream", "content-length": str(len(frames))}
        return http_head(200, head) + frames


class FakeVertex(_Fake):
    ACCESS = "ya29.fake-access-token"

    def __init__(self, project: str, region: str, refresh_token: str) -> None:
        super().__init__()
        self.project, self.region, self.refresh_token = project, region, refresh_token
        self.tokens_given = 0
        self.endpoint.route("POST", "/token", self._token)
        self.endpoint.route("POST", "/v1/projects/*", self._predict)

    def __enter__(self) -> FakeVertex:
        self.endpoint.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.endpoint.__exit__(*exc)

    def _token(self, request: RawRequest) -> bytes:
        form = dict(urllib.parse.parse_qsl(request.body.decode()))
        if form.get("grant_type") != "refresh_token" or form.get("refresh_token") != self.refresh_token:
            return self._refuse(400, "invalid_grant")
        self.tokens_given += 1
        return json_answer(200, {"access_token": self.ACCESS, "expires_in": 3599, "token_type": "Bearer"})

    def _predict(self, request: RawRequest) -> bytes:
        if request.headers.get("authorization") != f"Bearer {self.ACCESS}":
            return self._refuse(401, "Request had invalid authentication credentials.")
        prefix = f"/v1/projects/{self.project}/locations/{self.region}/publishers/anthropic/models/"
        if not request.path.startswith(prefix):
            return self._refuse(404, f"no route {request.path}")
        model, _, verb = urllib.parse.unquote(request.path[len(prefix) :]).partition(":")
        if model == "count-tokens" and verb == "rawPredict":
            body = self._checked(request, "vertex-2023-10-16", ())
            return body if isinstance(body, bytes) else json_answer(200, {"input_tokens": count_tokens(body)})
        if verb != "streamRawPredict":
            return self._refuse(404, f"no route {request.path}")
        body = self._checked(request, "vertex-2023-10-16", ("model",))
        if isinstance(body, bytes):
            return body
        problem = check_request({**body, "model": model})
        if problem is not None:
            return self._refuse(400, problem)
        self.models.append(model)
        self.bodies.append(body)
        data = sse_bytes(build_events(self._next(body), model))
        return http_head(200, {"content-type": "text/event-stream", "content-length": str(len(data))}) + data
