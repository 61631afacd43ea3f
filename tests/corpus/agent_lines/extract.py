"""How the lines in this folder were taken (run once; kept so anyone can take them again).

    python tests/corpus/agent_lines/extract.py OPENHANDS_GIT_DIR MINI_SWE_AGENT_GIT_DIR OUT_DIR

Each argument is a git directory holding the source's commit (a clone, or the snapshot
`fetch` brings to /work/.mirror/<owner>+<name>/repo). Every shell line the agent ran is
kept, verbatim and in order; nothing is chosen by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

OPENHANDS = ("All-Hands-AI/OpenHands", "156d0686c46aafb0fa9d291da6421fb6f64dddc0")
OPENHANDS_PATH = "evaluation/benchmarks/multi_swe_bench/examples/output.jsonl"
MINI = ("SWE-agent/mini-swe-agent", "ec0e8e849fea5b1619deb1753007201000904672")
MINI_PATH = "output/deepseek_chat_dev/marshmallow-code__marshmallow-1343/marshmallow-code__marshmallow-1343.traj.json"


def show(git_dir: str, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", git_dir, "show", f"{commit}:{path}"], capture_output=True, check=True).stdout


def openhands(git_dir: str) -> list[dict[str, Any]]:
    """Every `run` action of each instance's history (OpenHands' CodeAct agent)."""
    out = []
    for raw in show(git_dir, OPENHANDS[1], OPENHANDS_PATH).decode().splitlines():
        run = json.loads(raw)
        for i, event in enumerate(run["history"]):
            if event.get("action") == "run":
                at = f"{run['instance_id']} history[{i}].args.command"
                out.append({"at": at, "instance": run["instance_id"], "line": event["args"]["command"]})
    return out


def mini_swe_agent(git_dir: str) -> list[dict[str, Any]]:
    """Every bash tool call of the trajectory (mini-swe-agent's only tool)."""
    trajectory = json.loads(show(git_dir, MINI[1], MINI_PATH))
    out = []
    for i, message in enumerate(trajectory["messages"]):
        for j, call in enumerate(message.get("tool_calls") or []):
            at = f"messages[{i}].tool_calls[{j}].function.arguments.command"
            line = json.loads(call["function"]["arguments"])["command"]
            out.append({"at": at, "instance": "marshmallow-code__marshmallow-1343", "line": line})
    return out


def main(openhands_git: str, mini_git: str, out_dir: str) -> None:
    files = {
        "openhands_multi_swe_bench_ponyc.json": {
            "source": {
                "repository": OPENHANDS[0],
                "path": OPENHANDS_PATH,
                "commit": OPENHANDS[1],
                "what": "OpenHands' CodeAct agent on three ponylang/ponyc issues of Multi-SWE-bench (the example "
                "output kept in its evaluation folder): every `run` action of each instance's history, in order",
            },
            "workspace": "/workspace/ponylang__ponyc__0.1",
            "container": "/workspace",
            "lines": openhands(openhands_git),
        },
        "mini_swe_agent_marshmallow_1343.json": {
            "source": {
                "repository": MINI[0],
                "path": MINI_PATH,
                "commit": MINI[1],
                "what": "mini-swe-agent 2.3.0 (bash only, deepseek-chat) on SWE-bench dev's "
                "marshmallow-code__marshmallow-1343: every bash tool call, in order. The commit (XieZhiliang-code, "
                "'Update DeepSeek evaluation artifacts', 2026-04-15) is in the repository's fetched object store, "
                "from a fork's pull request, not on its main branch",
            },
            "workspace": "/testbed",
            "container": "/testbed",
            "lines": mini_swe_agent(mini_git),
        },
    }
    for name, doc in files.items():
        (Path(out_dir) / name).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(name, len(doc["lines"]))


if __name__ == "__main__":
    main(*sys.argv[1:4])
