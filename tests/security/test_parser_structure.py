"""The shell parser's facts, and its answers to lines written to hide what they do."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path

import pytest

from coder_ls.guard.safety import check_command, check_command_async
from coder_ls.guard.shellparse import MAX_COMMANDS, parse


def programs(text: str) -> list[str | None]:
    return [c.program for c in parse(text, home="/home/u", cwd="/ws").commands]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("npm test $'\\'';touch PWNED", ["npm", "touch"]),
        ("command -- /bin/rm x", ["rm"]),
        ("env -i -u B A=1 sudo -u root nice -n 3 timeout -s 9 5 stdbuf -oL nohup rm x", ["rm"]),
        ("echo x | xargs -0 -n1 rm", ["echo", "rm"]),
        ("bash -c 'sh -c \"rm x\"'", ["bash", "sh", "rm"]),
        ("eval 'a; b'", ["eval", "a", "b"]),
        ("x=rm; $x y", ["rm"]),
        ("$UNSET y", [None]),
        ("f() { rm x; }; f", ["rm", "f"]),
        ("cat <<'EOF' | sh\nrm x\nEOF", ["cat", "sh", "rm"]),
        ("bash <<< 'rm x'", ["bash", "rm"]),
        ("echo $(rm x) `ls`", ["echo", "rm", "ls"]),
        ("coproc rm x", ["rm"]),
        ("find . -exec rm {} +", ["find", "rm"]),
        ("env -S 'rm -r x'", ["rm"]),
        ("time rm x", ["rm"]),
        ("if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]),
    ],
)
def test_commands_are_seen_through_quoting_wrappers_and_nesting(text, expected):
    assert programs(text) == expected


def test_redirections_and_unknowns():
    line = parse("git status > ~/.bashrc 2>&1; cat > $OUT", home="/h", cwd="/ws")
    assert [(r.op, r.target, r.writes) for r in line.redirects] == [
        (">", "~/.bashrc", True),
        (">&", "1", False),
        (">", None, True),
    ]
    assert parse("echo x | base64 -d | sh").unknown_scripts
    assert not parse("echo 'ls' | sh").unknown_scripts
    assert not parse("npm test 'unterminated").parsed
    assert parse('rm -rf "$HOME"', home="/h").commands[0].words == ("rm", "-rf", "/h")


def test_functions_and_backgrounds_are_recorded():
    line = parse(":(){ :|:& };:")
    assert line.functions == (":",)
    inner = [c for c in line.commands if c.origin == "function :"]
    assert inner and all(c.in_pipeline for c in inner)


def test_a_huge_list_of_commands_is_not_walked():
    line = parse("echo a; " * (MAX_COMMANDS + 10))
    assert not line.parsed and line.unknown_scripts


async def test_the_async_check_does_not_block_the_event_loop(tmp_path: Path):
    command = "echo " + "QUJD" * 2_500_000 + " | base64 -d > out.bin"  # 10 MB
    stamps: list[float] = []

    async def tick() -> None:
        while True:
            stamps.append(time.perf_counter())
            await asyncio.sleep(0.005)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    assert await check_command_async(command, tmp_path, cwd=tmp_path) is None
    elapsed = time.perf_counter() - start
    ticker.cancel()
    during = [t for t in stamps if t >= start]
    gaps = [b - a for a, b in itertools.pairwise(during)]
    # the loop kept running while the line was checked: no pause near the whole check
    assert len(during) >= 5 and max(gaps) < elapsed / 2, (elapsed, max(gaps), len(during))
    assert await check_command_async("rm -rf /", tmp_path, cwd=tmp_path)
    assert check_command("rm -rf ..", tmp_path, cwd=tmp_path / "sub" / "deeper") is None  # relative to cwd
    assert check_command("rm -rf ../..", tmp_path, cwd=tmp_path / "sub")
