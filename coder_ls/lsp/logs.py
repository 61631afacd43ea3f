"""Logging: stderr always; `window/logMessage` at info and above once the client is up."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from coder_ls.guard.redact import Redactor

if TYPE_CHECKING:  # lsprotocol and pygls load with the LSP server, not for `--acp`'s logging
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

REDACTED = "[redacted: "  # what every replacement starts with (`guard.redact`)


class RedactSecrets(logging.Filter):
    """Replaces the values of the secret variables in every record (`guard.redact`, the
    one redaction of the server, also used on what enters a session).

    Attached to every handler, so it sees the records of every logger (the
    aiohttp's debug log included) after they are formatted into a message.
    """

    def __init__(self) -> None:
        super().__init__()
        self._names: tuple[str, ...] = ()
        self._redactor = Redactor.for_names()

    def add_names(self, names: Iterable[str]) -> None:
        new = tuple(n for n in names if n not in self._names)
        if new:
            self._names += new
            self._redactor = Redactor.for_names(self._names)

    def redact(self, text: str) -> str:
        return self._redactor.text(text)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._redactor:
            return True
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


def _redactor() -> RedactSecrets:
    """The filter on the root logger's handlers (one per process, made by `setup_logging`)."""
    for handler in logging.getLogger().handlers:
        for f in handler.filters:
            if isinstance(f, RedactSecrets):
                return f
    return RedactSecrets()


def add_secret_names(names: Iterable[str]) -> None:
    """Also redact the values of these variables (`secrets.envNames`) from now on."""
    _redactor().add_names(names)


def _message_type(levelno: int) -> types.MessageType:
    from lsprotocol import types  # here, not at import: `--acp` sets up logging without LSP (1.5 s)

    kinds = {
        logging.ERROR: types.MessageType.Error,
        logging.WARNING: types.MessageType.Warning,
        logging.INFO: types.MessageType.Info,
    }
    return kinds.get(levelno, types.MessageType.Error if levelno > 40 else types.MessageType.Log)


class ClientLogHandler(logging.Handler):
    def __init__(self, server: LanguageServer) -> None:
        super().__init__(level=logging.INFO)
        self.server = server
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False) or record.name.startswith("pygls"):
            return
        self._local.busy = True
        try:
            from lsprotocol import types

            kind = _message_type(record.levelno)
            self.server.window_log_message(types.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:
            pass
        finally:
            self._local.busy = False

    @classmethod
    def attach(cls, server: LanguageServer) -> None:
        root = logging.getLogger("coder_ls")
        if not any(isinstance(h, cls) for h in root.handlers):
            handler = cls(server)
            handler.addFilter(_redactor())
            handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            root.addHandler(handler)


def setup_logging(level: str, log_file: str | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    redact = RedactSecrets()
    for h in handlers:
        h.setFormatter(fmt)
        h.addFilter(redact)
    root = logging.getLogger()
    root.handlers = handlers
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    logging.getLogger("pygls").setLevel(max(root.level, logging.WARNING))
    logging.getLogger("watchfiles").setLevel(max(root.level, logging.WARNING))
    # one INFO line per HTTP request (every model step); failures are logged by the provider
    for name in ("aiohttp", "httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(name).setLevel(max(root.level, logging.WARNING))
