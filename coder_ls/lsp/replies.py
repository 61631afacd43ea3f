"""A command's answer as the JSON bytes sent to the client.

`coder.*` results are encoded here with msgspec and sent as they are (`protocol.py`): pygls
would convert them with cattrs and `json.dumps` again. A text with an unpaired surrogate,
which UTF-8 cannot carry (a file name that is not UTF-8, surrogate-escaped), is sent as the
one rule says (`protocol/wiretext.py`): such a byte as `\\xNN`, another lone surrogate as
U+FFFD (a JSON `\\udcff` escape is valid JSON that strict clients refuse to decode).

The catalog is the one large answer a client asks for again and again (`coder.listCommands`:
~490 bytes an entry, ~490 KB with 1,000 skills). The engine gives back the same
`CommandCatalog` object while nothing it shows changed (`commands/catalog.py`,
`Listings`); its bytes are kept with it here, and an answer that carries it again is its
own few fields around those bytes. The object is held, so an identity cannot be reused.
"""

from __future__ import annotations

import msgspec

from coder_ls.protocol.results import CommandCatalog, CommandResult
from coder_ls.protocol.wiretext import carried_value


class ReplyEncoder:
    """Encodes results; keeps the bytes of the last catalog it encoded (one per server)."""

    def __init__(self) -> None:
        self._catalog: tuple[CommandCatalog, msgspec.Raw] | None = None

    def encode(self, result: CommandResult) -> msgspec.Raw:
        """The result as `msgspec.Raw` JSON bytes (see the docstring)."""
        try:
            if isinstance(result.data, CommandCatalog):
                return msgspec.Raw(msgspec.json.encode(msgspec.structs.replace(result, data=self._data(result.data))))
            return msgspec.Raw(msgspec.json.encode(result))
        except UnicodeEncodeError:
            return msgspec.Raw(msgspec.json.encode(carried_value(msgspec.to_builtins(result))))

    def _data(self, catalog: CommandCatalog) -> msgspec.Raw:
        kept = self._catalog
        if kept is not None and kept[0] is catalog:
            return kept[1]
        raw = msgspec.Raw(msgspec.json.encode(catalog))  # raises UnicodeEncodeError as a whole would
        self._catalog = (catalog, raw)
        return raw
