"""`coder-ls --acp`: the same engine behind the Agent Client Protocol (the official SDK).

The LSP edge (`coder_ls/lsp/`) and this one call the engine through the same `Host`
interface and `Engine.submit`; the engine never learns which edge it serves. One engine
per workspace folder (`session/new`'s `cwd`), built on the first session there, never at
`initialize` (which must stay fast: no `import anthropic`, no git); the model provider is
warmed in the background once an engine exists (`lsp/warmup.py`, shared by both edges).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec
from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.interfaces import Agent, Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from coder_ls import __version__, protocolversion
from coder_ls.acp import plan
from coder_ls.acp.host import PROMPT_SESSION, AcpHost, Routes, caps_from
from coder_ls.acp.prompt import BadPrompt, PromptInput, prompt_input
from coder_ls.acp.updates import commands_update, history_updates
from coder_ls.engine.host import ClientCaps
from coder_ls.protocol.ops import Op, Submission, UserInput
from coder_ls.protocol.results import CommandInfo, CommandResult

if TYPE_CHECKING:
    from coder_ls.engine.executor import Engine

log = logging.getLogger(__name__)

AUTH_METHOD = "anthropic-api-key"
MODE_DESCRIPTIONS = {
    "strict": "asks before every edit and command",
    "balanced": "reads freely, asks before edits and commands",
    "auto-edit": "edits without asking, asks before commands",
    "yolo": "runs everything without asking (the sandbox still applies)",
    "plan": plan.PLAN_DESCRIPTION,
}


def invalid(message: str) -> RequestError:
    return RequestError(-32602, message, {"message": message})


class CoderAcpAgent:
    """The `acp.Agent` of coder_ls: sessions, prompts and cancels mapped onto the engine."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = dict(os.environ if env is None else env)
        self.conn: Client | None = None
        self.routes = Routes()
        self.host: AcpHost | None = None
        self.caps = ClientCaps()
        self.engines: dict[Path, Engine] = {}
        self.engine_by_session: dict[str, Engine] = {}
        self.running: dict[str, set[str]] = {}  # ACP session -> its submissions in flight
        self.config_messages: dict[Path, str] = {}  # a folder's configuration problem, not yet said
        self.version_message: str | None = None  # a protocol mismatch, not yet said
        self._warmups: list[asyncio.Task[None]] = []
        self._later: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    # -- lifecycle -------------------------------------------------------------------------
    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        assert self.conn is not None
        self.caps = caps_from(client_capabilities)
        self.host = AcpHost(self.conn, self.caps, self.routes, self._interrupt, self._catalog)
        fs = getattr(client_capabilities, "fs", None)
        self.host.read_text = bool(fs and fs.read_text_file)
        self._check_protocol_version(kwargs.get("coder"), getattr(client_info, "name", None))
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True, image=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),  # stdio is every agent's
            ),
            auth_methods=[
                EnvVarAuthMethod(
                    type="env_var",
                    id=AUTH_METHOD,
                    name="Anthropic API key",
                    description="coder-ls reads ANTHROPIC_API_KEY from its environment",
                    vars=[AuthEnvVar(name="ANTHROPIC_API_KEY", label="Anthropic API key")],
                    link="https://console.anthropic.com/settings/keys",
                )
            ],
            agent_info=Implementation(name="coder-ls", title="coder_ls", version=__version__),
            # the editor contract's version (contract section 24), as `_meta.coder.protocolVersion`
            field_meta={"coder": {"protocolVersion": protocolversion.PROTOCOL_VERSION}},
        )

    def _check_protocol_version(self, meta: Any, client_name: str | None) -> None:
        """A client that sends `_meta.coder.protocolVersion` of another MAJOR is told what to
        update: logged, and said in its first session's transcript (ACP has no message box).
        ACP's own `protocolVersion` (an integer, the ACP schema's) is negotiated apart."""
        message = protocolversion.mismatch(protocolversion.client_version(meta), client_name)
        if message is not None:
            log.warning("%s", message)
        self.version_message = message

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        if method_id != AUTH_METHOD:
            raise invalid(f"unknown authentication method {method_id!r} (offered: {AUTH_METHOD})")
        if not self.env.get("ANTHROPIC_API_KEY", "").strip():
            raise RequestError(-32000, "ANTHROPIC_API_KEY is not set in coder-ls's environment", None)
        return AuthenticateResponse()

    def _engine(self, cwd: str) -> Engine:
        if self.host is None:
            raise RequestError(-32002, "the agent is not initialized (send initialize first)", None)
        root = Path(cwd)
        if not root.is_absolute():
            raise invalid(f"cwd must be an absolute path, got {cwd!r}")
        if not root.is_dir():
            raise invalid(f"cwd {cwd!r} is not a folder")
        root = root.resolve()
        engine = self.engines.get(root)
        if engine is None:
            from coder_ls.lsp import warmup
            from coder_ls.wiring import build_engine

            engine = self.engines[root] = build_engine(root, self.host, self.env)
            from coder_ls.lsp.logs import add_secret_names  # the one redaction of the logs (no LSP import)

            message = engine.reload_config()
            add_secret_names(engine.config.secrets.env_names)
            if message:  # a bad setting: said in the first session's transcript, and logged
                log.warning("%s", message)
                self.config_messages[root] = message
            if (task := warmup.start(engine)) is not None:
                self._warmups.append(task)
        return engine

    def _catalog(self, acp_id: str) -> list[CommandInfo]:
        engine = self.engine_by_session.get(acp_id)
        return engine.registry.catalog() if engine is not None else []

    def _modes(self, engine: Engine, engine_sid: str | None = None) -> SessionModeState:
        return SessionModeState(
            current_mode_id=plan.current_mode(engine, engine_sid),
            available_modes=[SessionMode(id=p, name=p, description=MODE_DESCRIPTIONS.get(p)) for p in plan.MODES],
        )

    def _after_answer(self, acp_id: str, engine: Engine) -> None:
        """The command catalog, once the client has the session (after this request's answer)."""
        host = self.host
        assert host is not None

        async def later() -> None:
            await asyncio.sleep(0)
            host.send(acp_id, commands_update(engine.registry.catalog()))
            if (mismatch := self.version_message) is not None:
                self.version_message = None
                host.send(acp_id, _text(f"[warning] {mismatch}"))
            if (problem := self.config_messages.pop(engine.root, None)) is not None:
                host.send(acp_id, _text(f"[error] {problem}"))

        task = asyncio.get_running_loop().create_task(later())
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    async def new_session(
        self, cwd: str, additional_directories: Any = None, mcp_servers: Any = None, **kwargs: Any
    ) -> NewSessionResponse:
        engine = self._engine(cwd)
        _connect(engine, mcp_servers)
        session = engine.sessions.new()
        self.routes.add(session.id, session.id, engine.root)
        self.engine_by_session[session.id] = engine
        self._after_answer(session.id, engine)
        return NewSessionResponse(session_id=session.id, modes=self._modes(engine))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, additional_directories: Any = None, **kwargs: Any
    ) -> LoadSessionResponse | None:
        from coder_ls.engine.sessions import UnknownSession

        engine = self._engine(cwd)
        try:
            session = engine.sessions.get(session_id)
        except UnknownSession as exc:
            raise invalid(str(exc)) from None
        _connect(engine, mcp_servers)
        self.routes.add(session_id, session.id, engine.root)
        self.engine_by_session[session_id] = engine
        assert self.host is not None
        for update in history_updates(list(session.transcript)):
            self.host.send(session_id, update)
        await self.host.flush()
        self._after_answer(session_id, engine)
        return LoadSessionResponse(modes=self._modes(engine, session.id))

    # -- turns -----------------------------------------------------------------------------
    def _session(self, acp_id: str) -> tuple[Engine, str]:
        engine = self.engine_by_session.get(acp_id)
        if engine is None:
            raise invalid(f"unknown session {acp_id!r}: create it with session/new or session/load")
        return engine, self.routes.engine_of[acp_id]

    async def _submit(self, acp_id: str, given: PromptInput) -> CommandResult:
        from coder_ls.lsp.commands import BadArguments, BadInput, decode  # the one check of typed input

        self._session(acp_id)  # an unknown session: -32602 before the input is checked
        try:
            arg: dict[str, Any] = {"text": given.text}
            if given.images:
                arg["images"] = msgspec.to_builtins(given.images)
            if given.origin is not None:
                arg["origin"] = given.origin
            op, _ = decode("coder.input", [arg], [])
        except (BadInput, BadArguments) as exc:
            raise invalid(str(exc)) from None
        assert isinstance(op, UserInput)
        return await self._run(acp_id, op)

    async def _run(self, acp_id: str, op: Op) -> CommandResult:
        engine, engine_sid = self._session(acp_id)
        submission = Submission(id=uuid.uuid4().hex, session_id=engine_sid, op=op)
        token = PROMPT_SESSION.set(acp_id)
        self.running.setdefault(acp_id, set()).add(submission.id)
        try:
            return await engine.submit(submission)
        finally:
            self.running[acp_id].discard(submission.id)
            PROMPT_SESSION.reset(token)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        try:
            given = prompt_input(prompt, kwargs)  # the SDK hands `_meta`'s keys as keyword arguments
        except BadPrompt as exc:
            raise invalid(str(exc)) from None
        if not given.text.strip() and not given.images:
            raise invalid("the prompt is empty: send some text")
        result = await self._submit(session_id, given)
        host = self.host
        assert host is not None
        if result.error is not None and result.error.code == "bad_image":  # nothing was kept or sent
            await host.flush()
            message = result.error.message
            raise RequestError(-32602, message, {"message": message, "code": "bad_image"})
        if result.mode == "command" and result.reply:
            host.send(session_id, _text(result.reply))
        elif result.error is not None:
            host.send(session_id, _text(f"Error ({result.error.code}): {result.error.message}"))
        if result.status == "completed":
            result = await self._answer_plan(session_id, result)
        await host.flush()
        return PromptResponse(stop_reason="cancelled" if result.status == "cancelled" else "end_turn")

    async def _answer_plan(self, acp_id: str, result: CommandResult) -> CommandResult:
        """A turn that ended with a plan: the user answers it now (`acp/plan.py`)."""
        engine, engine_sid = self._session(acp_id)
        proposed = plan.proposed_plan(engine, engine_sid, result.submission_id)
        if proposed is None:
            return result
        host = self.host
        assert host is not None
        choice = await host.choose(acp_id, plan.question(proposed), plan.CHOICES)
        op = plan.answer_op(result.submission_id, choice)
        if op is None:
            host.send(acp_id, _text("\nThe plan waits: say what to change (still in plan mode), or pick another mode."))
            return result
        answered = await self._run(acp_id, op)
        if answered.mode == "command" and answered.reply:
            host.send(acp_id, _text(answered.reply))
        elif answered.error is not None:
            host.send(acp_id, _text(f"Error ({answered.error.code}): {answered.error.message}"))
        return answered

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._interrupt(session_id)

    def _interrupt(self, acp_id: str) -> None:
        engine = self.engine_by_session.get(acp_id)
        if engine is None:
            return
        for submission_id in list(self.running.get(acp_id, ())):
            engine.interrupt_submission(submission_id)

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse | None:
        if mode_id not in plan.MODES:
            raise invalid(f"unknown mode {mode_id!r} (one of {', '.join(plan.MODES)})")
        engine, engine_sid = self._session(session_id)
        for line in plan.mode_lines(mode_id, plan.planning(engine, engine_sid)):
            result = await self._submit(session_id, PromptInput(line))
            if result.status != "completed" or result.error is not None:
                message = result.error.message if result.error else f"the mode was not changed ({result.status})"
                raise invalid(message)
        assert self.host is not None
        await self.host.flush()
        return SetSessionModeResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def shutdown(self) -> None:
        from coder_ls.lsp import warmup

        for task in self._warmups:
            await warmup.stop(task)
        for engine in self.engines.values():
            with contextlib.suppress(Exception):
                await engine.shutdown()


def _connect(engine: Engine, servers: Any) -> None:
    """The client's `mcpServers` to the folder's MCP client (started with the first prompt, like
    the user's own servers); a bad one refuses the request and nothing is added."""
    from coder_ls.acp.mcp import BadServers, client_servers

    try:
        configs = client_servers(servers)
    except BadServers as exc:
        raise invalid(str(exc)) from None
    if configs and (problems := engine.mcp.add_client_servers(configs)):
        raise invalid("; ".join(problems))


def _text(text: str) -> Any:
    from acp import helpers

    return helpers.update_agent_message_text(text)


def serve() -> None:
    """stdio until the client closes it; then every engine is shut down (shells, logs)."""
    agent = CoderAcpAgent()

    async def main() -> None:
        try:
            from coder_ls.acp.stdio import stdio_streams

            reader, writer = await stdio_streams()
            # The SDK answers method_not_found for the optional methods this agent leaves out.
            await run_agent(cast(Agent, agent), writer, reader)
        finally:
            await agent.shutdown()

    asyncio.run(main())
