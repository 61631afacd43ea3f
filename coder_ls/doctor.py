"""`coder-ls doctor`: what an editor's health check needs to know, without an LSP session.

Neovim's `:checkhealth coder` (editors/neovim/lua/coder/health.lua) runs
`coder-ls doctor --json --workspace ROOT --settings JSON` and reports each part: the server's
version and the contract's, the model provider the configuration picks for that workspace (the
user's, the workspace's and the editor's settings, as the server would merge them) and whether
it can be built (an API key for `anthropic`, the script for the offline `scripted`), the
sandbox backend the agent's shell would use, and the configuration's problems. Nothing here
touches the network or writes a file.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from coder_ls import PROTOCOL_VERSION, __version__


def report(root: Path, settings: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    from coder_ls.engine.config import ConfigStore
    from coder_ls.guard import sandbox
    from coder_ls.llm.base import ProviderError
    from coder_ls.llm.factory import make_provider
    from coder_ls.llm.models import provider_name

    store = ConfigStore(root, env)
    store.init_options = settings
    problems = [str(p) for p in store.reload()]
    config = store.config
    provider = provider_name(config)
    try:
        make_provider(config, env, root)
        ok, message = True, _provider_ok(provider, config, env)
    except ProviderError as exc:
        ok, message = False, str(exc)
    backend = sandbox.backend()
    return {
        "version": __version__,
        "protocolVersion": PROTOCOL_VERSION,
        "workspace": str(root),
        "provider": {"name": provider, "ok": ok, "message": message},
        "sandbox": {"backend": backend, "mode": config.sandbox.mode},
        "problems": problems,
    }


def _provider_ok(name: str, config: Any, env: dict[str, str]) -> str:
    if name == "anthropic":
        which = "ANTHROPIC_API_KEY" if (env.get("ANTHROPIC_API_KEY") or "").strip() else "ANTHROPIC_AUTH_TOKEN"
        return f"{which} is set"
    if name == "scripted":
        return f"offline, script {config.scripted_file or env.get('CODER_SCRIPTED_FILE')}"
    return "ready"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="coder-ls doctor", description=__doc__.split("\n\n")[0])
    p.add_argument("--workspace", default=".", help="the workspace whose configuration counts (default: the cwd)")
    p.add_argument("--settings", default="{}", help="the editor's settings as JSON (its initializationOptions)")
    p.add_argument("--json", action="store_true", help="one JSON object (for editors)")
    args = p.parse_args(argv)
    try:
        settings = json.loads(args.settings)
    except json.JSONDecodeError as exc:
        p.error(f"--settings is not JSON: {exc}")
    if not isinstance(settings, dict):
        p.error("--settings must be a JSON object")
    settings = {k: v for k, v in settings.items() if k not in ("capabilities", "protocolVersion")}
    out = report(Path(args.workspace).resolve(), settings, dict(os.environ))
    if args.json:
        print(json.dumps(out))
        return 0
    prov = out["provider"]
    print(f"coder-ls {out['version']} (protocol {out['protocolVersion']})")
    print(f"workspace: {out['workspace']}")
    print(f"provider: {prov['name']}: {'ok' if prov['ok'] else 'NOT READY'}: {prov['message']}")
    print(f"sandbox: {out['sandbox']['backend']} (mode {out['sandbox']['mode']})")
    for problem in out["problems"]:
        print(f"configuration: {problem}")
    return 0 if prov["ok"] and not out["problems"] else 1
