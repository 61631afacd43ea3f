"""The committed JSON Schemas match the protocol types."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import msgspec

from coder_ls.protocol import events, results
from coder_ls.protocol.schemas import all_schemas, render

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_committed_schemas_are_current():
    stale = []
    for rel, schema in all_schemas().items():
        path = SCHEMAS / rel
        if not path.exists() or path.read_text(encoding="utf-8") != render(schema):
            stale.append(rel)
    assert not stale, f"regenerate with `python -m coder_ls.protocol.schemas`: stale {stale}"


def test_a_real_result_and_event_validate_against_the_schemas():
    import json

    result = results.error_result("s1", "sub1", "unknown_command", "Unknown command /x")
    jsonschema.validate(msgspec.to_builtins(result), json.loads((SCHEMAS / "command-result.json").read_text()))
    event = events.ShellOutput(chunk="hi\n", session_id="s1", submission_id="sub1", seq=3)
    jsonschema.validate(msgspec.to_builtins(event), json.loads((SCHEMAS / "event.json").read_text()))
    bad = {**msgspec.to_builtins(event), "seq": "three"}
    try:
        jsonschema.validate(bad, json.loads((SCHEMAS / "event.json").read_text()))
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("a malformed event validated")
