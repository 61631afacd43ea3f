"""The coder-ls language server: wiring pygls to the engine."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled, JsonRpcServerNotInitialized
from pygls.io_ import StdinAsyncReader
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path, uri_scheme

from coder_ls import __version__, protocolversion
from coder_ls.commands.names import BUILTIN_ALIASES, BUILTIN_NAMES
from coder_ls.lsp import codeactions, lenses
from coder_ls.lsp.commands import FOCUS_ID, BadArguments, BadInput, command_ids, decode, focus_args
from coder_ls.lsp.host import LspHost, resolve_caps
from coder_ls.lsp.logs import ClientLogHandler, add_secret_names
from coder_ls.lsp.loop import run_until_client_leaves
from coder_ls.lsp.progress import ProgressManager
from coder_ls.lsp.protocol import CoderProtocol
from coder_ls.lsp.replies import ReplyEncoder
from coder_ls.lsp.stream import read_messages
from coder_ls.lsp.writer import BatchedWriter
from coder_ls.protocol.ops import Submission
from coder_ls.protocol.results import CommandResult, error_result

if TYPE_CHECKING:
    from coder_ls.engine.executor import Engine

log = logging.getLogger(__name__)


def workspace_root(params: types.InitializeParams) -> Path:
    """The first workspace folder, else rootUri, else rootPath, else the cwd."""
    if params.workspace_folders:
        path = to_fs_path(params.workspace_folders[0].uri)
        if path:
            return Path(path)
    if params.root_uri:
        path = to_fs_path(params.root_uri)
        if path:
            return Path(path)
    if params.root_path:
        return Path(params.root_path)
    return Path.cwd()


_NOT_SETTINGS = ("capabilities", "protocolVersion")


def _coder_section(settings: Any) -> dict[str, Any]:
    if isinstance(settings, dict):
        # `capabilities` says what the client can do (`askUser`) and `protocolVersion` which
        # contract it speaks (coder_ls/protocolversion.py): neither is a setting
        inner = settings.get("coder", {k: v for k, v in settings.items() if k not in _NOT_SETTINGS})
        return inner if isinstance(inner, dict) else {}
    return {}


class CoderServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("coder-ls", __version__, protocol_cls=CoderProtocol)
        self.engine: Engine | None = None
        self.progress_manager = ProgressManager(self)
        self._replies = ReplyEncoder()  # results as JSON bytes (the catalog's kept while unchanged)
        self._requests: dict[Any, str] = {}  # JSON-RPC id -> submission id
        self._cancel_requested: set[str] = set()
        self._last_config_message: str | None = None
        self._watch: Any = None
        self._warmup: asyncio.Task[None] | None = None
        self._init_params: types.InitializeParams | None = None
        self._pending_settings: types.DidChangeConfigurationParams | None = None
        self.host: LspHost | None = None
        self.lens_refresher = lenses.Refresher()
        proto = self.protocol
        assert isinstance(proto, CoderProtocol)
        proto.on_cancel_request = self._on_cancel_request
        proto.on_execute_command = self._on_execute_command
        for cid in [*command_ids([*BUILTIN_NAMES, *BUILTIN_ALIASES]), FOCUS_ID]:
            self.protocol.fm.commands[cid] = _never_called

    # -- lifecycle --------------------------------------------------------------------------
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls's stdio server with our read loop (coder_ls/lsp/stream.py), which answers
        broken framing, bodies that are not JSON and requests before `initialize`."""
        self._stop_event = threading.Event()
        reader = StdinAsyncReader(stdin or sys.stdin.buffer, self.thread_pool)
        writer = BatchedWriter(stdout or sys.stdout.buffer)
        self.protocol.set_writer(writer)  # type: ignore[arg-type]
        try:
            run_until_client_leaves(read_messages(self._stop_event, reader, self.protocol))
        except BrokenPipeError:
            log.error("the connection to the client is lost: shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            writer.flush()
            self.shutdown()

    def start_tcp(self, host: str, port: int, token: str | None = None) -> None:
        """pygls's TCP server with our read loop, for one client that knows the token
        (`lsp/tcpgate.py`: printed on stderr, or `CODER_LS_TOKEN`). A connection that
        does not open with an `initialize` carrying it, or that comes while the client is
        connected, is closed unanswered and the server goes on listening; the client's
        own connection ending ends the server, as before."""
        from coder_ls.lsp.tcpgate import admit, server_token

        self._stop_event = stop_event = threading.Event()
        secret = token or ""
        taken = False

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal taken
            admitted = None if taken else await admit(reader, secret)
            if admitted is None or taken:
                writer.close()
                return
            taken = True
            self.protocol.set_writer(writer)  # type: ignore[arg-type]
            await read_messages(stop_event, admitted, self.protocol)
            self.shutdown()

        async def serve() -> None:
            nonlocal secret
            self._server = server = await asyncio.start_server(connection, host, port)
            secret = secret or server_token()  # printed once the port listens
            async with server:
                await server.serve_forever()

        try:
            asyncio.run(serve())
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def initialize(self, params: types.InitializeParams) -> None:
        """Only remember what the client said: the engine (and its imports) is built after
        the answer, at `initialized` or at the first request, to keep `initialize` fast."""
        self._init_params = params

    def ensure_engine(self) -> Engine:
        if self.engine is not None:
            return self.engine
        from coder_ls.wiring import build_engine

        params = self._init_params
        if params is None:
            raise JsonRpcServerNotInitialized("the server is not initialized (send initialize first)")
        root = workspace_root(params).resolve()
        caps = resolve_caps(params.capabilities, params.initialization_options)
        self.progress_manager.can_create = caps.work_done_progress
        host = LspHost(self, caps, self.progress_manager)
        engine = build_engine(root, host, os.environ)
        host.attention.follow = lambda: engine.config.agent.follow
        self.host = host
        engine.config_store.init_options = _coder_section(params.initialization_options)
        self.engine = engine
        self._config_message(engine.reload_config())
        if self._pending_settings is not None:
            pending, self._pending_settings = self._pending_settings, None
            self.did_change_configuration(pending)
        return engine

    def _check_protocol_version(self) -> None:
        """A client that speaks another MAJOR of the contract is told what to update."""
        params = self._init_params
        if params is None:
            return
        theirs = protocolversion.client_version(params.initialization_options)
        name = params.client_info.name if params.client_info else None
        if (message := protocolversion.mismatch(theirs, name)) is not None:
            log.warning("%s", message)
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))

    def _config_message(self, message: str | None) -> None:
        if self.engine is not None:
            add_secret_names(self.engine.config.secrets.env_names)
        if message and message != self._last_config_message:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
        self._last_config_message = message

    def did_change_configuration(self, params: types.DidChangeConfigurationParams) -> None:
        if self.engine is None:
            self._pending_settings = params
            return
        self.engine.config_store.set_client_settings(_coder_section(params.settings))
        self._config_message(self.engine.reload_config())

    def initialized(self) -> None:
        ClientLogHandler.attach(self)
        self._check_protocol_version()
        self.ensure_engine()
        # Logged once the client can receive it (window/logMessage), not only on stderr.
        log.info("coder-ls %s serving %s", __version__, self.engine.root if self.engine else Path.cwd())
        if self.engine is not None and self._watch is None:
            from coder_ls.lsp import watch

            self._watch = watch.start(self.engine)
        if self.engine is not None and self._warmup is None:
            from coder_ls.lsp import warmup

            self._warmup = warmup.start(self.engine)

    async def shutdown_engine(self) -> None:
        from coder_ls.lsp import watch

        await watch.stop_watch(self._watch)
        self._watch = None
        from coder_ls.lsp import warmup

        await warmup.stop(self._warmup)
        if self.engine is not None:
            await self.engine.shutdown()

    # -- commands ---------------------------------------------------------------------------
    async def _on_execute_command(self, params: types.ExecuteCommandParams, msg_id: Any) -> Any:
        engine = self.ensure_engine()
        if params.command == FOCUS_ID:  # not a submission: answered at once (lsp/attention.py)
            try:
                focus = focus_args(params.arguments)
            except BadArguments as exc:
                raise JsonRpcInvalidParams(str(exc)) from None
            assert self.host is not None
            self.host.attention.set_focus(focus.focused)
            return {"focused": focus.focused}
        submission_id = uuid.uuid4().hex
        try:
            op, session_id = decode(params.command, params.arguments, engine.registry.builtin_ids())
        except BadArguments as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        except BadInput as exc:  # the user's text, not the protocol: an error result
            result = error_result(exc.session_id or "", submission_id, "bad_input", str(exc))
            return self._replies.encode(result)
        if params.work_done_token is not None:
            self.progress_manager.attach_request_token(submission_id, params.work_done_token)
        if msg_id is not None:
            self._requests[msg_id] = submission_id
        try:
            result = await engine.submit(Submission(id=submission_id, session_id=session_id, op=op))
        except asyncio.CancelledError:
            result = CommandResult(
                session_id=session_id or "", submission_id=submission_id, mode="error", status="cancelled"
            )
        except Exception as exc:
            log.exception("command %s failed", params.command)
            result = error_result(session_id or "", submission_id, "internal_error", f"internal error: {exc}")
        finally:
            if msg_id is not None:
                self._requests.pop(msg_id, None)
            self.progress_manager.forget(submission_id)
            self.lens_refresher.after_submission(self)  # the agent's lines may have changed
        if submission_id in self._cancel_requested:
            self._cancel_requested.discard(submission_id)
            raise JsonRpcRequestCancelled(f"request {msg_id} was cancelled", data=msgspec.to_builtins(result))
        return self._replies.encode(result)

    def _on_cancel_request(self, msg_id: Any) -> bool:
        submission_id = self._requests.get(msg_id)
        if submission_id is None or self.engine is None:
            return False
        self._cancel_requested.add(submission_id)
        self.engine.interrupt_submission(submission_id)
        return True

    def progress_cancelled(self, params: types.WorkDoneProgressCancelParams) -> None:
        submission_id = self.progress_manager.submission_for(params.token)
        if submission_id is not None and self.engine is not None:
            self.engine.interrupt_submission(submission_id)


async def _never_called(*args: Any) -> None:  # pragma: no cover - the protocol handles commands
    raise RuntimeError("coder-ls commands are dispatched by CoderProtocol")


def build_server() -> CoderServer:
    server = CoderServer()

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: CoderServer, params: types.InitializeParams) -> None:
        ls.initialize(params)

    @server.feature(types.INITIALIZED)
    def on_initialized(ls: CoderServer, params: types.InitializedParams) -> None:
        ls.initialized()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_config(ls: CoderServer, params: types.DidChangeConfigurationParams) -> None:
        ls.did_change_configuration(params)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def on_progress_cancel(ls: CoderServer, params: types.WorkDoneProgressCancelParams) -> None:
        ls.progress_cancelled(params)

    @server.feature(types.SHUTDOWN)
    async def on_shutdown(ls: CoderServer, params: Any) -> None:
        await ls.shutdown_engine()

    def on_buffer(ls: CoderServer, params: Any) -> None:  # /undo keeps paths the user typed in
        if ls.engine is not None:
            doc = ls.workspace.get_text_document(params.text_document.uri)
            if doc.path is not None and uri_scheme(doc.uri) == "file":  # a `git:` document is no file
                ls.engine.checkpoints.note_editor_change(Path(doc.path), doc.source)
                if isinstance(params, types.DidChangeTextDocumentParams):  # versioned: the user's typing
                    lenses.editor_changed(ls, params)

    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(on_buffer)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(on_buffer)
    codeactions.register(server)
    lenses.register(server)
    return server
