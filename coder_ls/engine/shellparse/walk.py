"""The walk over tree-sitter-bash's tree: iterative (no recursion limit on `a && b && …`),
nested scripts parsed again to a bounded depth."""

from __future__ import annotations

import os
import re
import shlex
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from coder_ls.engine.shellparse.indirect import (
    UNSET,
    expand,
    git_alias,
    is_shell,
    lookup,
    script_c,
    sed_runs,
    substituted,
)
from coder_ls.engine.shellparse.model import (
    ASSIGNMENT,
    MAX_COMMANDS,
    MAX_DEPTH,
    SHELLS,
    TAKES_POSITIONAL,
    TOOL_ENV,
    WRAPPERS,
    Command,
    ParsedLine,
    Redirect,
)
from coder_ls.engine.shellparse.words import (
    after_options,
    ansi_c,
    dq_unescape,
    env_rest,
    has_operand,
    option_value,
    shell_script,
    split_words,
    unescape,
)

_CHUNK = 64 * 1024
_BRACES = re.compile(r"(?<!\\)\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_SPLIT = re.compile(r"\s")
_GLOB = re.compile(r"[*?\[]")
_UNQUOTED_GLOB = re.compile(r"(?<!\\)[*?\[]")


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
        self.walk(tree.root_node, depth, origin)

    # --- the tree ------------------------------------------------------------------------

    def walk(self, root: Any, depth: int, origin: str) -> None:
        stack: list[tuple[Any, str]] = [(root, origin)]
        while stack:
            node, where = stack.pop()
            if isinstance(node, _Background):
                self.command(node.node, depth, where, [], "", (), background=True)
                stack.extend((c, where) for c in reversed(_substitutions(node.node)))
                continue
            kind = node.type
            if kind == "command":
                self.command(node, depth, where, [], "", ())
                stack.extend((c, where) for c in reversed(_substitutions(node)))
            elif kind == "redirected_statement":
                body = node.child_by_field_name("body")
                redirects, stdin = self.redirects(node, depth, where)
                if body is not None and body.type == "command":
                    self.remember_files(node, redirects)
                    self.command(body, depth, where, redirects, stdin, ())
                    stack.extend((c, where) for c in reversed(_substitutions(body)))
                elif body is not None:
                    stack.append((body, where))
                for child in node.children:  # `cat <<EOF | sh` hides the pipe in the here-doc
                    if child.type == "heredoc_redirect":
                        self.heredoc_pipe(child, node, depth, where, stack)
                    elif child != body:
                        stack.extend((c, where) for c in reversed(_substitutions(child)))
            elif kind == "pipeline":
                self.pipeline(node, depth, where, stack)
            elif kind == "function_definition":
                name = node.child_by_field_name("name")
                fname = _text(name) if name is not None else "?"
                self.state.functions.append(fname)
                stack.extend((c, f"function {fname}") for c in reversed(node.children) if c != name)
            elif kind in ("command_substitution", "process_substitution"):
                stack.extend((c, "$(…)") for c in reversed(node.children))
            elif kind in ("heredoc_body", "string_content", "raw_string", "word", "comment", "ansi_c_string"):
                continue
            elif kind in ("for_statement", "c_style_for_statement"):
                var = node.child_by_field_name("variable")
                if var is not None:
                    self.env[_text(var)] = None  # set by the loop as it runs
                stack.extend((c, where) for c in reversed(node.children))
            elif kind == "declaration_command" and _declares_nameref(node):
                self.clobber()  # `declare -n r=X`: a write to r writes X
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
                        stack.append((_Background(child), where))
                    else:
                        stack.append((child, where))

    def remember_files(self, node: Any, redirects: list[Redirect]) -> None:
        """`echo 'rm -rf /' > x.sh`: what the line writes to a file, for a later `sh x.sh`."""
        for r in redirects:
            if r.writes and r.target is not None and not r.target.isdigit():
                text = _output(node, self)
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
                    stdin = _output(previous, self)
                source = _command_words(previous, self) if previous is not None else ()
                self.command(body, depth, where, redirects, stdin, source, in_pipeline=True)
                stack.extend((c, where) for c in reversed(_substitutions(body)))
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
                    fed = _output(statement, self)
                    self.command(first, depth, where, [], fed, _command_words(statement, self), in_pipeline=True)
                    rest = [c for c in child.children if c != first]
                    stack.extend((c, where) for c in reversed(rest))
                else:
                    stack.append((child, where))
            elif child.type == "heredoc_body":
                stack.extend((c, where) for c in reversed(_substitutions(child)))

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
                stdin = self.value(value[-1]) if value else None
        return redirects, stdin

    def heredoc_text(self, node: Any) -> str | None:
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if body is None:
            return ""
        quoted = start is not None and any(q in _text(start) for q in "'\"\\")
        if not quoted and any(c.type != "heredoc_content" for c in body.named_children):
            return None  # expansions inside: not a literal
        return _text(body)

    def file_redirect(self, node: Any) -> Redirect:
        op = next((c.type for c in node.children if not c.is_named), ">")
        dest = node.child_by_field_name("destination")
        fd = node.child_by_field_name("descriptor")
        return Redirect(op, self.value(dest) if dest is not None else None, _text(fd) if fd is not None else "")

    def assign(self, node: Any) -> None:
        """`X=v`: X holds v from here on, unless the assignment may not happen or not
        last (inside a subshell, a pipeline, a condition, a loop, after `&&`/`||`, or
        once a nameref exists): then X is unknown."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None and name.type == "variable_name":
            known = self.value(value) if value is not None else ""
            self.env[_text(name)] = None if self.opaque or _conditional(node) else known

    # --- words ---------------------------------------------------------------------------

    def value(self, node: Any, *, quoted: bool = False) -> str | None:
        """The literal a word node stands for, or None if it is not one."""
        kind = node.type
        if kind in ("word", "number"):
            text = _text(node)
            if _BRACES.search(text):
                return None  # `{/,}` expands to several words
            return unescape(text)
        if kind == "raw_string":
            return _text(node)[1:-1]
        if kind == "ansi_c_string":
            return ansi_c(_text(node)[2:-1])
        if kind == "string":
            parts: list[str] = []
            for child in node.named_children:
                part = self.value(child, quoted=True) if child.type != "string_content" else dq_unescape(_text(child))
                if part is None:
                    return None
                parts.append(part)
            return "".join(parts)
        if kind == "concatenation":
            if _BRACES.search(_text(node)) and any(_text(c) == "{" for c in node.named_children):
                return None  # `{/,}` expands to several words
            pieces = [self.value(c) for c in node.named_children]
            return None if any(p is None for p in pieces) else "".join(p for p in pieces if p is not None)
        if kind in ("simple_expansion", "expansion"):
            value = self.expansion(node)
            if not quoted and value is not None and ("IFS" in self.env or _SPLIT.search(value)):
                return None  # unquoted: split into words (and globbed)
            return value
        if kind == "command_substitution":
            inner = [c for c in node.named_children if c.type != "comment"]
            if len(inner) == 1 and inner[0].type == "command":
                return substituted(list(_command_words(inner[0], self)), self.env, self.root)
        return None

    def expansion(self, node: Any) -> str | None:
        """`$x`, `${x}`, `${x:-d}`, `${x:?}`, `${x,,}`: the value, None if not knowable."""
        names = list(node.named_children)
        if not names or names[0].type != "variable_name":
            return None
        name = _text(names[0])
        value = lookup(self.env, name, self.complete)
        ops = [c for c in node.children if node.field_name_for_child(node.children.index(c)) == "operator"]
        if len(names) == 1 and not ops:
            return "" if value is UNSET else value  # type: ignore[return-value]
        if len(ops) != 1 or len(names) > 2:
            return None
        arg = self.value(names[1], quoted=True) if len(names) == 2 else ""
        result, aborts = expand(_text(ops[0]), value, arg)
        self.aborts = self.aborts or aborts
        if _text(ops[0]) in (":=", "=") and value is UNSET and isinstance(result, str):
            self.env[name] = result
        return "" if result is UNSET else result  # type: ignore[return-value]

    def words_of(self, node: Any) -> list[str | None]:
        """An argument's words: an unquoted `$x` holding `rm -rf /` is three words."""
        if node.type == "simple_expansion" or node.type == "expansion":
            if "IFS" not in self.env and (value := self.expansion(node)) is not None:
                if not value.strip():
                    return []  # an unquoted empty value is no word at all
                if _SPLIT.search(value):
                    return [w for w in value.split() if not _GLOB.search(w)] or [None]
        if node.type == "command_substitution" and (value := self.value(node)) is not None:
            return list(value.split())
        return [self.value(node)]

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
                literal = self.value(value) if value is not None else ""
                assigned.append(_text(name) if name is not None else "?")
                prefix.append(None if literal is None else f"{assigned[-1]}={literal}")
                saved.setdefault(assigned[-1], self.env.get(assigned[-1], UNSET))
                self.assign(child)
            elif kind == "file_redirect":
                redirects = [*redirects, self.file_redirect(child)]
                self.state.redirects.append(redirects[-1])
            elif kind == "herestring_redirect":
                values = child.named_children
                stdin = self.value(values[-1]) if values else None
            elif kind == "command_name":
                first = child.named_children[0] if child.named_child_count else None
                if first is None or _glob_name(first):
                    words.append(None)  # `/bin/r?`, `r[m]`: the name a glob matches is not known
                else:
                    words.extend(self.words_of(first) or [None])
            elif node.field_name_for_child(node.children.index(child)) == "argument":
                words.extend(self.words_of(child))
        if not words:
            return
        self.written = (*prefix, *words)
        aborts, self.aborts = self.aborts, False
        self.scoped = background or in_pipeline or _in_subshell(node)
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
            words = self.moved(words)
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
            self.scoped or self.subshell or where.startswith(("$(", "pipe", "here-doc", "find", "sed", "git"))
            or where.endswith("-c"),
        )
        self.state.commands.append(cmd)
        self.runtime_names(cmd)
        if len(self.state.commands) > MAX_COMMANDS:
            raise _TooMany
        self.nested(cmd, depth)
        if cmd.program == "find":  # `-exec rm {} +` runs rm
            args = list(cmd.args)
            for i, a in enumerate(args):
                if a in ("-exec", "-execdir", "-ok", "-okdir"):
                    inner = args[i + 1 :]
                    end = next((k for k, w in enumerate(inner) if w in (";", "+")), len(inner))
                    if inner[:end]:
                        self.simple(inner[:end], depth, "find -exec", (), "", (), (), False, False)

    def nested(self, cmd: Command, depth: int) -> None:
        """Parse what a shell, `eval` or a here-doc runs, to a bounded depth."""
        program = cmd.program
        if program is None:
            return
        script: str | bool | None = False  # False: no script to look into
        origin = ""
        if program == "alias":  # `alias x=rm`: what the alias would run counts as a command
            for arg in cmd.args:
                if arg is None or "=" in arg:
                    value = None if arg is None else arg.partition("=")[2]
                    self.nested(Command(("eval", value), origin="alias"), depth)  # shares the env
            return
        if program in ("source", ".") or (
            is_shell(program, SHELLS) and has_operand(cmd) and shell_script(program, cmd) is False
        ):
            first = next((a for a in cmd.args if a is None or not a.startswith("-")), "")
            if first is None:
                self.state.unknown.append(f"{program} runs a script that is not a literal")
            elif first in self.files:
                script, origin = self.files[first], f"{program} {first}"
                if script is None:
                    self.state.unknown.append(f"{program} runs {first}, written in this line")
                    return
                self.script_nested(script, depth, origin, share=program in ("source", "."))
            return
        if program == "sed":
            for text in sed_runs(list(cmd.words)):
                if text is None:
                    self.state.unknown.append("sed runs text as a command (its `e`)")
                else:
                    self.script_nested(text, depth, "sed e")
            return
        if program == "git" and (
            any(w is not None and w.startswith(("GIT_CONFIG_PARAMETERS=", "GIT_CONFIG_COUNT=")) for w in cmd.written)
            or {"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} & self.env.keys()
        ):
            self.state.unknown.append("git reads configuration (aliases) from the environment")
            return
        if program == "git" and (alias := git_alias(list(cmd.words), self.aliases)) is not None:
            value, rest = alias
            if value is None:
                self.state.unknown.append("git runs an alias that is not a literal")
            elif value.startswith("!"):
                extra = " ".join(shlex.quote(w) if w is not None else "$UNKNOWN" for w in rest)
                self.script_nested(f"{value[1:]} {extra}", depth, "git alias")
            else:
                self.script_nested(f"git {value}", depth, "git alias")
            return
        if program == "eval":
            args = cmd.args
            script = None if None in args else " ".join(a for a in args if a is not None)
            origin = "eval"
        elif is_shell(program, SHELLS) or program in ("su", "runuser"):
            script, origin = shell_script(program, cmd), f"{program} -c"
            if script is False and cmd.stdin != "" and not has_operand(cmd):
                script, origin = cmd.stdin, "here-doc" if not cmd.stdin_from else "pipe"
        if script is False:
            return
        if script is None or script is True:
            self.state.unknown.append(f"{program} runs a script that is not a literal")
            return
        self.script_nested(script, depth, origin, share=program == "eval")

    def runtime_names(self, cmd: Command) -> None:
        """Variables a command sets as it runs (`read f`, `mapfile`, `unset`), and commands
        after which any name may hold anything (`source`, `eval`, `set`)."""
        program, args = cmd.program, [a for a in cmd.args if a is not None and not a.startswith("-")]
        if program in ("read", "mapfile", "readarray", "getopts", "wait"):
            default = {"read": "REPLY", "mapfile": "MAPFILE", "readarray": "MAPFILE"}.get(program, "OPTARG")
            for name in args or [default]:
                self.env[name] = None
            self.env["OPTARG"] = None
        elif program == "printf" and "-v" in cmd.args:
            target = cmd.args[cmd.args.index("-v") + 1 : cmd.args.index("-v") + 2]
            if target and target[0] is not None:
                self.env[target[0]] = None
            else:
                self.clobber()
        elif program == "unset":
            for name in args:
                self.env.pop(name, None)
        elif program in ("source", ".") and not (args and args[0] in self.files and self.files[args[0]] is not None):
            self.clobber()  # a file we cannot see may set anything
        elif program in ("eval", "declare", "typeset", "local", "let", "export", "readonly") and None in cmd.args:
            self.clobber()

    def moved(self, words: list[str | None]) -> list[str | None]:
        """`cd`/`pushd`/`popd`: follow PWD and OLDPWD (`$PWD`, `cd -`, `$(pwd)` later in
        the line); `cd -` is given OLDPWD's value as its word."""
        args = [w for w in words[1:] if w is None or not w.startswith("-") or w == "-"]
        pwd, target = self.env.get("PWD"), args[0] if args else self.env.get("HOME")
        if args[:1] == ["-"]:
            target = self.env.get("OLDPWD")
            words = [words[0], target]
        new: str | None = None
        if os.path.basename(str(words[0])) != "popd" and target is not None:
            if target == "~" or target.startswith("~/"):
                home = self.env.get("HOME")
                target = None if home is None else home + target[1:]
            if target is not None and (target.startswith("/") or (pwd is not None and not self.env.get("CDPATH"))):
                new = os.path.normpath(os.path.join(pwd or "/", target))
        self.env["OLDPWD"], self.env["PWD"] = pwd, new
        return words

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

    def clobber(self) -> None:
        """After `source FILE`, `eval "$x"`, a nameref: every variable may hold anything."""
        for name in self.env:
            if name not in ("HOME", "PWD", "OLDPWD"):
                self.env[name] = None
        self.complete = False


class _Background:
    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:
        self.node = node


_SCOPES = frozenset(
    "subshell pipeline command_substitution process_substitution if_statement elif_clause else_clause "
    "while_statement for_statement c_style_for_statement case_item function_definition do_group".split()
)


def _conditional(node: Any) -> bool:
    """Whether an assignment may not run, or not in this shell: inside a subshell, a pipe,
    a substitution, a branch, a loop, a function, or right of `&&`/`||`."""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type in _SCOPES:
            return True
        if parent.type == "list" and parent.named_child_count and parent.named_children[0] != child:
            return True
        child, parent = parent, parent.parent
    return False


def _in_subshell(node: Any) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in ("subshell", "pipeline", "command_substitution", "process_substitution"):
            return True
        parent = parent.parent
    return False


def _declares_nameref(node: Any) -> bool:
    first = node.children[0] if node.children else None
    if first is None or _text(first) not in ("declare", "typeset", "local"):
        return False
    return any(c.type == "word" and re.fullmatch(r"[-+][a-zA-Z]*n[a-zA-Z]*", _text(c)) for c in node.children)


def _glob_name(node: Any) -> bool:
    """Whether a command name holds an unquoted glob (`/bin/r?`, `r*`); `[` is `test`."""
    words = [node] if node.type == "word" else [c for c in node.named_children if c.type == "word"]
    unquoted = "".join(_text(w) for w in words)
    return unquoted not in ("[", "[[") and bool(_UNQUOTED_GLOB.search(unquoted))


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "surrogateescape"))


def _substitutions(node: Any) -> list[Any]:
    """The `$(…)`, `<(…)` and backquote nodes inside a command's words (not nested ones)."""
    found: list[Any] = []
    stack = list(node.children)
    while stack:
        n = stack.pop()
        if n.type in ("command_substitution", "process_substitution"):
            found.append(n)
        elif n.type not in ("word", "raw_string", "ansi_c_string", "number", "heredoc_body"):
            stack.extend(n.children)
    found.sort(key=lambda n: n.start_byte)
    return found


def _command_words(node: Any, walker: _Walker) -> tuple[str | None, ...]:
    if node is None:
        return ()
    body = node.child_by_field_name("body") if node.type == "redirected_statement" else node
    if body is None or body.type != "command":
        return (None,)
    words: list[str | None] = []
    for i, child in enumerate(body.children):
        if child.type == "command_name":
            words.append(walker.value(child.named_children[0]) if child.named_child_count else None)
        elif body.field_name_for_child(i) == "argument":
            words.append(walker.value(child))
    return tuple(words)


def _output(node: Any, walker: _Walker) -> str | None:
    """What a command prints when that is a literal (`echo …`, `printf …`, `cat <<'EOF'`)."""
    if node is None:
        return None
    heredoc: str | None = ""
    if node.type == "redirected_statement":
        _, heredoc = walker.redirects(node, 0, "", record=False)
    words = _command_words(node, walker)
    if not words or words[0] is None:
        return None
    name = os.path.basename(words[0])
    args = words[1:]
    if None in args:
        return None
    literal = [a for a in args if a is not None]
    if name == "echo":
        flags = [a for a in literal if re.fullmatch(r"-[neE]+", a)]
        text = " ".join(a for a in literal if a not in flags)
        if "\\" in text and any("e" in f for f in flags):
            return None  # `echo -e 'r\x6d'`: escapes we do not decode
        return text + "\n"
    if name == "printf" and literal:
        if "%" in literal[0] or "\\" in literal[0].replace("\\n", ""):
            return None  # a format or escapes (`printf '%s' …`, `printf 'r\155'`): not a literal
        return literal[0].replace("\\n", "\n") + "\n"
    if name == "cat" and not literal:
        return heredoc or None
    if name in ("true", ":"):
        return ""
    return None
