"""What `/undo` and `/rewind` stand on: the workspace's history, kept beside the user's own.

Snapshots in a private git repository (`checkpoints.py`), the undo records every server on a
workspace shares (`undojournal.py`), the file-system half of an undo (`undofs.py`), what the
editor did to its buffers (`editorbuffers.py`), the private index kept up to date by a file
watcher (`workindex.py`, `watcher.py`), and read-only views of the user's repository
(`gitops.py`). It stands on the guards (git on a hostile repository, the trust gate) and
imports nothing of the engine, the commands or the agent.
"""
