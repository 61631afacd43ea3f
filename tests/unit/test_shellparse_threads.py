"""The shell parser is used from several threads at once (long lines are checked in a
worker thread while the event loop parses others). A tree-sitter parser shared between
threads crashed the whole process (CI: a segfault in the middle of the test run)."""

from __future__ import annotations

import threading

from coder_ls.guard.shellparse import parse


def test_parsing_in_many_threads_at_once_gives_the_same_answers() -> None:
    long_line = "echo " + "a" * (200 * 1024) + " && rm -rf build"  # parsed in chunks: the GIL is let go
    short = "git status && npm test | tee out.txt"
    expected_long = [c.program for c in parse(long_line).commands]
    expected_short = [c.program for c in parse(short).commands]
    failures: list[str] = []

    def work(i: int) -> None:
        try:
            for _ in range(15):
                line, want = (long_line, expected_long) if i % 2 else (short, expected_short)
                got = [c.program for c in parse(line).commands]
                if got != want:
                    failures.append(f"thread {i}: {got}")
        except Exception as exc:  # pragma: no cover - what the test is about
            failures.append(f"thread {i}: {exc!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures, failures[:3]
    assert expected_long == ["echo", "rm"] and expected_short == ["git", "npm", "tee"]


def test_a_line_parsed_in_chunks_is_never_read_back_through_tree_sitter(monkeypatch) -> None:
    """A long line is handed to tree-sitter in chunks, by a callback (the GIL is let go
    between them). tree-sitter then has no copy of the text, and py-tree-sitter's
    `Node.text` calls the callback again for every node, reading each chunk after it
    has freed it (tree_sitter/binding/node.c, `node_get_text`, 0.26): a crash of the
    checking thread, seen as a segfault in CI. Every word is taken from the line's own
    bytes instead, so the callback is never called once the parse is over."""
    from coder_ls.guard.shellparse import walk

    real = walk._parser()
    late: list[int] = []

    class Watched:
        def parse(self, source):
            if not callable(source):
                return real.parse(source)
            done = False

            def read(offset, point):
                if done:
                    late.append(offset)
                return source(offset, point)

            tree = real.parse(read)
            done = True
            return tree

    monkeypatch.setattr(walk, "_parser", Watched)
    line = 'cd "$(echo ' + "b" * (200 * 1024) + ')" && X=1 rm -rf build out.txt'
    parsed = parse(line)
    assert [c.program for c in parsed.commands] == ["cd", "echo", "rm"]
    assert late == []
