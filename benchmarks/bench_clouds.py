"""Bedrock and Vertex: our own path (`coder_ls/llm/platforms.py`) beside the SDK's clients.

    python benchmarks/bench_clouds.py --sdk-extras DIR [--requests 30] [--runs 5]

`DIR` holds what `anthropic[bedrock]` and `anthropic[vertex]` need and coder-ls does not
install (`pip install --target DIR boto3 botocore google-auth requests`); it is put on the
SDK's children's path only.

- `import`: a fresh interpreter importing what a first request needs (ours: the provider
  and `platforms`; the SDK's: `anthropic` with its Bedrock client and `boto3`, or its
  Vertex client and `google.auth`), less a bare interpreter's start; median of `--runs`.
- `request`: in a process of its own, `--requests` streamed requests one after another to
  the fakes of tests/fakes/cloud_fakes.py (SigV4 checked, the event stream framed; the
  token endpoint and SSE), a 24-event reply each; the median time from sending to the
  last event, and the process's CPU per request. The first request (imports, client,
  token) is in `first`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "tests" / "fakes"))

from anthropic_sse import reply  # noqa: E402
from cloud_fakes import FakeBedrock, FakeVertex  # noqa: E402

KEY, SECRET, REGION, PROJECT, REFRESH = "AKIDBENCH", "bench/secret", "us-east-1", "bench-project", "refresh-bench"

IMPORTS = {
    "ours": "import coder_ls.llm.anthropic_provider, coder_ls.llm.platforms",
    "sdk_bedrock": "import anthropic, boto3; from anthropic import AsyncAnthropicBedrock",
    "sdk_vertex": (
        "import anthropic, google.auth, google.auth.transport.requests; from anthropic import AsyncAnthropicVertex"
    ),
}

CHILD = r"""
import asyncio, json, os, resource, sys, time
kind, n = sys.argv[1], int(sys.argv[2])

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

async def ours():
    from coder_ls.llm import platforms
    from coder_ls.llm.anthropic_provider import AnthropicProvider
    from coder_ls.llm.base import ProviderRequest, Stop
    from coder_ls.protocol.messages import Message, TextBlock
    make = platforms.bedrock_platform if kind.endswith("bedrock") else platforms.vertex_platform
    platform = make(os.environ)
    provider = AnthropicProvider(base_url=platform.base_url, platform=platform, allow_insecure=True)
    request = ProviderRequest(model="claude-sonnet-5-5", system="", messages=[Message("user", [TextBlock("hi")])],
                              max_tokens=100, thinking="off")
    async def one():
        async for item in provider.stream(request):
            pass
    return one, provider.aclose

async def sdk():
    import anthropic
    if kind.endswith("bedrock"):
        client = anthropic.AsyncAnthropicBedrock(aws_access_key=os.environ["AWS_ACCESS_KEY_ID"],
            aws_secret_key=os.environ["AWS_SECRET_ACCESS_KEY"], aws_region=os.environ["AWS_REGION"],
            base_url=os.environ["ANTHROPIC_BEDROCK_BASE_URL"], max_retries=0)
        model = "anthropic.claude-sonnet-5-5-v1:0"
    else:
        client = anthropic.AsyncAnthropicVertex(region=os.environ["CLOUD_ML_REGION"],
            project_id=os.environ["ANTHROPIC_VERTEX_PROJECT_ID"], base_url=os.environ["ANTHROPIC_VERTEX_BASE_URL"],
            access_token=os.environ["BENCH_ACCESS_TOKEN"], max_retries=0)
        model = "claude-sonnet-5-5"
    async def one():
        async with client.messages.stream(model=model, max_tokens=100,
                                          messages=[{"role": "user", "content": "hi"}]) as stream:
            async for _ in stream:
                pass
    return one, client.close

async def main():
    started = time.perf_counter()
    one, close = await (sdk() if kind.startswith("sdk") else ours())
    await one()
    first = time.perf_counter() - started
    cpu0 = cpu()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        await one()
        times.append(time.perf_counter() - t)
    used = cpu() - cpu0
    await close()
    print(json.dumps({"first": first, "times": times, "cpu": used / n}))

asyncio.run(main())
"""


def import_time(code: str, env: dict[str, str], runs: int) -> float:
    def wall(source: str) -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", source], env=env, cwd=REPO, check=True)
        return time.perf_counter() - started

    bare = statistics.median(wall("pass") for _ in range(runs))
    return statistics.median(wall(code) for _ in range(runs)) - bare


def requests(kind: str, env: dict[str, str], n: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(n)], env=env, cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{kind}: {out.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return data


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdk-extras", type=Path, required=True)
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ANTHROPIC_", "GOOGLE_"))}
    ours_env = {**base, "PYTHONPATH": str(REPO)}
    sdk_env = {**base, "PYTHONPATH": f"{args.sdk_extras}{os.pathsep}{REPO}"}
    for name, code in IMPORTS.items():
        env = ours_env if name == "ours" else sdk_env
        print(f"import {name:12} {import_time(code, env, args.runs) * 1000:7.0f} ms", flush=True)
    home = Path(os.environ.get("TMPDIR", "/tmp")) / "bench-clouds-home"
    home.mkdir(exist_ok=True)
    many = [reply(["Hello", " from", " the", " cloud", "."] * 3) for _ in range(4 * (args.requests + 2))]
    with FakeBedrock(KEY, SECRET, REGION) as bedrock, FakeVertex(PROJECT, REGION, REFRESH) as vertex:
        adc = home / "adc.json"
        adc.write_text(json.dumps({"type": "authorized_user", "client_id": "c", "client_secret": "s",
                                   "refresh_token": REFRESH, "token_uri": f"{vertex.url}/token"}))  # fmt: skip
        clouds = {
            "bedrock": {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": REGION,
                        "ANTHROPIC_BEDROCK_BASE_URL": bedrock.url},
            "vertex": {"GOOGLE_APPLICATION_CREDENTIALS": str(adc), "ANTHROPIC_VERTEX_PROJECT_ID": PROJECT,
                       "CLOUD_ML_REGION": REGION, "ANTHROPIC_VERTEX_BASE_URL": f"{vertex.url}/v1",
                       "BENCH_ACCESS_TOKEN": FakeVertex.ACCESS},
        }  # fmt: skip
        for cloud, extra in clouds.items():
            for who in ("ours", "sdk"):
                (bedrock if cloud == "bedrock" else vertex).push(*many)
                env = {**(ours_env if who == "ours" else sdk_env), **extra, "HOME": str(home)}
                found = requests(f"{who}_{cloud}", env, args.requests)
                median = statistics.median(found["times"]) * 1000
                print(f"request {cloud:8} {who:5} median {median:6.2f} ms  cpu {found['cpu'] * 1000:6.2f} ms/request  "
                      f"first {found['first'] * 1000:6.0f} ms", flush=True)  # fmt: skip
        rejected = bedrock.rejections + vertex.rejections
        if rejected:
            print("refused by the fakes:", rejected[:5])
    return 0


if __name__ == "__main__":
    sys.exit(main())
