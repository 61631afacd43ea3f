"""What the walk knows of the shell's variables and cwd: the value of a word, of `$x` and
`${x…}`, what a command sets as it runs (`read`, `cd`, `unset`, `source`), and the
scripts a command runs (`sh -c`, `eval`, sed's `e`, a git alias). Functions of the walker
(`w`), kept apart from the tree walk itself."""

from __future__ import annotations

import os
import re
import shlex
from typing import Any

from coder_ls.guard.shellparse.indirect import (
    UNSET,
    expand,
    git_alias,
    is_shell,
    lookup,
    sed_runs,
    substituted,
)
from coder_ls.guard.shellparse.model import SHELLS, Command
from coder_ls.guard.shellparse.nodes import text_of
from coder_ls.guard.shellparse.words import ansi_c, dq_unescape, has_operand, shell_script, unescape

_BRACES = re.compile(r"(?<!\\)\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_SPLIT = re.compile(r"\s")
_GLOB = re.compile(r"[*?\[]")


def literal(w: Any, node: Any, *, quoted: bool = False) -> str | None:
    """The literal a word node stands for, or None if it is not one."""
    kind = node.type
    if kind in ("word", "number"):
        text = text_of(node)
        if _BRACES.search(text):
            return None  # `{/,}` expands to several words
        return unescape(text)
    if kind == "raw_string":
        return text_of(node)[1:-1]
    if kind == "ansi_c_string":
        return ansi_c(text_of(node)[2:-1])
    if kind == "string":
        parts: list[str] = []
        for child in node.named_children:
            part = literal(w, child, quoted=True) if child.type != "string_content" else dq_unescape(text_of(child))
            if part is None:
                return None
            parts.append(part)
        return "".join(parts)
    if kind == "concatenation":
        if _BRACES.search(text_of(node)) and any(text_of(c) == "{" for c in node.named_children):
            return None  # `{/,}` expands to several words
        pieces = [literal(w, c) for c in node.named_children]
        return None if any(p is None for p in pieces) else "".join(p for p in pieces if p is not None)
    if kind in ("simple_expansion", "expansion"):
        value = expansion(w, node)
        if not quoted and value is not None and ("IFS" in w.env or _SPLIT.search(value)):
            return None  # unquoted: split into words (and globbed)
        return value
    if kind == "command_substitution":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) == 1 and inner[0].type == "command":
            return substituted(list(command_words(inner[0], w)), w.env, w.root)
    return None


def expansion(w: Any, node: Any) -> str | None:
    """`$x`, `${x}`, `${x:-d}`, `${x:?}`, `${x,,}`: the value, None if not knowable."""
    names = list(node.named_children)
    if not names or names[0].type != "variable_name":
        return None
    name = text_of(names[0])
    value = lookup(w.env, name, w.complete)
    ops = [c for c in node.children if node.field_name_for_child(node.children.index(c)) == "operator"]
    if len(names) == 1 and not ops:
        return "" if value is UNSET else value  # type: ignore[return-value]
    if len(ops) != 1 or len(names) > 2:
        return None
    arg = literal(w, names[1], quoted=True) if len(names) == 2 else ""
    result, aborts = expand(text_of(ops[0]), value, arg)
    w.aborts = w.aborts or aborts
    if text_of(ops[0]) in (":=", "=") and value is UNSET and isinstance(result, str):
        w.env[name] = result
    return "" if result is UNSET else result  # type: ignore[return-value]


def words_of(w: Any, node: Any) -> list[str | None]:
    """An argument's words: an unquoted `$x` holding `rm -rf /` is three words."""
    if node.type == "simple_expansion" or node.type == "expansion":
        if "IFS" not in w.env and (value := expansion(w, node)) is not None:
            if not value.strip():
                return []  # an unquoted empty value is no word at all
            if _SPLIT.search(value):
                return list(value.split())  # a glob among them is judged as one, by its folder
    if node.type == "command_substitution" and (value := literal(w, node)) is not None:
        return list(value.split())
    return [literal(w, node)]


def runtime_names(w: Any, cmd: Command) -> None:
    """Variables a command sets as it runs (`read f`, `mapfile`, `unset`), and commands
    after which any name may hold anything (`source`, `eval`, `set`)."""
    program, args = cmd.program, [a for a in cmd.args if a is not None and not a.startswith("-")]
    if program in ("read", "mapfile", "readarray", "getopts", "wait"):
        default = {"read": "REPLY", "mapfile": "MAPFILE", "readarray": "MAPFILE"}.get(program, "OPTARG")
        for name in args or [default]:
            w.env[name] = None
        w.env["OPTARG"] = None
    elif program == "printf" and "-v" in cmd.args:
        target = cmd.args[cmd.args.index("-v") + 1 : cmd.args.index("-v") + 2]
        if target and target[0] is not None:
            w.env[target[0]] = None
        else:
            clobber(
                w,
            )
    elif program == "unset":
        for name in args:
            w.env.pop(name, None)
    elif program in ("source", ".") and not (args and args[0] in w.files and w.files[args[0]] is not None):
        clobber(
            w,
        )  # a file we cannot see may set anything
    elif program in ("eval", "declare", "typeset", "local", "let", "export", "readonly") and None in cmd.args:
        clobber(
            w,
        )


def moved(w: Any, words: list[str | None]) -> list[str | None]:
    """`cd`/`pushd`/`popd`: follow PWD and OLDPWD (`$PWD`, `cd -`, `$(pwd)` later in
    the line); `cd -` is given OLDPWD's value as its word."""
    args = [w for w in words[1:] if w is None or not w.startswith("-") or w == "-"]
    pwd, target = w.env.get("PWD"), args[0] if args else w.env.get("HOME")
    if args[:1] == ["-"]:
        target = w.env.get("OLDPWD")
        words = [words[0], target]
    new: str | None = None
    if os.path.basename(str(words[0])) != "popd" and target is not None:
        if target == "~" or target.startswith("~/"):
            home = w.env.get("HOME")
            target = None if home is None else home + target[1:]
        if target is not None and (target.startswith("/") or (pwd is not None and not w.env.get("CDPATH"))):
            new = os.path.normpath(os.path.join(pwd or "/", target))
    w.env["OLDPWD"], w.env["PWD"] = pwd, new
    return words


def clobber(w: Any) -> None:
    """After `source FILE`, `eval "$x"`, a nameref: every variable may hold anything."""
    for name in w.env:
        if name not in ("HOME", "PWD", "OLDPWD"):
            w.env[name] = None
    w.complete = False


def nested(w: Any, cmd: Command, depth: int) -> None:
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
                nested(w, Command(("eval", value), origin="alias"), depth)  # shares the env
        return
    if program in ("source", ".") or (
        is_shell(program, SHELLS) and has_operand(cmd) and shell_script(program, cmd) is False
    ):
        first = next((a for a in cmd.args if a is None or not a.startswith("-")), "")
        if first is None:
            w.state.unknown.append(f"{program} runs a script that is not a literal")
        elif first in w.files:
            script, origin = w.files[first], f"{program} {first}"
            if script is None:
                w.state.unknown.append(f"{program} runs {first}, written in this line")
                return
            w.script_nested(script, depth, origin, share=program in ("source", "."))
        return
    if program == "sed":
        for text in sed_runs(list(cmd.words)):
            if text is None:
                w.state.unknown.append("sed runs text as a command (its `e`)")
            else:
                w.script_nested(text, depth, "sed e")
        return
    if program == "git" and (
        any(w is not None and w.startswith(("GIT_CONFIG_PARAMETERS=", "GIT_CONFIG_COUNT=")) for w in cmd.written)
        or {"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} & w.env.keys()
    ):
        w.state.unknown.append("git reads configuration (aliases) from the environment")
        return
    if program == "git" and (alias := git_alias(list(cmd.words), w.aliases)) is not None:
        value, rest = alias
        if value is None:
            w.state.unknown.append("git runs an alias that is not a literal")
        elif value.startswith("!"):
            extra = " ".join(shlex.quote(w) if w is not None else "$UNKNOWN" for w in rest)
            w.script_nested(f"{value[1:]} {extra}", depth, "git alias")
        else:
            w.script_nested(f"git {value}", depth, "git alias")
        return
    if program == "trap":  # `trap 'CMD' EXIT`: CMD runs when the signal comes
        handler = [a for a in cmd.args if a != "--"]
        if handler and handler[0] not in ("-p", "-l", "-", "") and len(handler) > 1:
            script, origin = handler[0], "trap"
        else:
            return
    elif program == "eval":
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
        w.state.unknown.append(f"{program} runs a script that is not a literal")
        return
    w.script_nested(script, depth, origin, share=program == "eval")


def command_words(node: Any, walker: Any) -> tuple[str | None, ...]:
    if node is None:
        return ()
    body = node.child_by_field_name("body") if node.type == "redirected_statement" else node
    if body is None or body.type != "command":
        return (None,)
    words: list[str | None] = []
    for i, child in enumerate(body.children):
        if child.type == "command_name":
            words.append(literal(walker, child.named_children[0]) if child.named_child_count else None)
        elif body.field_name_for_child(i) == "argument":
            words.append(literal(walker, child))
    return tuple(words)


def output_of(node: Any, walker: Any) -> str | None:
    """What a command prints when that is a literal (`echo …`, `printf …`, `cat <<'EOF'`)."""
    if node is None:
        return None
    heredoc: str | None = ""
    if node.type == "redirected_statement":
        _, heredoc = walker.redirects(node, 0, "", record=False)
    words = command_words(node, walker)
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
