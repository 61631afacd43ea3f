"""The trust store is read again only when its file changed, and always then."""

from __future__ import annotations

import json
from pathlib import Path

from coder_ls.guard.trust import TrustStore


def test_another_servers_trust_and_a_hand_edit_are_seen(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    root = tmp_path / "ws"
    mine, other = TrustStore(env), TrustStore(env)
    assert not mine.folder_trusted(root)
    other.trust(root, {})  # another server's /trust: the file is replaced
    assert mine.folder_trusted(root)
    data = json.loads(mine.path.read_text())
    data[str(root)]["folder"] = False
    with mine.path.open("r+") as fh:  # edited in place (same inode)
        fh.write(json.dumps(data))
        fh.truncate()
    assert not mine.folder_trusted(root)
    mine.path.unlink()
    assert not mine.folder_trusted(root)
