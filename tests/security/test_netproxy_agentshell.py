"""The network proxy wired into the agent's own shell (`AgentShell`): with domain rules the
persistent sandboxed bash reaches an allowed name through the server's proxy, a refused one
is named in the output and in `refused_domains`, nothing goes around the proxy, and the
forwarder is no job of the shell's (an idle shell is still put away)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from coder_ls.engine.agentshell import AgentShell
from coder_ls.guard import netproxy, sandbox
from coder_ls.protocol.config import NetworkDomains, SandboxConfig

pytestmark = pytest.mark.skipif(
    sandbox.bwrap_path() is None or shutil.which("curl") is None, reason="needs bubblewrap and curl"
)


async def _run(shell: AgentShell, box: sandbox.Sandbox | None, command: str) -> str:
    result = await shell.run(command, on_output=lambda _c: None, timeout=30, max_output_bytes=100_000, box=box)
    return result.output


async def test_the_agents_shell_reaches_allowed_domains_through_the_proxy_only(tmp_path: Path, host_http: int) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    shell = AgentShell(root)
    config = SandboxConfig(network=NetworkDomains(allowed_domains=("localhost",)))
    box = shell.sandbox_for(config)
    assert box is not None and box.domains is not None and not box.network
    try:
        mark = shell.network_mark()  # no shell yet: no handle yet
        assert mark is None
        out = await _run(shell, box, f"env NO_PROXY= no_proxy= curl -sS http://localhost:{host_http}/ ; echo rc=$?")
        assert "hello from the host" in out, out
        mark = shell.network_mark()
        assert mark is not None
        out = await _run(shell, box, "curl -sS -o /dev/null -w '%{http_code}' https://example.com/ ; echo rc=$?")
        assert "rc=0" not in out, out
        assert shell.refused_domains(mark) == ["example.com"], out
        assert shell.refused_domains(None) == ["example.com"]  # a first command: since the start
        # around the proxy: no variables, or straight to the host's loopback port
        out = await _run(shell, box, f"curl -sS --noproxy '*' http://127.0.0.1:{host_http}/ ; echo rc=$?")
        assert "hello from the host" not in out and "rc=0" not in out, out
        # the forwarder is part of the sandbox, not one of the shell's jobs
        assert not shell._jobs_alive()
    finally:
        await shell.close()
        await netproxy.shutdown()  # the server's one proxy: this process's, not the next test's


async def test_without_domain_rules_there_is_no_network_and_no_proxy(tmp_path: Path, host_http: int) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    shell = AgentShell(root)
    box = shell.sandbox_for(SandboxConfig())
    assert box is not None and box.domains is None
    try:
        line = f"curl -sS http://localhost:{host_http}/ ; echo rc=$?; echo proxy=${{HTTP_PROXY:-}}"
        out = await _run(shell, box, line)
        assert "hello from the host" not in out and "proxy=\n" in out + "\n", out
        assert shell.network_mark() is None
    finally:
        await shell.close()
