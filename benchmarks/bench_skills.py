"""The fixed prompt (system + tools, what every request starts with) with 0, 10 and 50
model-invocable skills installed, in characters and tokens (len/4, as bench `prompt`
counts). Run: `python benchmarks/bench_skills.py`."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from coder_ls.agent.runner import Agent
from coder_ls.engine.agent_api import SkillInfo
from coder_ls.protocol.config import Config


def skill(i: int) -> SkillInfo:
    return SkillInfo(
        name=f"skill-{i:02d}",
        description=f"Generate and check the project's release notes for package {i} from the git history",
        when_to_use="when the user asks for release notes or a changelog entry",
        body="(body)",
        skill_dir=None,
    )


def main() -> None:
    agent = Agent(Path(tempfile.mkdtemp()), {})
    config = Config()
    base = None
    for n in (0, 10, 50):
        skills = [skill(i) for i in range(n)]
        system = agent.system(config, skills)
        specs = agent.tools_for(skills, subagents=True)[1]  # as a turn gets them (the task tool too)
        tools = json.dumps(
            [{"name": s.name, "description": s.description, "input_schema": s.input_schema} for s in specs]
        )
        chars = len(system) + len(tools)
        base = base if base is not None else chars
        print(
            f"{n:>2} skills: system {len(system):>5} + tools {len(tools):>5} = {chars:>5} chars "
            f"(~{chars // 4} tokens, +{(chars - base) // 4} over none)"
        )


if __name__ == "__main__":
    main()
