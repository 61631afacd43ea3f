"""The walk over tree-sitter-bash's tree: iterative (no recursion limit on `a && b && …`),
nested scripts parsed again to a bounded depth."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from coder_ls.guard.shellparse.indirect import (
    UNSET,
    loop_value,
    script_c,
)
from coder_ls.guard.shellparse.model import (
    ASSIGNMENT,
    MAX_COMMANDS,
    MAX_DEPTH,
    TAKES_POSITIONAL,
    TOOL_ENV,
    WRAPPERS,
    Command,
    ParsedLine,
    Redirect,
)
from coder_ls.guard.shellparse.nodes import (
    Background,
    conditional,
    declares_nameref,
    glob_name,
    in_subshell,
    source,
    substitutions,
    text_of,
)
from coder_ls.guard.shellparse.variables import (
    clobber,
    command_words,
    literal,
    moved,
    nested,
    output_of,
    runtime_names,
    words_of,
)
from coder_ls.guard.shellparse.words import (
    after_options,
    env_rest,
    option_value,
    split_words,
)

_CHUNK = 64 * 1024


@lru_cache(maxsize=1)
def _language() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Language(tree_sitter_bash.language())


_PARSERS = threading.local()


def _parser() -> Any:
    """This thread's parser. A tree-sitter `Parser` must not be used by two threads at
    once (long lines are checked in a worker thread while the event loop parses others;
    a shared one crashed the process), so each thread gets its own."""
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        import tree_sitter

        parser = _PARSERS.parser = tree_sitter.Parser(_language())
    return parser


def parse(
    text: str,
    *,
    home: str | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    root: str | None = None,
) -> ParsedLine:
    """The commands, redirections and unknowns of a shell line.

    `env` is the whole environment the line starts with (the persistent shell's exports):
    its variables are substituted, and a name it lacks is unset (empty; `${X:?}` stops
    the command). Without it, a variable not assigned in the line is unknown. `root` is
    what `$(git rev-parse --show-toplevel)` prints while the cwd is inside it.

    Past MAX_COMMANDS simple commands the walk stops (its cost is per command): the
    line is then unparsed, with an unknown script saying why. A long line (> 256 kB)
    with more than 4 x MAX_COMMANDS separators (`;`, newline, `&`, `|`) is not parsed at
    all, for the same reason.
    """
    if len(text) > 256 * 1024 and sum(text.count(c) for c in ";\n&|") > 4 * MAX_COMMANDS:
        # tree-sitter takes ~1 µs a byte on dense command lists: do not even start
        return ParsedLine(text, False, (), (), (), (f"the line has more than {MAX_COMMANDS} simple commands",))
    walker = _Walker(home or os.path.expanduser("~"), cwd, env, root)
    try:
        return walker.run(text, 0, "")
    except _TooMany:
        s = walker.state
        why = f"the line has more than {MAX_COMMANDS} simple commands"
        return ParsedLine(text, False, tuple(s.commands), tuple(s.redirects), tuple(s.functions), (why,))


def syntax(text: str) -> list[tuple[str, bool, str, str]]:
    """Every node of the line's syntax tree in document order, as (type, named, text, the
    parent's type): for a
    caller that accepts only a few shapes of line (the git lane: no assignment, loop or
    arithmetic that `ParsedLine` does not show). The line is not walked, nested scripts are
    not parsed; an error node is there as `ERROR`."""
    data = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data)
    out: list[tuple[str, bool, str, str]] = []
    stack: list[tuple[Any, str]] = [(tree.root_node, "")]
    while stack:
        node, parent = stack.pop()
        kind = "ERROR" if node.is_missing else node.type
        text = data[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")
        out.append((kind, node.is_named, text, parent))
        stack.extend((child, node.type) for child in reversed(node.children))
    return out


class _TooMany(Exception):
    pass


@dataclass
class _State:
    commands: list[Command] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    parsed: bool = True


class _Walker:
    def __init__(self, home: str, cwd: str | None, env: Mapping[str, str] | None, root: str | None) -> None:
        self.env: dict[str, str | None] = {"HOME": home, **(env or {})}
        self.complete = env is not None  # a name not in env is unset, not unknown
        self.root = root
        if cwd is not None:
            self.env["PWD"] = cwd
        self.state = _State()
        self.written: tuple[str | None, ...] = ()
        self.files: dict[str, str | None] = {}
        self.aliases: dict[str, str | None] = {}  # git aliases the line defines
        self.aborts = False  # an expansion of the current command stops it
        self.opaque = False  # a nameref exists: no assignment is known any more
        self.scoped = False  # the command being built runs in a shell of its own
        self.subshell = False  # this walker reads a script run by another shell (`sh -c`)

    def run(self, text: str, depth: int, origin: str) -> ParsedLine:
        self.script(text, depth, origin)
        s = self.state
        return ParsedLine(text, s.parsed, tuple(s.commands), tuple(s.redirects), tuple(s.functions), tuple(s.unknown))

    def script(self, text: str, depth: int, origin: str) -> None:
        if depth > MAX_DEPTH:
            self.state.parsed = False
            self.state.unknown.append("scripts nested too deeply")
            return
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= _CHUNK:
            tree = _parser().parse(data)
        else:  # in chunks: between them another thread (the event loop) gets the GIL
            tree = _parser().parse(lambda offset, _point: data[offset : offset + _CHUNK])
        if tree.root_node.has_error:
            self.state.parsed = False
        with source(data):
            self.walk(tree.root_node, depth, origin)

    # --- the tree ------------------------------------------------------------------------

    def walk(self, root: Any, depth: int, origin: str) -> None:
        stack: list[tuple[Any, str]] = [(root, origin)]
        while stack:
            node, where = stack.pop()
            if isinstance(node, Background):
                self.command(node.node, depth, where, [], "", (), background=True)
                stack.extend((c, where) for c in reversed(substitutions(node.node)))
                continue
            kind = node.type
            if kind == "command":
                self.command(node, depth, where, [], "", ())
                stack.extend((c, where) for c in reversed(substitutions(node)))
            elif kind == "redirected_statement":
                body = node.child_by_field_name("body")
                redirects, stdin = self.redirects(node, depth, where)
                if body is not None and body.type == "command":
                    self.remember_files(node, redirects)
                    self.command(body, depth, where, redirects, stdin, ())
                    stack.extend((c, where) for c in reversed(substitutions(body)))
                elif body is not None:
                    stack.append((body, where))
                for child in node.children:  # `cat <<EOF | sh` hides the pipe in the here-doc
                    if child.type == "heredoc_redirect":
                        self.heredoc_pipe(child, node, depth, where, stack)
                    elif child != body:
                        stack.extend((c, where) for c in reversed(substitutions(child)))
            elif kind == "pipeline":
                self.pipeline(node, depth, where, stack)
            elif kind == "function_definition":
                name = node.child_by_field_name("name")
                fname = text_of(name) if name is not None else "?"
                self.state.functions.append(fname)
                stack.extend((c, f"function {fname}") for c in reversed(node.children) if c != name)
            elif kind in ("command_substitution", "process_substitution"):
                stack.extend((c, "$(…)") for c in reversed(node.children))
            elif kind in ("heredoc_body", "string_content", "raw_string", "word", "comment", "ansi_c_string"):
                continue
            elif kind in ("for_statement", "c_style_for_statement"):
                var = node.child_by_field_name("variable")
                if var is not None:  # set by the loop as it runs: one of its words
                    values = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "value"]
                    words: list[str | None] = [None]  # `for ((…))` counts
                    if kind == "for_statement":
                        words = [w for c in values for w in words_of(self, c)]
                    self.env[text_of(var)] = loop_value(words)
                stack.extend((c, where) for c in reversed(node.children))
            elif kind == "declaration_command" and declares_nameref(node):
                clobber(
                    self,
                )  # `declare -n r=X`: a write to r writes X
                self.opaque = True
                stack.extend((c, where) for c in reversed(node.children))
            elif kind == "variable_assignment":
                self.assign(node)
                stack.extend((c, where) for c in reversed(node.children))
            elif kind == "file_redirect":
                self.state.redirects.append(self.file_redirect(node))
                stack.extend((c, where) for c in reversed(node.children))
            else:
                if kind == "ERROR" or node.is_missing:
                    self.state.parsed = False
                children = list(node.children)
                after_amp = {i - 1 for i, c in enumerate(children) if c.type == "&"}
                for i in reversed(range(len(children))):
                    child = children[i]
                    if i in after_amp and child.type == "command":
                        stack.append((Background(child), where))
                    else:
                        stack.append((child, where))

    def remember_files(self, node: Any, redirects: list[Redirect]) -> None:
        """`echo 'rm -rf /' > x.sh`: what the line writes to a file, for a later `sh x.sh`."""
        for r in redirects:
            if r.writes and r.target is not None and not r.target.isdigit():
                text = output_of(node, self)
                self.files[r.target] = text if r.op not in (">>", "&>>") else None

    def pipeline(self, node: Any, depth: int, where: str, stack: list[tuple[Any, str]]) -> None:
        parts = [c for c in node.children if c.type not in ("|", "|&")]
        previous: Any = None
        for part in parts:
            body: Any = part
            redirects: list[Redirect] = []
            stdin: str | None = ""
            if part.type == "redirected_statement":
                body = part.child_by_field_name("body")
                redirects, stdin = self.redirects(part, depth, where)
                stack.extend((c, where) for c in part.children if c != body and c.type != "file_redirect")
            if body is not None and body.type == "command":
                if previous is not None and not stdin:
                    stdin = output_of(previous, self)
                source = command_words(previous, self) if previous is not None else ()
                self.command(body, depth, where, redirects, stdin, source, in_pipeline=True)
                stack.extend((c, where) for c in reversed(substitutions(body)))
            elif body is not None:
                stack.append((body, where))
            previous = part

    def heredoc_pipe(self, heredoc: Any, statement: Any, depth: int, where: str, stack: list[tuple[Any, str]]) -> None:
        for child in heredoc.children:
            if child.type in ("pipeline", "list", "command", "redirected_statement"):
                first = child
                while first.type in ("pipeline", "list") and first.named_child_count:
                    first = first.named_children[0]
                if child.type == "pipeline" and first.type == "command":
                    fed = output_of(statement, self)
                    self.command(first, depth, where, [], fed, command_words(statement, self), in_pipeline=True)
                    rest = [c for c in child.children if c != first]
                    stack.extend((c, where) for c in reversed(rest))
                else:
                    stack.append((child, where))
            elif child.type == "heredoc_body":
                stack.extend((c, where) for c in reversed(substitutions(child)))

    def redirects(self, node: Any, depth: int, where: str, *, record: bool = True) -> tuple[list[Redirect], str | None]:
        redirects: list[Redirect] = []
        stdin: str | None = ""
        for child in node.children:
            if child.type == "file_redirect":
                redirects.append(self.file_redirect(child))
                if record:
                    self.state.redirects.append(redirects[-1])
            elif child.type == "heredoc_redirect":
                stdin = self.heredoc_text(child)
                for inner in child.children:  # `cat <<EOF > file`: the tree nests it here
                    if inner.type == "file_redirect":
                        redirects.append(self.file_redirect(inner))
                        if record:
                            self.state.redirects.append(redirects[-1])
            elif child.type == "herestring_redirect":
                value = [c for c in child.named_children]
                stdin = literal(self, value[-1]) if value else None
        return redirects, stdin

    def heredoc_text(self, node: Any) -> str | None:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if body is None:
            return ""
        quoted = start is not None and any(q in text_of(start) for q in "'\"\\")
        if not quoted and any(c.type != "heredoc_content" for c in body.named_children):
            return None  # expansions inside: not a literal
        return text_of(body)

    def file_redirect(self, node: Any) -> Redirect:
        op = next((c.type for c in node.children if not c.is_named), ">")
        dest = node.child_by_field_name("destination")
        fd = node.child_by_field_name("descriptor")
        return Redirect(op, literal(self, dest) if dest is not None else None, text_of(fd) if fd is not None else "")

    def assign(self, node: Any) -> None:
        """`X=v`: X holds v from here on, unless the assignment may not happen or not
        last (inside a subshell, a pipeline, a condition, a loop, after `&&`/`||`, or
        once a nameref exists): then X is unknown."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None and name.type == "variable_name":
            known = literal(self, value) if value is not None else ""
            self.env[text_of(name)] = None if self.opaque or conditional(node) else known

    # --- words ---------------------------------------------------------------------------

    # --- simple commands -----------------------------------------------------------------

    def command(
        self,
        node: Any,
        depth: int,
        where: str,
        redirects: list[Redirect],
        stdin: str | None,
        source: tuple[str | None, ...],
        *,
        in_pipeline: bool = False,
        background: bool = False,
    ) -> None:
        assigned: list[str] = []
        words: list[str | None] = []
        prefix: list[str | None] = []
        saved: dict[str, str | object | None] = {}
        self.aborts = False
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                held = literal(self, value) if value is not None else ""
                assigned.append(text_of(name) if name is not None else "?")
                prefix.append(None if held is None else f"{assigned[-1]}={held}")
                saved.setdefault(assigned[-1], self.env.get(assigned[-1], UNSET))
                self.assign(child)
            elif kind == "file_redirect":
                redirects = [*redirects, self.file_redirect(child)]
                self.state.redirects.append(redirects[-1])
            elif kind == "herestring_redirect":
                values = child.named_children
                stdin = literal(self, values[-1]) if values else None
            elif kind == "command_name":
                first = child.named_children[0] if child.named_child_count else None
                if first is None or glob_name(first):
                    words.append(None)  # `/bin/r?`, `r[m]`: the name a glob matches is not known
                else:
                    words.extend(words_of(self, first) or [None])
            elif node.field_name_for_child(node.children.index(child)) == "argument":
                words.extend(words_of(self, child))
        if not words:
            return
        self.written = (*prefix, *words)
        aborts, self.aborts = self.aborts, False
        self.scoped = background or in_pipeline or in_subshell(node)
        self.simple(
            words, depth, where, tuple(redirects), stdin, source, tuple(assigned), in_pipeline, background, aborts
        )
        self.scoped = False
        for name, before in saved.items():  # `X=v cmd`: X holds only for cmd
            if words and before is UNSET:
                self.env.pop(name, None)
            elif words:
                self.env[name] = before  # type: ignore[assignment]

    def simple(
        self,
        words: list[str | None],
        depth: int,
        where: str,
        redirects: tuple[Redirect, ...],
        stdin: str | None,
        source: tuple[str | None, ...],
        assigned: tuple[str, ...],
        in_pipeline: bool,
        background: bool,
        aborts: bool = False,
    ) -> None:
        wrappers: list[str] = []
        from_stdin = False
        while words and words[0] is not None:
            name = os.path.basename(words[0]) or words[0]
            if name == "script" and (runs := script_c(words)) is not False:
                words, wrappers = ["sh", "-c", runs if isinstance(runs, str) else None], [*wrappers, "script"]
                continue
            if name == "env" and (split := option_value(words, ("-S", "--split-string"))) is not None:
                rest = env_rest(words)
                words = [*split_words(split), *rest]
                wrappers.append("env")
                continue
            if name == "command" and any(w in ("-v", "-V") for w in words[1:2]):
                break
            if (
                name == "sudo"
                and any(w in ("-s", "-i", "--shell", "--login") for w in words[1:])
                and not [w for w in after_options(words, WRAPPERS["sudo"]) if w is not None]
            ):
                words, wrappers = ["sh"], [*wrappers, "sudo"]  # `sudo -s`: a root shell reading stdin
                break
            if name not in WRAPPERS:
                break
            if name == "env" and (chdir := option_value(words, ("-C", "--chdir"))) is not None:
                self.state.commands.append(Command(("cd", chdir or None), ("cd", chdir or None), origin=where))
            if name == "watch":
                script = after_options(words, WRAPPERS["watch"])
                words = ["sh", "-c", " ".join(w or "" for w in script)] if None not in script else ["sh", "-c", None]
            else:
                rest = after_options(words, WRAPPERS[name])
                if name == "env":
                    while rest and rest[0] is not None and ASSIGNMENT.match(rest[0]):
                        rest = rest[1:]
                rest = rest[TAKES_POSITIONAL.get(name, 0) :]
                if rest[:1] in (["-c"], ["--command"]) and name in ("flock", "sg"):
                    rest = ["sh", "-c", rest[1] if len(rest) > 1 else None]
                if name == "xargs":
                    from_stdin = True
                if not rest:
                    break
                words = list(rest)
            wrappers.append(name)
        written, self.written = self.written or tuple(words), ()
        if words and words[0] is not None and os.path.basename(words[0]) in ("cd", "pushd", "popd"):
            words = moved(self, words)
        cmd = Command(
            tuple(words),
            written,
            tuple(wrappers),
            redirects,
            assigned,
            where,
            stdin,
            source,
            from_stdin,
            in_pipeline,
            background,
            tuple((name, self.env.get(name)) for name in TOOL_ENV if name in self.env),
            aborts,
            self.scoped
            or self.subshell
            or where.startswith(("$(", "pipe", "here-doc", "find", "sed", "git"))
            or where.endswith("-c"),
        )
        self.state.commands.append(cmd)
        runtime_names(self, cmd)
        if len(self.state.commands) > MAX_COMMANDS:
            raise _TooMany
        nested(self, cmd, depth)
        if cmd.program == "find":  # `-exec rm {} +` runs rm
            args = list(cmd.args)
            for i, a in enumerate(args):
                if a in ("-exec", "-execdir", "-ok", "-okdir"):
                    inner = args[i + 1 :]
                    end = next((k for k, w in enumerate(inner) if w in (";", "+")), len(inner))
                    if inner[:end]:
                        self.simple(inner[:end], depth, "find -exec", (), "", (), (), False, False)

    def script_nested(self, script: str, depth: int, origin: str, *, share: bool = False) -> None:
        inner = _Walker.__new__(_Walker)
        inner.env, inner.state, inner.written, inner.files = dict(self.env), self.state, (), self.files
        inner.complete, inner.root, inner.aliases, inner.aborts = self.complete, self.root, self.aliases, False
        inner.opaque, inner.scoped, inner.subshell = self.opaque, False, self.subshell or not share
        if share:  # `eval`, `source`, an alias: the same shell, its assignments stay
            inner.env = self.env
        inner.script(script, depth + 1, origin)
        if share:
            self.complete, self.opaque = inner.complete, inner.opaque
