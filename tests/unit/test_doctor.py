"""`coder-ls doctor --json`: what `:checkhealth coder` reports (editors/neovim/lua/coder/health.lua)."""

from __future__ import annotations

import json
import subprocess
import sys

from coder_ls import PROTOCOL_VERSION, __version__


def _doctor(tmp_path, env_extra, *args):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), **env_extra}
    run = subprocess.run(
        [sys.executable, "-m", "coder_ls", "doctor", "--json", "--workspace", str(tmp_path), *args],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_no_key_is_reported_with_what_to_do(tmp_path):
    out = _doctor(tmp_path, {})
    assert (out["version"], out["protocolVersion"]) == (__version__, PROTOCOL_VERSION)
    assert out["provider"]["name"] == "anthropic" and not out["provider"]["ok"]
    assert "ANTHROPIC_API_KEY" in out["provider"]["message"]
    assert out["sandbox"]["backend"] in ("bwrap", "landlock", "none")


def test_the_editors_settings_count_and_a_key_or_a_script_makes_the_provider_ready(tmp_path):
    assert _doctor(tmp_path, {"ANTHROPIC_API_KEY": "sk-x"})["provider"] == {
        "name": "anthropic", "ok": True, "message": "ANTHROPIC_API_KEY is set"
    }  # fmt: skip
    script = tmp_path / "script.json"
    script.write_text('{"turns": [{"text": "hi"}]}')
    out = _doctor(
        tmp_path,
        {"CODER_SCRIPTED_FILE": str(script)},
        "--settings",
        '{"provider": "scripted", "protocolVersion": "1.0"}',
    )
    assert out["provider"]["ok"] and out["provider"]["name"] == "scripted", out
    assert out["problems"] == []
    bad = _doctor(tmp_path, {}, "--settings", '{"permissions": "sometimes"}')
    assert bad["problems"] and "permissions" in bad["problems"][0]
