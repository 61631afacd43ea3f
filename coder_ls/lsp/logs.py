"""Logging: stderr always; `window/logMessage` at info and above once the client is up."""

from __future__ import annotations

import logging
import sys
import threading

from lsprotocol import types
from pygls.lsp.server import LanguageServer

_TYPES = {
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
    logging.INFO: types.MessageType.Info,
}


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
            kind = _TYPES.get(record.levelno, types.MessageType.Error if record.levelno > 40 else types.MessageType.Log)
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
            handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
            root.addHandler(handler)


def setup_logging(level: str, log_file: str | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file, encoding="utf-8"))
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for h in handlers:
        h.setFormatter(fmt)
    root = logging.getLogger()
    root.handlers = handlers
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    logging.getLogger("pygls").setLevel(max(root.level, logging.WARNING))
    logging.getLogger("watchfiles").setLevel(max(root.level, logging.WARNING))
