"""Section 20 in the policy: read-only lines never ask (but under `strict`), and with
`sandbox.autoAllow` a line the sandbox will run and can hold runs unasked; deny and ask
rules, the refused-command check and protected paths keep their answers, and what cannot
run sandboxed follows the preset, saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.agent.grants import Decision, SandboxView
from coder_ls.agent.policy import decide, domain_allowed
from coder_ls.protocol.config import Config, Rule, SandboxConfig


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    return ws.resolve()


def view(root: Path, **kw: object) -> SandboxView:
    fields: dict = {"backend": "bwrap", "mode": "workspace-write", "writable": (str(root), "/tmp"), **kw}
    return SandboxView(True, **fields)


def refuse(command: str, root: Path) -> str | None:
    return "refused: it would delete the whole file system" if "rm -rf /" in command else None


def d(command: str, root: Path, config: Config | None = None, sandbox: SandboxView | None = None) -> Decision:
    return decide(
        "bash", {"command": command}, config or Config(), root=root, check_command=refuse, sandbox=sandbox, cwd=root
    )


READERS = ["ls", "git status", "cat a | grep x", "find . -name '*.py'", "git log --oneline -3 2>/dev/null"]


@pytest.mark.parametrize("preset", ["balanced", "auto-edit", "yolo"])
@pytest.mark.parametrize("command", READERS)
def test_readers_never_ask_but_in_strict(root: Path, preset: str, command: str) -> None:
    config = Config(permissions=preset)  # type: ignore[arg-type]
    assert d(command, root, config).action == "allow"  # sandboxed or not: no sandbox said here
    assert d(command, root, Config(permissions="strict")).action == "ask"


@pytest.mark.parametrize("command", ["ls > f", "find . -fprint f", "git -c core.pager=x log", "ls $(touch p)"])
def test_a_reader_with_a_hidden_writer_is_not_a_reader(root: Path, command: str) -> None:
    assert d(command, root).action == "ask"
    off = SandboxView(False, "the sandbox is off (sandbox.mode)")
    decision = d(command, root, sandbox=off)
    assert decision.action == "ask" and decision.sandbox == "the sandbox is off (sandbox.mode)"
    assert d(command, root, sandbox=view(root)).action == "allow"  # in the sandbox, which holds it


@pytest.mark.parametrize(
    "command", ["echo x > NOTES.md", "python3 -m pytest -q", "mkdir build && touch build/x", "sed -i s/a/b/ app.py"]
)
def test_sandboxed_means_unasked(root: Path, command: str) -> None:
    decision = d(command, root, sandbox=view(root))
    assert decision == Decision("allow", "it runs in the sandbox (sandbox.autoAllow)", sandbox="sandboxed")
    assert d(command, root, Config(permissions="auto-edit"), view(root)).action == "allow"
    assert d(command, root, Config(permissions="strict"), view(root)).action == "ask"
    assert d(command, root).action == "ask"  # the caller said nothing about a sandbox


def test_auto_allow_off_or_no_sandbox_follows_the_preset(root: Path) -> None:
    off = Config(sandbox=SandboxConfig(auto_allow=False))
    assert d("touch x", root, off, view(root)) == Decision("ask", "preset balanced")
    gone = SandboxView(False, "no sandbox works on this machine")
    assert d("touch x", root, sandbox=gone).sandbox == "no sandbox works on this machine"
    assert d("ls", root, off, view(root)).action == "allow"  # readers do not depend on it


def test_rules_and_the_refused_check_keep_their_answers(root: Path) -> None:
    v = view(root)
    deny = Config(rules=[Rule(tool="bash", action="deny", command="touch")])
    assert d("touch x", root, deny, v).action == "deny"
    ask = Config(rules=[Rule(tool="bash", action="ask", command="make")])
    assert d("make build", root, ask, v) == Decision("ask", "rule for `make`")
    ask_reader = Config(rules=[Rule(tool="bash", action="ask", command="git status")])
    assert d("git status", root, ask_reader, v).action == "ask"
    assert d("rm -rf /", root, sandbox=v).action == "deny"
    deny_unseen = Config(rules=[Rule(tool="bash", action="deny", command="rm")])
    assert d("$X x", root, deny_unseen, v).action == "ask"  # the program cannot be seen: asked


def test_visible_writes_outside_or_into_protected_paths_ask(root: Path) -> None:
    v = view(root)
    outside = d("echo x > /etc/motd.d/x", root, sandbox=v)
    assert outside.action == "ask" and "outside the folders the sandbox lets it write" in outside.sandbox
    assert d("cp app.py /var/tmp/x", root, sandbox=v).action == "ask"
    assert d("echo x > /tmp/scratch", root, sandbox=v).action == "allow"  # the sandbox's own /tmp
    for command in ("echo x > .envrc", "touch .vscode/settings.json", "cp x .git/hooks/pre-commit"):
        decision = d(command, root, sandbox=v)
        assert decision.action == "ask" and "a protected path" in decision.sandbox, command
        assert "protected" in decision.reason  # no hook's allow stands in for this question
    # after a `cd` a relative target is not a place anyone can name: the sandbox holds it,
    # but a protected name is judged by its name
    assert d("cd src && echo x > out.txt", root, sandbox=v).action == "allow"
    assert d("cd src && echo x > .envrc", root, sandbox=v).action == "ask"


def test_read_only_mode_holds_no_workspace_write(root: Path) -> None:
    ro = view(root, mode="read-only", writable=("/tmp",))
    assert d("echo x > NOTES.md", root, sandbox=ro).action == "ask"
    assert d("python3 -m pytest -q", root, sandbox=ro).action == "allow"  # writes nothing visible


def test_the_network(root: Path) -> None:
    none = view(root)
    for command in ("curl https://example.com", "git push", "npm install", "pip install x", "python3 -m pip install x"):
        decision = d(command, root, sandbox=none)
        assert decision.action == "ask" and "needs the network" in decision.sandbox, command
    assert d("curl https://example.com", root, sandbox=view(root, network="all")).action == "allow"
    domains = view(
        root, network="domains", allowed_domains=("*.pypi.org", "example.com"), denied_domains=("x.pypi.org",)
    )
    assert d("curl https://example.com/a", root, sandbox=domains).action == "allow"
    assert d("curl https://files.pypi.org/a", root, sandbox=domains).action == "allow"
    refused = d("curl https://evil.example.net/a", root, sandbox=domains)
    assert refused.action == "ask" and "evil.example.net" in refused.sandbox
    assert d("curl https://x.pypi.org/a", root, sandbox=domains).action == "ask"
    assert d("npm install", root, sandbox=domains).action == "allow"  # no host named: the proxy decides


def test_domain_rules() -> None:
    assert domain_allowed("pypi.org", ["pypi.org"], [])
    assert not domain_allowed("pypi.org", ["*.pypi.org"], [])  # `*.` is the sub-domains
    assert domain_allowed("a.b.pypi.org", ["*.pypi.org"], [])
    assert not domain_allowed("evilpypi.org", ["*.pypi.org"], [])
    assert not domain_allowed("a.pypi.org", ["*.pypi.org"], ["a.pypi.org"])
    assert not domain_allowed("x.org", [], [])


def test_typed_input_is_judged_like_the_dict(root: Path) -> None:
    from coder_ls.agent.tools.bash import BashInput
    from coder_ls.agent.tools.files import WriteInput

    typed = decide("bash", BashInput(command="touch x"), Config(), root=root, check_command=refuse, sandbox=view(root))
    assert typed.action == "allow" and typed.sandbox == "sandboxed"
    protected = decide("write", WriteInput(path=".envrc", content="x"), Config(permissions="yolo"), root=root)
    assert protected.action == "ask" and "direnv" in protected.reason


def test_an_untrusted_workspace_may_turn_auto_allow_off_never_on() -> None:
    from coder_ls.guard.trust import describe_widening, split_widening

    kept, wide = split_widening({"sandbox": {"autoAllow": True, "mode": "read-only"}})
    assert kept == {"sandbox": {"mode": "read-only"}} and wide == {"sandbox": {"autoAllow": True}}
    assert "sandbox.autoAllow true" in describe_widening(wide)
    kept, wide = split_widening({"sandbox": {"autoAllow": False}})
    assert kept == {"sandbox": {"autoAllow": False}} and wide == {}


def test_outside_a_sandbox_a_git_reader_asks_since_git_runs_what_the_repository_names(root: Path) -> None:
    """A workspace is hostile input: `git status` runs the fsmonitor its `.git/config` names.
    In the sandbox that is contained and the reader runs unasked; with no sandbox it asks;
    other readers still do not."""
    off = SandboxView(False, "the sandbox is off (sandbox.mode)")
    assert d("git status", root, sandbox=view(root)).action == "allow"
    assert d("git status", root, sandbox=off).action == "ask"
    assert d("git log --oneline | head -5", root, sandbox=off).action == "ask"
    assert d("ls -la", root, sandbox=off).action == "allow"
    assert d("cat README.md | grep x", root, sandbox=off).action == "allow"
