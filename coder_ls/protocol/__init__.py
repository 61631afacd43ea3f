"""Typed messages shared by the engine and the LSP edge (msgspec structs only).

Nothing here imports pygls, lsprotocol or an LLM SDK.
"""
