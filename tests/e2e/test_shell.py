"""`!cmd`: a persistent, capped, time-limited shell that stays in the workspace and refuses disasters."""

from __future__ import annotations

import time

from e2e_support import wait_until_gone, write_json
from harness import init_git, lsp_session


async def test_cwd_and_exports_persist_exit_code_and_cwd_kept_after_exit(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        first = await s.execute("coder.input", {"text": "!mkdir -p src/deep && cd src/deep && export GREETING=hi"})
        assert (first["mode"], first["status"], first["exitCode"]) == ("raw", "completed", 0)

        second = await s.execute("coder.shell", {"command": 'pwd; echo "$GREETING"'})
        assert second["rawOutput"] == f"{root / 'src' / 'deep'}\nhi\n"

        failed = await s.execute("coder.input", {"text": "!cd .. && exit 3"})
        assert failed["exitCode"] == 3
        assert failed["mode"] == "raw"

        after = await s.execute("coder.input", {"text": '!pwd; echo "$GREETING"; unset GREETING'})
        assert after["exitCode"] == 0
        assert after["rawOutput"] == f"{root / 'src'}\nhi\n"

        unset = await s.execute("coder.input", {"text": '!echo "[${GREETING-gone}]"'})
        assert unset["rawOutput"] == "[gone]\n"

        finished = s.events_of("shellFinished")
        assert [e["exitCode"] for e in finished] == [0, 0, 3, 0, 0]


async def test_cwd_cannot_leave_the_workspace(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        await s.execute("coder.input", {"text": "!cd /tmp"})
        inside = await s.execute("coder.input", {"text": "!pwd"})
        assert inside["rawOutput"] == f"{root}\n"

        await s.execute("coder.input", {"text": "!mkdir -p sub && cd sub"})
        await s.execute("coder.input", {"text": "!cd ../.."})
        again = await s.execute("coder.input", {"text": "!pwd; ls"})
        assert again["rawOutput"].splitlines()[0] == str(root)
        assert "a.txt" in again["rawOutput"]


async def test_output_cap_from_initialization_options(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root, init_options={"shell": {"maxOutputBytes": 100}}) as s:
        result = await s.execute(
            "coder.input", {"text": "!head -c 5000 /dev/zero | tr '\\0' x; echo; echo tail-marker"}
        )
        assert result["exitCode"] == 0
        out = result["rawOutput"]
        assert out.count("x") == 100
        assert "truncated" in out and "4" in out  # "[output truncated: N bytes omitted]"
        assert "tail-marker" not in out
        assert s.events_of("shellFinished")[-1]["truncated"] is True
        streamed = "".join(e["chunk"] for e in s.events_of("shellOutput"))
        assert streamed.count("x") == 100

        small = await s.execute("coder.input", {"text": "!echo short"})
        assert small["rawOutput"] == "short\n"
        assert s.events_of("shellFinished")[-1]["truncated"] is False


async def test_output_cap_from_workspace_config_file(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    write_json(root / ".coder" / "config.json", {"shell": {"maxOutputBytes": 10}})
    async with lsp_session(root) as s:
        result = await s.execute("coder.input", {"text": "!seq 1 1000"})
        assert result["rawOutput"].startswith("1\n2\n3\n4\n5")
        assert "truncated" in result["rawOutput"]
        assert "1000" not in result["rawOutput"]
        assert not s.client.messages  # a valid file: no complaint


async def test_timeout_kills_and_reports_then_shell_still_works(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    marker = "sleep 30401"
    async with lsp_session(root, init_options={"shell": {"timeoutSeconds": 1}}) as s:
        await s.execute("coder.input", {"text": "!mkdir -p d && cd d"})
        started = time.monotonic()
        result = await s.execute("coder.input", {"text": f"!echo begun; {marker}; echo never"})
        elapsed = time.monotonic() - started
        assert elapsed < 6
        assert result["status"] == "failed"
        assert result["error"]["code"] == "timeout"
        assert "1s" in result["error"]["message"]
        assert "begun" in result["rawOutput"] and "never" not in result["rawOutput"]
        assert result["exitCode"] is None
        assert s.events_of("shellFinished")[-1]["timedOut"] is True
        assert await wait_until_gone(marker) == []
        ends = [v.message for values in s.client.progress_reports.values() for v in values if v.kind == "end"]
        assert ends[-1].startswith("Failed: Timed out after 1s"), ends

        after = await s.execute("coder.input", {"text": "!pwd"})
        assert after["status"] == "completed"
        assert after["rawOutput"] == f"{root / 'd'}\n"


async def test_dangerous_commands_are_refused_and_nothing_runs(tmp_path):
    root = init_git(tmp_path / "ws", {"a.txt": "a\n"})
    async with lsp_session(root) as s:
        for command in (
            "rm -rf /",
            "touch marker1; rm -rf /",
            "touch marker2 && mkfs.ext4 /dev/sda",
            ":(){ :|:& };:",
            "touch marker3; sudo dd if=/dev/zero of=/dev/sda bs=1M",
        ):
            result = await s.execute("coder.input", {"text": f"!{command}"})
            assert (result["mode"], result["status"]) == ("error", "failed"), command
            assert result["error"]["code"] == "refused", command
            assert "Refused" in result["error"]["message"]
            assert result["exitCode"] is None
        assert not list(root.glob("marker*"))
        assert not s.events_of("shellOutput")

        # Text that only mentions a dangerous command runs.
        fine = await s.execute("coder.input", {"text": "!echo 'rm -rf /' > note.txt && cat note.txt"})
        assert (fine["status"], fine["rawOutput"]) == ("completed", "rm -rf /\n")
        assert (root / "note.txt").exists()
