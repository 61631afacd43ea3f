"""coder_ls: a coding agent behind the Language Server Protocol."""

__version__ = "0.1.0"

#: The editor contract's version, "MAJOR.MINOR" (contract section 24): the server says it at
#: `initialize` (`capabilities.experimental.coder.protocolVersion`), a client may send its own
#: (`initializationOptions.protocolVersion`). MINOR grows when the surface only grows (a new
#: command, field or event); MAJOR when a client written for the old one would break.
PROTOCOL_VERSION = "1.0"
