"""Log versions: `MIGRATIONS[n]` turns the raw records (header first) of a version-`n`
log into version `n + 1`. Pure functions over dicts; see `store/log.py`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coder_ls.store.records import LOG_VERSION, UnsupportedLogVersion

RawRecord = dict[str, Any]
Migration = Callable[[list[RawRecord]], list[RawRecord]]


def _v0_to_v1(records: list[RawRecord]) -> list[RawRecord]:
    """v0 (prototype logs): header without `version`, `created` as ISO text, `workdir`;
    messages as `{"type":"msg","role","text"}`; `{"type":"model","name"}`."""
    from coder_ls.store.timefmt import parse_iso

    head, *rest = records
    created: Any = head.get("createdAt", head.get("created")) or 0.0
    header: RawRecord = {
        "type": "header",
        "id": head["id"],
        "createdAt": parse_iso(created) if isinstance(created, str) else float(created),
        "cwd": head.get("cwd", head.get("workdir", "")),
    }
    out = [header]
    for rec in rest:
        kind = rec.get("type")
        ts = rec.get("ts", header["createdAt"])
        if kind == "msg":
            message = {"role": rec.get("role"), "content": [{"type": "text", "text": rec.get("text", "")}]}
            out.append({"type": "message", "message": message, "submissionId": None, "ts": ts})
        elif kind == "model":
            out.append({"type": "model", "model": rec.get("name", ""), "provider": "", "ts": ts})
        else:  # clear, title: unchanged
            out.append(rec)
    return out


MIGRATIONS: dict[int, Migration] = {0: _v0_to_v1}


def migrate(records: list[RawRecord]) -> list[RawRecord]:
    """Raw records (header first) of any known version -> the current version. Pure."""
    version = records[0].get("version", 0)
    if not isinstance(version, int) or version > LOG_VERSION:
        raise UnsupportedLogVersion(f"log version {version!r}; this coder-ls reads up to {LOG_VERSION}")
    while version < LOG_VERSION:
        records = MIGRATIONS[version](records)
        version += 1
        records[0] = {**records[0], "version": version}
    return records
