"""Session log: round trip, torn and corrupt lines, /clear and compaction, migrations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest

from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from coder_ls.store.faults import DiskFull
from coder_ls.store.log import (
    LOG_VERSION,
    MIGRATIONS,
    SHELL_OUTPUT_CAP,
    ClearEntry,
    CompactionEntry,
    CorruptLog,
    Entry,
    Header,
    MessageEntry,
    ModelEntry,
    SessionLog,
    ShellEntry,
    TitleEntry,
    UnsupportedLogVersion,
    list_log_ids,
    log_path,
    migrate,
    parse_log,
    read_log,
)


def user(text: str) -> MessageEntry:
    return MessageEntry(message=Message(role="user", content=[TextBlock(text=text)]), submission_id="s1")


def assistant(text: str) -> MessageEntry:
    return MessageEntry(message=Message(role="assistant", content=[TextBlock(text=text)]), submission_id="s1")


def texts(messages: list[Message]) -> list[str]:
    return [m.text() for m in messages]


def test_header_is_first_line_and_versioned(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "abc123", "/work/x", created_at=1000.5) as log:
        pass
    first = json.loads(log.path.read_text().splitlines()[0])
    assert first == {"type": "header", "version": 1, "id": "abc123", "createdAt": 1000.5, "cwd": "/work/x"}
    assert log.path == tmp_path / ".coder" / "sessions" / "abc123.jsonl"
    assert (tmp_path / ".coder" / ".gitignore").exists()
    assert list_log_ids(tmp_path) == ["abc123"]


def test_round_trip_every_entry_kind(tmp_path: Path) -> None:
    tool_use = Message(
        role="assistant",
        content=[TextBlock(text="let me look"), ToolUseBlock(id="t1", name="read", input={"path": "a.py"})],
    )
    tool_result = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="x = 1")])
    first_user = user("hello")
    entries: list[Entry] = [
        ModelEntry(model="claude-x", provider="anthropic", ts=1.0),
        TitleEntry(title="Fix the parser", ts=2.0),
        first_user,
        MessageEntry(message=tool_use, submission_id="s1", ts=3.0),
        MessageEntry(message=tool_result, submission_id="s1", ts=4.0),
        ShellEntry(command="ls", exit_code=0, output="a.py\n", submission_id="s2", ts=5.0),
        ShellEntry(command="sleep 99", exit_code=None, submission_id="s3", ts=6.0),
    ]
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.append(entries[0])
        log.extend(entries[1:])
        log.sync()
        loaded = log.read()
    assert loaded.entries == entries
    assert loaded.header == Header(version=LOG_VERSION, id="s", created_at=loaded.header.created_at, cwd="/w")
    assert loaded.model == entries[0]
    assert loaded.title == "Fix the parser"
    assert loaded.message_count == 3
    assert loaded.context == [first_user.message, tool_use, tool_result]
    assert loaded.skipped_lines == 0 and not loaded.torn_tail
    assert loaded.size == log.path.stat().st_size
    # camelCase keys on disk
    shell = json.loads(log.path.read_text().splitlines()[-2])
    assert shell["type"] == "shell" and shell["exitCode"] == 0 and shell["submissionId"] == "s2"


def test_reopen_and_append(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.append(user("one"))
    with SessionLog.open(tmp_path, "s") as log:
        log.append(assistant("two"))
    assert texts(read_log(log_path(tmp_path, "s")).context) == ["one", "two"]


def test_create_refuses_existing_and_bad_ids(tmp_path: Path) -> None:
    SessionLog.create(tmp_path, "s", "/w").close()
    with pytest.raises(FileExistsError):
        SessionLog.create(tmp_path, "s", "/w")
    for bad in ["", "../x", "a/b", ".hidden", "a..b"]:
        with pytest.raises(ValueError):
            SessionLog.create(tmp_path, bad, "/w")
    with pytest.raises(FileNotFoundError):
        SessionLog.open(tmp_path, "missing")


def test_torn_last_line_is_ignored_then_cut_on_open(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        for i in range(5):
            log.append(user(f"m{i}"))
    data = log.path.read_bytes()
    # simulate a crash in the middle of writing the last line
    os.truncate(log.path, len(data) - 7)
    loaded = read_log(log.path)
    assert texts(loaded.context) == ["m0", "m1", "m2", "m3"]
    assert loaded.torn_tail and loaded.skipped_lines == 0
    with SessionLog.open(tmp_path, "s") as log2:
        assert log2.size == loaded.size
        log2.append(user("after"))
    loaded = read_log(log.path)
    assert texts(loaded.context) == ["m0", "m1", "m2", "m3", "after"]
    assert not loaded.torn_tail and loaded.skipped_lines == 0


def test_torn_line_without_newline_only(tmp_path: Path) -> None:
    """A complete JSON object whose newline never made it is still a torn write."""
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.append(user("a"))
        log.append(user("b"))
    os.truncate(log.path, log.path.stat().st_size - 1)
    loaded = read_log(log.path)
    assert texts(loaded.context) == ["a"] and loaded.torn_tail


def test_corrupt_middle_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.append(user("a"))
    with open(log.path, "ab") as f:
        f.write(b'{"type":"message","mess\n')  # garbage
        f.write(b'{"type":"unknown-kind","ts":1}\n')  # unknown entry type
        f.write(b"\n")  # blank lines are not corruption
    with SessionLog.open(tmp_path, "s") as log:
        log.append(user("b"))
    loaded = read_log(log.path)
    assert texts(loaded.context) == ["a", "b"]
    assert loaded.skipped_lines == 2


def test_bad_header_is_reported(tmp_path: Path) -> None:
    with pytest.raises(CorruptLog):
        parse_log(b"")
    with pytest.raises(CorruptLog):
        parse_log(b'{"type":"header","vers')  # torn header
    with pytest.raises(CorruptLog):
        parse_log(b'{"type":"message"}\n')
    with pytest.raises(UnsupportedLogVersion):
        parse_log(b'{"type":"header","version":99,"id":"x","createdAt":1,"cwd":"/"}\n')


def test_clear_empties_context_but_keeps_history(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.extend([ModelEntry(model="m1"), user("old"), assistant("old reply"), ClearEntry()])
        log.extend([user("new"), assistant("new reply")])
        loaded = log.read()
    assert texts(loaded.context) == ["new", "new reply"]
    assert loaded.message_count == 4  # history is kept
    assert len(loaded.entries) == 6
    assert loaded.model is not None and loaded.model.model == "m1"  # model survives /clear


def test_clear_at_end_gives_empty_context(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.extend([user("x"), ClearEntry()])
        assert log.read().context == []


def test_compaction_summary_comes_first(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.extend([user("a"), assistant("b"), CompactionEntry(summary="We discussed a and b.")])
        log.extend([user("c"), assistant("d")])
        loaded = log.read()
    assert texts(loaded.context) == ["We discussed a and b.", "c", "d"]
    assert loaded.context[0].role == "user"
    with SessionLog.open(tmp_path, "s") as log:
        log.append(ClearEntry())  # /clear drops the summary too
        log.append(user("e"))
        assert texts(log.read().context) == ["e"]
    with SessionLog.open(tmp_path, "s") as log:  # compaction after compaction: the last wins
        log.extend([CompactionEntry(summary="S1"), user("f"), CompactionEntry(summary="S2"), user("g")])
        assert texts(log.read().context) == ["S2", "g"]


def test_model_and_title_are_the_last_ones(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.extend([TitleEntry(title="t1"), ModelEntry(model="a", provider="p"), user("hi")])
        log.extend([TitleEntry(title="t2"), ModelEntry(model="b", provider="q")])
        loaded = log.read()
    assert loaded.title == "t2"
    assert loaded.model == ModelEntry(model="b", provider="q", ts=loaded.model.ts if loaded.model else 0)


def test_display_title_falls_back_to_first_user_line(tmp_path: Path) -> None:
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.extend([assistant("ignored"), user("  Refactor the lexer\nplease, carefully")])
        loaded = log.read()
    assert loaded.title is None
    assert loaded.display_title == "Refactor the lexer"


def test_shell_output_is_capped(tmp_path: Path) -> None:
    big = "A" * SHELL_OUTPUT_CAP + "B" * 1000
    entry = ShellEntry(command="yes", exit_code=0, output=big)
    assert entry.truncated
    assert len(entry.output) < SHELL_OUTPUT_CAP + 100
    assert entry.output.startswith("A") and entry.output.endswith("B")
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.append(entry)
        assert log.read().entries == [entry]


def test_failed_write_does_not_glue_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import coder_ls.store.log as logmod

    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.append(user("ok"))
        real_write = os.write

        def half_then_fail(fd: int, data: object) -> int:
            view = memoryview(data)  # type: ignore[arg-type]
            if len(view) > 10:
                real_write(fd, view[:10])
                raise OSError(28, "No space left on device")
            return real_write(fd, view)

        monkeypatch.setattr(logmod.os, "write", half_then_fail)
        with pytest.raises(DiskFull, match="this entry was not kept; everything before it was"):
            log.append(user("this one fails"))
        monkeypatch.undo()
        log.append(user("next"))
        loaded = log.read()
    assert texts(loaded.context) == ["ok", "next"] and loaded.skipped_lines == 0


# ------------------------------------------------------------------ migrations

V0_LOG = (
    b'{"type":"header","id":"old1","created":"2025-01-02T03:04:05+00:00","workdir":"/proj"}\n'
    b'{"type":"model","name":"claude-old","ts":1735787000.0}\n'
    b'{"type":"msg","role":"user","text":"hello from v0","ts":1735787001.0}\n'
    b'{"type":"msg","role":"assistant","text":"hi","ts":1735787002.0}\n'
    b'{"type":"clear","ts":1735787003.0}\n'
    b'{"type":"msg","role":"user","text":"after clear","ts":1735787004.0}\n'
)


def test_migration_is_pure_and_chained() -> None:
    records = [json.loads(line) for line in V0_LOG.splitlines()]
    snapshot = json.dumps(records)
    out = migrate(records)
    assert json.dumps(records) == snapshot  # inputs untouched
    assert set(MIGRATIONS) == set(range(LOG_VERSION))
    assert out[0] == {"type": "header", "id": "old1", "createdAt": 1735787045.0, "cwd": "/proj", "version": 1}
    assert out[2]["type"] == "message"
    assert out[2]["message"] == {"role": "user", "content": [{"type": "text", "text": "hello from v0"}]}


def test_v0_log_reads_as_current(tmp_path: Path) -> None:
    path = log_path(tmp_path, "old1")
    path.parent.mkdir(parents=True)
    path.write_bytes(V0_LOG)
    loaded = read_log(path)
    assert loaded.header == Header(version=1, id="old1", created_at=1735787045.0, cwd="/proj")
    assert loaded.model is not None and loaded.model.model == "claude-old"
    assert loaded.message_count == 3
    assert texts(loaded.context) == ["after clear"]
    assert path.read_bytes() == V0_LOG  # reading never rewrites


def test_open_upgrades_old_log_before_appending(tmp_path: Path) -> None:
    path = log_path(tmp_path, "old1")
    path.parent.mkdir(parents=True)
    path.write_bytes(V0_LOG)
    with SessionLog.open(tmp_path, "old1") as log:
        log.append(user("new in v1"))
    assert json.loads(path.read_text().splitlines()[0])["version"] == LOG_VERSION
    loaded = read_log(path)
    assert texts(loaded.context) == ["after clear", "new in v1"]
    assert loaded.message_count == 4 and loaded.skipped_lines == 0


def test_read_10k_messages(tmp_path: Path) -> None:
    """A long session reads back whole (its speed is measured in benchmarks/, not here)."""
    block = "word " * 40
    with SessionLog.create(tmp_path, "big", "/w") as log:
        log.extend(
            MessageEntry(
                message=Message(role="user" if i % 2 == 0 else "assistant", content=[TextBlock(text=block)]),
                submission_id=f"s{i // 2}",
            )
            for i in range(10_000)
        )
    loaded = log.read()
    assert loaded.message_count == 10_000 and len(loaded.context) == 10_000
    assert loaded.context[-1].content == [TextBlock(text=block)]


def test_entries_are_plain_msgspec_json(tmp_path: Path) -> None:
    """Any msgspec-aware reader can decode a line with the public Entry union."""
    with SessionLog.create(tmp_path, "s", "/w") as log:
        log.append(ClearEntry(ts=7.0))
    line = log.path.read_bytes().splitlines()[1]
    assert msgspec.json.decode(line, type=Entry) == ClearEntry(ts=7.0)  # type: ignore[arg-type]
