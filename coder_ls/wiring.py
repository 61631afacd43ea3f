"""Where the layers meet: the engine gets its agent here, and nowhere else.

`coder_ls.engine` defines the interface it needs (`engine/agent_api.py`) and never
imports `coder_ls.agent`; the agent implements it (`agent/runner.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from coder_ls.agent.runner import Agent
from coder_ls.engine.executor import Engine
from coder_ls.engine.host import Host


def build_engine(root: Path, host: Host, env: Mapping[str, str]) -> Engine:
    return Engine(root, host, env, agent=Agent(root, env))
