"""A real LSP client (pytest-lsp's) driving a real `coder-ls` over stdio.

async with lsp_session(workspace) as s:
    result = await s.execute("coder.shell", {"command": "echo hi"})
    assert s.events_of("shellOutput")
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from pytest_lsp.client import make_test_lsp_client

SERVER = [sys.executable, "-m", "coder_ls"]


def full_caps(
    *, progress: bool = True, document_changes: bool = True, apply_edit: bool = True, show_document: bool = True
) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(
            work_done_progress=progress, show_document=types.ShowDocumentClientCapabilities(support=show_document)
        ),
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=apply_edit,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=document_changes,
                resource_operations=[types.ResourceOperationKind.Create] if document_changes else None,
            ),
        ),
    )


def init_git(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    for name, text in (files or {}).items():
        p = path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    if files:
        subprocess.run(["git", "-C", str(path), "add", "-A"], check=True, env=env)
        subprocess.run(["git", "-C", str(path), "commit", "-qm", "init"], check=True, env=env)
    return path


class Session:
    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.events: list[dict[str, Any]] = []
        self.init_result: types.InitializeResult | None = None  # the server's answer to `initialize`
        self.edits: list[types.ApplyWorkspaceEditParams] = []
        self.questions: list[types.ShowMessageRequestParams] = []
        # How the "user" answers: a function of the request, may be async (to wait)
        self.answer_question: Callable[[types.ShowMessageRequestParams], Any] = lambda p: None
        self.answer_edit: Callable[[types.ApplyWorkspaceEditParams], types.ApplyWorkspaceEditResult] = lambda p: (
            types.ApplyWorkspaceEditResult(applied=True)
        )
        self.event_arrived = asyncio.Event()
        self.question_arrived = asyncio.Event()
        # `coder/askUser` (a client that declares askUser): what the "user" answers, may be async
        self.asked: list[dict[str, Any]] = []
        self.answer_ask: Callable[[dict[str, Any]], Any] = lambda p: None

    # -- requests ---------------------------------------------------------------------------
    async def execute(self, command: str, argument: Any = None, *, token: Any = None, raw_args: Any = None) -> Any:
        args = raw_args if raw_args is not None else ([] if argument is None else [argument])
        params = types.ExecuteCommandParams(command=command, arguments=args, work_done_token=token)
        return await self.client.workspace_execute_command_async(params)

    def start(
        self, command: str, argument: Any = None, *, msg_id: str | None = None, token: Any = None
    ) -> tuple[str, asyncio.Future[Any]]:
        """Send executeCommand without waiting: (request id, future of the result)."""
        msg_id = msg_id or uuid.uuid4().hex
        params = types.ExecuteCommandParams(
            command=command, arguments=[] if argument is None else [argument], work_done_token=token
        )
        fut = self.client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
        return msg_id, asyncio.wrap_future(fut)

    def cancel_request(self, msg_id: str) -> None:
        self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    def cancel_progress(self, token: Any) -> None:
        self.client.protocol.notify(
            types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token=token)
        )

    def open(self, rel: str, text: str, version: int = 1) -> str:
        uri = (self.root / rel).as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="plaintext", version=version, text=text)
            )
        )
        return uri

    # -- what came back ---------------------------------------------------------------------
    def events_of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
        async def loop() -> Any:
            while True:
                value = predicate()
                if value:
                    return value
                await asyncio.sleep(0.01)

        return await asyncio.wait_for(loop(), timeout)

    async def wait_event(self, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        found = await self.wait_for(lambda: self.events_of(kind), timeout)
        return found[-1]

    def progress_tokens(self) -> list[Any]:
        return list(self.client.progress_reports)

    def progress_of(self, token: Any) -> list[Any]:
        return list(self.client.progress_reports.get(token, []))


def _register(client: LanguageClient, holder: dict[str, Session]) -> None:
    @client.feature("coder/event")
    def on_event(ls: LanguageClient, params: Any) -> None:
        s = holder["s"]
        s.events.append(_plain(params))
        s.event_arrived.set()

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_question(ls: LanguageClient, params: types.ShowMessageRequestParams) -> Any:
        s = holder["s"]
        s.questions.append(params)
        s.question_arrived.set()
        answer = s.answer_question(params)
        if asyncio.iscoroutine(answer):
            answer = await answer
        return None if answer is None else types.MessageActionItem(title=answer)

    @client.feature("coder/askUser")
    async def on_ask(ls: LanguageClient, params: Any) -> Any:
        s = holder["s"]
        s.asked.append(_plain(params))
        s.question_arrived.set()
        answer = s.answer_ask(_plain(params))
        if asyncio.iscoroutine(answer):
            answer = await answer
        return answer

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def on_apply(ls: LanguageClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        s = holder["s"]
        s.edits.append(params)
        answer = s.answer_edit(params)
        if asyncio.iscoroutine(answer):  # a user taking their time (a `$/cancelRequest` cancels it)
            answer = await answer
        return answer


def _plain(value: Any) -> Any:
    """pygls hands notifications over as namedtuple-ish objects: back to plain JSON values."""
    if isinstance(value, list | tuple) and hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def trust_workspace_config(root: Path) -> None:
    """What `/trust` records: the user trusts the widening settings of `root`'s
    `.coder/config.json` as the file holds them now (for tests whose subject is the policy
    those settings configure, not the trust itself; see tests/security/test_workspace_trust.py)."""
    from coder_ls.engine.config import ConfigStore

    ConfigStore(root, server_env(root)).trust_workspace()


def server_env(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["XDG_CONFIG_HOME"] = str(root.parent / f".xdg-{root.name}")
    env["XDG_STATE_HOME"] = str(root.parent / f".xdg-state-{root.name}")
    env["XDG_CACHE_HOME"] = str(root.parent / f".xdg-cache-{root.name}")  # e.g. the models listing
    env.update(extra or {})
    return env


@contextlib.asynccontextmanager
async def lsp_session(
    root: Path,
    *,
    caps: types.ClientCapabilities | None = None,
    env: dict[str, str] | None = None,
    init_options: Any = None,
    workspace_folders: bool = True,
) -> AsyncIterator[Session]:
    client = make_test_lsp_client()
    holder: dict[str, Session] = {}
    session = Session(client, root)
    holder["s"] = session
    _register(client, holder)
    await client.start_io(*SERVER, env=server_env(root, env), cwd=str(root))
    try:
        session.init_result = await client.initialize_session(
            types.InitializeParams(
                capabilities=caps if caps is not None else full_caps(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)]
                if workspace_folders
                else None,
                initialization_options=init_options,
            )
        )
        yield session
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 10)
        await client.stop()
        server = getattr(client, "_server", None)
        if server is not None and server.returncode is None:
            server.kill()


def server_process(session: Session) -> asyncio.subprocess.Process:
    return session.client._server  # type: ignore[attr-defined,no-any-return]


__all__ = ["JsonRpcException", "Session", "full_caps", "init_git", "lsp_session", "server_process"]
