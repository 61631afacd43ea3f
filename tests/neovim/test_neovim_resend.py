"""`:CoderResend` (contract section 22): the Neovim plugin's edit and resend, against the
real server (the server's side: tests/e2e_agent/test_e2e_resend.py)."""

from __future__ import annotations

from pathlib import Path

from test_neovim import check, nvim, run_scenario, workspace  # noqa: F401 (the fixtures)


def test_coder_resend_forks_before_the_picked_message(nvim: str, workspace: Path) -> None:  # noqa: F811
    r = run_scenario(nvim, "resend", workspace)
    check(r)
    assert [a["kind"] for a in r["asked"]] == ["coder.resend"], r["asked"]
    assert r["asked"][0]["titles"] == ["1  !echo one > one.txt", "2  !echo two > two.txt"], r["asked"]
    assert r["default"] == "!echo one > one.txt"
    assert r["fork"] and r["fork"] != r["original"]
    assert (r["one"], r["two"]) == (0, 0)  # back to before the first, as /rewind --code
    assert (workspace / "uno.txt").read_text() == "uno\n"
    assert {r["original"], r["fork"]} <= {s["id"] for s in r["sessions"]}
