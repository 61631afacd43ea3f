"""An agent file's `isolation` key (Claude Code's subagent front matter): `worktree` is
honoured, anything else is ignored with a warning (the agent still loads)."""

from __future__ import annotations

from pathlib import Path

from coder_ls.agent.isolated import writes
from coder_ls.commands.agentdefs import load_agents


def test_isolation_worktree_is_read_and_a_bad_value_is_a_warning(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "w.md").write_text("---\nname: w\ndescription: d\nisolation: worktree\n---\nbody\n")
    (folder / "v.md").write_text("---\nname: v\ndescription: d\nisolation: vm\n---\nbody\n")
    agents, problems = load_agents([(folder, "workspace")])
    by_name = {a.name: a for a in agents}
    assert by_name["w"].isolation == "worktree"
    assert by_name["v"].isolation is None and by_name["general"].isolation is None
    assert any("isolation 'vm' is ignored" in p.message and not p.skipped for p in problems)


def test_only_agents_that_can_write_get_a_worktree() -> None:
    assert writes(None) and writes(("read", "edit")) and writes(("bash",)) and writes(("mcp__x__y",))
    assert not writes(("read", "grep", "glob", "ls"))
