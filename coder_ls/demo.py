"""`coder-ls demo`: a real LSP client drives a real coder-ls over stdio, offline.

It shows what an editor sees: the command catalog, the persistent shell, work-done
progress, a cancel from the progress bar, /diff and /undo, and an agent turn (the
scripted provider, so no API key is needed) whose edit arrives as a WorkspaceEdit.
Every step checks what it expects; the exit code is the number of failed checks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

APP = """def add(a, b):
    return a - b


def main():
    print(add(2, 3))
"""

SCRIPT = {
    "turns": [
        {
            "text": "Let me look at app.py.",
            "toolCalls": [{"name": "read", "input": {"path": "app.py"}}],
        },
        {
            "text": "`add` subtracts. Fixing it.",
            "toolCalls": [
                {"name": "edit", "input": {"path": "app.py", "oldString": "return a - b", "newString": "return a + b"}}
            ],
        },
        {"text": "Fixed: `add` now returns `a + b`."},
    ]
}


class Demo:
    def __init__(self, root: Path, verbose: bool) -> None:
        self.root = root
        self.verbose = verbose
        self.client = LanguageClient("coder-ls-demo", "1")
        self.events: list[dict[str, Any]] = []
        self.progress: dict[Any, list[Any]] = {}
        self.failed = 0
        self.passed = 0
        self._register()

    # -- the editor side --------------------------------------------------------------------
    def _register(self) -> None:
        c = self.client

        @c.feature("coder/event")
        def on_event(ls: LanguageClient, params: Any) -> None:
            self.events.append(_plain(params))

        @c.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_create(ls: LanguageClient, params: types.WorkDoneProgressCreateParams) -> None:
            self.progress.setdefault(params.token, [])

        @c.feature(types.PROGRESS)
        def on_progress(ls: LanguageClient, params: types.ProgressParams) -> None:
            value = _plain(params.value)
            self.progress.setdefault(params.token, []).append(value)
            if self.verbose:
                print(f"      progress {value.get('kind')}: {value.get('title') or ''} {value.get('message') or ''}")

        @c.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def on_question(ls: LanguageClient, params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            titles = [a.title for a in params.actions or []]
            print(f"      the server asks: {params.message} {titles} -> Allow once")
            return types.MessageActionItem(title="Allow once")

        @c.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(ls: LanguageClient, params: types.ShowMessageParams) -> None:
            print(f"      message: {params.message}")

        @c.feature(types.WORKSPACE_APPLY_EDIT)
        def on_apply(ls: LanguageClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
            for change in params.edit.document_changes or []:
                if isinstance(change, types.TextDocumentEdit):
                    path = Path(_fs(change.text_document.uri))
                    text = path.read_text() if path.exists() else ""
                    path.write_text(_apply(text, change.edits))  # type: ignore[arg-type]
                    print(f"      applyEdit: {len(change.edits)} edit(s) to {path.name} (the editor applies them)")
            return types.ApplyWorkspaceEditResult(applied=True)

    # -- helpers ------------------------------------------------------------------------------
    def check(self, ok: bool, what: str) -> None:
        mark = "ok " if ok else "FAIL"
        print(f"  [{mark}] {what}")
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    async def run(self, command: str, arg: dict[str, Any] | None = None) -> dict[str, Any]:
        params = types.ExecuteCommandParams(command=command, arguments=[arg or {}])
        result = await self.client.workspace_execute_command_async(params)
        return _plain(result)

    # -- the story ----------------------------------------------------------------------------
    async def main(self) -> int:
        await self.client.start_io(sys.executable, "-m", "coder_ls", cwd=str(self.root))
        caps = types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=True),
            workspace=types.WorkspaceClientCapabilities(
                apply_edit=True,
                workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            ),
        )
        t0 = time.perf_counter()
        init = await self.client.initialize_async(
            types.InitializeParams(
                capabilities=caps,
                root_uri=self.root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="demo")],
                initialization_options={"provider": "scripted", "scriptedFile": ".coder/script.json"},
            )
        )
        self.client.initialized(types.InitializedParams())
        ms = (time.perf_counter() - t0) * 1000
        commands = list(init.capabilities.execute_command_provider.commands)  # type: ignore[union-attr]
        print(f"1. initialize answered in {ms:.0f} ms; {len(commands)} commands: {', '.join(commands)}")
        self.check("coder.input" in commands and "coder.undo" in commands, "the contract's command ids are listed")

        print("2. /help")
        r = await self.run("coder.input", {"text": "/help"})
        print("      " + "\n      ".join(r["reply"].splitlines()[:4]) + "\n      ...")
        self.check(r["mode"] == "command" and r["status"] == "completed", "/help is a command result")

        print("3. the session's shell keeps its cwd and exports")
        await self.run("coder.shell", {"command": "mkdir -p src && cd src && export GREETING=hello"})
        r = await self.run("coder.input", {"text": "!echo $GREETING from $(basename $PWD)"})
        print(f"      !echo ... -> {r['rawOutput'].strip()!r}")
        self.check(r["rawOutput"].strip() == "hello from src", "cwd and exported variables carried over")
        self.check(
            bool([e for e in self.events if e["type"] == "shellOutput"]), "output streamed as shellOutput events"
        )
        await self.run("coder.shell", {"command": "cd .."})

        print("4. a long command shows cancellable progress; Cancel stops it")
        task = asyncio.ensure_future(self.run("coder.shell", {"command": "sleep 30"}))
        token = await self._wait_progress_begin()
        t0 = time.perf_counter()
        self.client.protocol.notify(
            types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token=token)
        )
        r = await asyncio.wait_for(task, 10)
        ms = (time.perf_counter() - t0) * 1000
        kinds = [v.get("kind") for v in self.progress.get(token, [])]
        print(f"      progress on token {token}: {kinds}; answered {r['status']!r} {ms:.0f} ms after Cancel")
        self.check(r["status"] == "cancelled", "the request answered status: cancelled")
        self.check(kinds[:1] == ["begin"] and kinds[-1:] == ["end"], "progress began and ended")

        print("5. /diff and /undo cover what shell commands did")
        await self.run("coder.shell", {"command": "echo 'print(1)' > extra.py && sed -i 's/def main/def run/' app.py"})
        r = await self.run("coder.diff")
        print("      " + "\n      ".join(r["reply"].splitlines()[:6]))
        self.check("app.py" in r["reply"] and "extra.py" in r["reply"], "/diff shows the changed and the new file")
        r = await self.run("coder.undo")
        print("      " + r["reply"].replace("\n", "\n      "))
        restored = "def main" in (self.root / "app.py").read_text() and not (self.root / "extra.py").exists()
        self.check(restored, "/undo restored app.py and removed extra.py")

        print("6. an agent turn (scripted model, no API key): the fix arrives as a WorkspaceEdit")
        r = await self.run("coder.input", {"text": "add() returns the wrong result, fix it"})
        tools = [e["tool"] for e in self.events if e["type"] == "toolCallBegin"]
        print(f"      tools called: {tools}; reply: {r['reply']!r}")
        self.check(r["mode"] == "nl" and r["status"] == "completed", "the turn completed")
        self.check("return a + b" in (self.root / "app.py").read_text(), "app.py was fixed through applyEdit")
        r = await self.run("coder.undo")
        self.check("return a - b" in (self.root / "app.py").read_text(), "/undo reverted the agent's edit")

        print("7. sessions")
        r = await self.run("coder.sessions")
        print("      " + "\n      ".join(r["reply"].splitlines()[:3]))
        self.check(r["data"]["kind"] == "sessions" and len(r["data"]["sessions"]) >= 1, "/sessions lists this one")
        r = await self.run("coder.input", {"text": "/undoo"})
        print(f"      /undoo -> {r['error']['message']}")
        self.check(r["mode"] == "error" and "/undo" in r["error"]["message"], "a typo names the closest command")

        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()
        print(f"\n{self.passed} passed, {self.failed} failed")
        return self.failed

    async def _wait_progress_begin(self) -> Any:
        for _ in range(1000):
            for token, values in self.progress.items():
                kinds = [v.get("kind") for v in values]
                if "begin" in kinds and "end" not in kinds:
                    return token
            await asyncio.sleep(0.01)
        raise RuntimeError("no progress began")


def _fs(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    from coder_ls.agent.textedits import apply_edits
    from coder_ls.protocol.edits import TextEdit

    ours = [
        TextEdit(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character, e.new_text)
        for e in edits
    ]
    return apply_edits(text, ours)


def _plain(value: Any) -> Any:
    from coder_ls.lsp.plain import plain

    return plain(value)


def prepare(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "demo",
        "GIT_AUTHOR_EMAIL": "demo@example.invalid",
        "GIT_COMMITTER_NAME": "demo",
        "GIT_COMMITTER_EMAIL": "demo@example.invalid",
    }
    (root / "app.py").write_text(APP)
    (root / ".coder").mkdir(exist_ok=True)
    (root / ".coder" / "script.json").write_text(json.dumps(SCRIPT, indent=2))
    # the provider is the user's choice (initializationOptions, below): a workspace file
    # cannot pick it until the workspace is trusted
    (root / ".coder" / "config.json").write_text(json.dumps({"permissions": "balanced"}, indent=2))
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "add", "app.py"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "demo"], check=True, env=env)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="coder-ls demo", description=__doc__)
    p.add_argument("--workspace", help="where to make the demo workspace (default: a temp dir, removed after)")
    p.add_argument("--verbose", action="store_true", help="print every progress notification")
    args = p.parse_args(argv)
    if args.workspace:
        root = Path(args.workspace).resolve()
        if root.exists() and any(root.iterdir()):
            print(f"{root} is not empty; give a new or empty directory", file=sys.stderr)
            return 2
        keep = True
    else:
        root = Path(tempfile.mkdtemp(prefix="coder-demo-")) / "workspace"
        keep = False
    prepare(root)
    print(f"coder-ls demo: workspace {root}\n")
    try:
        return min(asyncio.run(Demo(root, args.verbose).main()), 100)
    finally:
        if not keep:
            shutil.rmtree(root.parent, ignore_errors=True)
