"""The agent: tools, paths, text edits and the permission policy (no pygls here)."""
