"""`sandbox.network` by domain in the configuration: what an entry may be, what an untrusted
workspace may do with it (add denied domains: yes; allow domains or the whole network: not
before /trust), the administrator's layer winning, and the sandbox that domain rules give
where the proxy is not wired (bubblewrap without it, Landlock always): no network at all.
Real files, the real config store and trust records."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from coder_ls.configcheck import problems_of
from coder_ls.engine.config import ConfigStore
from coder_ls.guard import sandbox
from coder_ls.protocol.config import Config, NetworkDomains, SandboxConfig


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("", "an empty entry"),
        ("   ", "an empty entry"),
        ("https://pypi.org", "has a scheme"),
        ("pypi.org/simple", "has a path"),
        ("pypi.org:443", "has a port"),
        ("py pi.org", "holds a space"),
        ("user@pypi.org", "has a user name"),
        ("*", "only allowed as a leading `*.`"),
        ("a.*.org", "only allowed as a leading `*.`"),
        ("b\u00fccher.de", "write the name as IDNA"),
        ("a..org", "is not a host name"),
    ],
)
def test_a_bad_entry_is_refused_with_a_clear_error(entry, says):
    for key in ("allowedDomains", "deniedDomains"):
        problems = problems_of("sandbox.network", {key: ["pypi.org", entry]}, "user")
        assert [p.key for p in problems] == ["sandbox.network"], problems
        assert "not a domain rule" in problems[0].message and says in problems[0].message, problems


def test_good_entries_are_kept_as_written():
    value = {"allowedDomains": ["pypi.org", "*.npmjs.org", "10.0.0.7", "::1", "[::1]", "Files.PythonHosted.org."]}
    config = msgspec.convert({"sandbox": {"network": value}}, Config)
    assert config.sandbox.network == NetworkDomains(allowed_domains=tuple(value["allowedDomains"]))
    assert problems_of("sandbox.network", value, "user") == []
    for plain in (True, False):
        assert msgspec.convert({"sandbox": {"network": plain}}, Config).sandbox.network is plain


def store(tmp_path: Path, user: dict | None, workspace: dict | None, managed: dict | None = None) -> ConfigStore:
    root = tmp_path / "ws"
    (root / ".coder").mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
        "CODER_MANAGED_DIR": str(tmp_path / "managed"),
    }
    for path, values in (
        (tmp_path / "xdg-config" / "coder" / "config.json", user),
        (root / ".coder" / "config.json", workspace),
        (tmp_path / "managed" / "config.json", managed),
    ):
        if values is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
    s = ConfigStore(root, env)
    s.reload()
    return s


USER = {"sandbox": {"network": {"allowedDomains": ["pypi.org"], "deniedDomains": ["ads.pypi.org"]}}}


def test_an_untrusted_workspace_adds_denied_domains_but_allows_none(tmp_path):
    ws = {"sandbox": {"network": {"allowedDomains": ["evil.example"], "deniedDomains": ["files.pypi.org"]}}}
    s = store(tmp_path, USER, ws)
    assert s.config.sandbox.network == NetworkDomains(
        allowed_domains=("pypi.org",), denied_domains=("ads.pypi.org", "files.pypi.org")
    )
    message = s.untrusted_message()
    assert message is not None and "evil.example" in message and "/trust" in message
    s.trust_workspace()
    s.reload()
    assert s.config.sandbox.network == NetworkDomains(
        allowed_domains=("evil.example",), denied_domains=("ads.pypi.org", "files.pypi.org")
    )


@pytest.mark.parametrize(
    "ws_network",
    [True, {"allowedDomains": ["evil.example"]}, {"allowedDomains": ["*.com"], "deniedDomains": []}],
)
def test_an_untrusted_workspace_cannot_widen_the_network(tmp_path, ws_network):
    for user in (None, {"sandbox": {"network": False}}, USER):
        s = store(tmp_path, user, {"sandbox": {"network": ws_network}})
        network = s.config.sandbox.network
        if user is USER:
            assert network == NetworkDomains(allowed_domains=("pypi.org",), denied_domains=("ads.pypi.org",))
        else:  # no network: `false`, or domain rules that allow nothing (the workspace's empty deny list)
            assert network is False or network == NetworkDomains(), (user, network)
        assert s.untrusted_message() is not None


def test_a_workspace_asking_for_domains_leaves_the_users_whole_network_as_it_was(tmp_path):
    s = store(tmp_path, {"sandbox": {"network": True}}, {"sandbox": {"network": {"allowedDomains": ["x.org"]}}})
    assert s.config.sandbox.network is True


def test_the_managed_layer_wins(tmp_path):
    managed = {"sandbox": {"network": {"allowedDomains": ["mirror.corp.example"], "deniedDomains": ["x.example"]}}}
    for user in ({"sandbox": {"network": True}}, USER):
        s = store(tmp_path, user, {"sandbox": {"network": {"deniedDomains": ["y.example"]}}}, managed)
        network = s.config.sandbox.network
        assert isinstance(network, NetworkDomains)
        assert network.allowed_domains == ("mirror.corp.example",)
        assert {"x.example", "y.example"} <= set(network.denied_domains)
    s = store(tmp_path, USER, None, {"sandbox": {"network": False}})
    assert s.config.sandbox.network is False


DOMAINS = SandboxConfig(network=NetworkDomains(allowed_domains=("localhost",)))


def test_domain_rules_without_the_proxy_are_no_network_in_bubblewrap(tmp_path):
    if sandbox.bwrap_path() is None:
        pytest.skip("bubblewrap does not work here")
    (tmp_path / "ws").mkdir()
    box = sandbox.resolve(DOMAINS, tmp_path / "ws", tmp_path / "t")
    assert box is not None and box.network is False
    assert "--unshare-net" in sandbox.wrap(box, ["true"])


def test_landlock_has_no_network_namespace_so_domain_rules_are_no_network(tmp_path, monkeypatch):
    """Landlock cannot give a sandbox its own loopback for the forwarder: domain rules there
    cut the network like `false` (a socket to the host's loopback is refused)."""
    monkeypatch.setenv("CODER_SANDBOX_BACKEND", "landlock")
    if sandbox.backend() != "landlock":
        pytest.skip("Landlock does not work here")
    (tmp_path / "ws").mkdir()
    box = sandbox.resolve(DOMAINS, tmp_path / "ws", tmp_path / "t")
    assert box is not None and box.backend == "landlock" and box.network is False
    argv = sandbox.wrap(box, [os.path.realpath(sys.executable), "-I", "-c", PROBE])
    assert "--no-network" in argv
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert "connect: PermissionError" in done.stdout, done.stdout + done.stderr
    shutil.rmtree(tmp_path / "t", ignore_errors=True)


PROBE = """
import socket
try:
    socket.create_connection(('127.0.0.1', 9), timeout=5)
    print('connect: reached')
except OSError as e:
    print('connect:', type(e).__name__)
"""
