"""Session index: listing, prefix resolution, search, rebuild from the logs, timings."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from coder_ls.protocol.messages import Message, TextBlock, ToolResultBlock
from coder_ls.protocol.results import SessionInfo
from coder_ls.store.index import AmbiguousPrefix, SessionIndex, SessionRow
from coder_ls.store.log import ClearEntry, Entry, MessageEntry, ModelEntry, SessionLog, TitleEntry


def msg(role: str, text: str, ts: float) -> MessageEntry:
    return MessageEntry(message=Message(role=role, content=[TextBlock(text=text)]), ts=ts)  # type: ignore[arg-type]


def make_session(
    root: Path, sid: str, created: float, texts: list[str], title: str | None = None
) -> SessionLog:
    log = SessionLog.create(root, sid, str(root), created_at=created)
    if title:
        log.append(TitleEntry(title=title, ts=created))
    for i, text in enumerate(texts):
        log.append(msg("user" if i % 2 == 0 else "assistant", text, created + i + 1))
    log.sync()
    return log


@pytest.fixture
def index(tmp_path: Path):
    idx = SessionIndex(tmp_path)
    yield idx
    idx.close()


def test_wal_mode_and_location(tmp_path: Path, index: SessionIndex) -> None:
    assert index.path == tmp_path / ".coder" / "index.sqlite"
    conn = sqlite3.connect(index.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_upsert_touch_and_list_order(index: SessionIndex) -> None:
    index.upsert_session("aaa", created_at=100.0, title="first")
    index.upsert_session("bbb", created_at=200.0, title="second", model="m")
    index.upsert_session("ccc", created_at=150.0)
    assert [r.id for r in index.list_sessions()] == ["bbb", "ccc", "aaa"]
    assert index.touch("aaa", 300.0, message_delta=2)
    assert index.touch("aaa", 250.0, message_delta=1)  # never goes backwards
    assert not index.touch("nope", 1.0)
    rows = index.list_sessions()
    assert rows[0] == SessionRow(
        id="aaa", title="first", created_at=100.0, updated_at=300.0, message_count=3, model=None
    )
    assert [r.id for r in index.list_sessions(limit=2)] == ["aaa", "bbb"]
    index.upsert_session("aaa", created_at=100.0, updated_at=50.0, title="renamed")
    assert index.list_sessions()[-1].title == "renamed"


def test_batch_commits_once_and_rolls_back(index: SessionIndex) -> None:
    with index.batch():
        index.upsert_session("a", created_at=1.0)
        with index.batch():  # nested
            index.add_message("a", "user", "hello")
    assert index.get("a") is not None
    with pytest.raises(RuntimeError), index.batch():
        index.upsert_session("b", created_at=1.0)
        raise RuntimeError("boom")
    assert index.get("b") is None


def test_resolve_prefix(index: SessionIndex) -> None:
    for sid, t in [("4f2a9c", 1.0), ("4f2b00", 2.0), ("9e1d77", 3.0), ("4f2a9c-2", 4.0)]:
        index.upsert_session(sid, created_at=t)
    row = index.resolve("9e")
    assert isinstance(row, SessionRow) and row.id == "9e1d77"
    amb = index.resolve("4f2")
    assert isinstance(amb, AmbiguousPrefix)
    assert [c.id for c in amb.candidates] == ["4f2a9c-2", "4f2b00", "4f2a9c"]  # most recent first
    exact = index.resolve("4f2a9c")  # an exact id wins although it prefixes another one
    assert isinstance(exact, SessionRow) and exact.id == "4f2a9c"
    assert index.resolve("4f2a9c-") == index.get("4f2a9c-2")
    assert index.resolve("zz") is None
    assert index.resolve("") is None
    assert index.resolve("%") is None and index.resolve("_") is None  # no wildcard leaks


def test_search(index: SessionIndex) -> None:
    index.upsert_session("s1", created_at=1.0, title="one")
    index.upsert_session("s2", created_at=2.0, title="two")
    index.add_message("s1", "user", "How do I parse TOML in Python?")
    index.add_message("s1", "assistant", "Use tomllib.")
    assert index.add_message("s2", "user", "the toml file is 100% broken") == 0
    hits = index.search("toml", 10)
    assert [(h.session_id, h.seq) for h in hits] == [("s2", 0), ("s1", 0), ("s1", 1)]
    assert hits[0].title == "two" and "100% broken" in hits[0].snippet
    assert [h.session_id for h in index.search("100%", 10)] == ["s2"]
    assert index.search("0_", 10) == []  # `_` is literal
    assert index.search("   ", 10) == []
    assert len(index.search("toml", 1)) == 1


def test_record_one_submission(tmp_path: Path, index: SessionIndex) -> None:
    log = SessionLog.create(tmp_path, "s", str(tmp_path), created_at=10.0)
    index.upsert_session("s", created_at=10.0, log_size=log.size)
    entries: list[Entry] = [
        ModelEntry(model="claude-x", ts=11.0),
        msg("user", "Rename foo to bar\nin all files", 12.0),
        MessageEntry(
            message=Message(role="user", content=[ToolResultBlock(tool_use_id="t", content="ok")]), ts=13.0
        ),
        msg("assistant", "Done.", 14.0),
    ]
    log.extend(entries)
    log.sync()
    index.record("s", entries, log_size=log.size)
    row = index.get("s")
    assert row == SessionRow(
        id="s", title="Rename foo to bar", created_at=10.0, updated_at=14.0, message_count=3, model="claude-x"
    )
    assert [h.seq for h in index.search("rename", 5)] == [0]
    # the index now matches the log: nothing to refresh
    assert index.refresh_from_logs().indexed == 0
    # and an incremental index equals a rebuilt one
    before = (index.list_sessions(), index.search("o", 50))
    index.rebuild_from_logs()
    assert (index.list_sessions(), index.search("o", 50)) == before
    log.close()


def test_rebuild_from_logs(tmp_path: Path) -> None:
    make_session(tmp_path, "alpha1", 1000.0, ["hello", "hi there"], title="Alpha").close()
    make_session(tmp_path, "beta22", 2000.0, ["search me please", "ok"]).close()
    log = make_session(tmp_path, "gamma3", 500.0, ["x"])
    log.append(ClearEntry(ts=9000.0))
    log.close()
    (tmp_path / ".coder" / "sessions" / "broken.jsonl").write_bytes(b"not json\n")
    # the index did not exist: opening it builds it from the logs
    with SessionIndex(tmp_path) as index:
        rows = index.list_sessions()
        assert [r.id for r in rows] == ["gamma3", "beta22", "alpha1"]
        assert rows[0].updated_at == 9000.0 and rows[0].message_count == 1
        assert rows[2].title == "Alpha" and rows[1].title == "search me please"
        assert [h.session_id for h in index.search("search me", 5)] == ["beta22"]
        report = index.rebuild_from_logs()
        assert report.indexed == 3 and report.unreadable == ["broken"] and report.removed == 0


def test_refresh_after_kill_between_log_and_index(tmp_path: Path) -> None:
    """The log got the entries but the index update never happened (kill -9 in between)."""
    log = make_session(tmp_path, "s1", 1000.0, ["first"])
    index = SessionIndex(tmp_path)
    assert index.get("s1") is not None and index.get("s1").message_count == 1  # type: ignore[union-attr]
    log.append(msg("assistant", "appended but never indexed", 5000.0))
    log.sync()
    make_session(tmp_path, "s2", 3000.0, ["a brand new session"]).close()  # never indexed either
    index.upsert_session("ghost", created_at=1.0)  # its log is gone
    report = index.refresh_from_logs()
    assert report.indexed == 2 and report.removed == 1
    assert [r.id for r in index.list_sessions()] == ["s1", "s2"]
    assert index.get("s1").message_count == 2  # type: ignore[union-attr]
    assert [h.session_id for h in index.search("never indexed", 5)] == ["s1"]
    assert index.refresh_from_logs().indexed == 0  # up to date now
    index.close()
    log.close()


def test_missing_or_corrupt_index_is_rebuilt(tmp_path: Path) -> None:
    make_session(tmp_path, "s1", 1.0, ["hello"]).close()
    SessionIndex(tmp_path).close()
    path = tmp_path / ".coder" / "index.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    with SessionIndex(tmp_path) as index:
        assert [r.id for r in index.list_sessions()] == ["s1"]


def test_older_schema_is_reset(tmp_path: Path) -> None:
    make_session(tmp_path, "s1", 1.0, ["hello"]).close()
    (tmp_path / ".coder").mkdir(exist_ok=True)
    conn = sqlite3.connect(tmp_path / ".coder" / "index.sqlite")
    conn.execute("CREATE TABLE sessions (id TEXT)")
    conn.commit()
    conn.close()
    with SessionIndex(tmp_path) as index:
        assert [r.id for r in index.list_sessions()] == ["s1"]


def test_to_info_in_timezone() -> None:
    row = SessionRow(
        id="abc", title="t", created_at=0.0, updated_at=1795316580.0, message_count=4, model=None
    )
    info = row.to_info("Asia/Shanghai", current=True)
    assert info == SessionInfo(
        id="abc",
        title="t",
        updated_at="2026-11-22T11:03:00+08:00",
        updated="2026-11-22 11:03 (Asia/Shanghai)",
        message_count=4,
        current=True,
    )


def test_list_1000_sessions_is_fast(index: SessionIndex) -> None:
    with index.batch():
        for i in range(1000):
            sid = f"{i:08x}-session"
            index.upsert_session(
                sid, created_at=float(i), title=f"Session number {i}", message_count=i, model="claude-x"
            )
            index.add_message(sid, "user", f"message {i}")
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        rows = index.list_sessions(limit=1000)
        best = min(best, time.perf_counter() - start)
    assert len(rows) == 1000 and rows[0].id == f"{999:08x}-session"
    assert best < 0.03, f"listing 1,000 sessions took {best * 1000:.2f} ms"
