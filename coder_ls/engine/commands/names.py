"""The built-in slash commands' names, light enough for the `initialize` path
(the LSP edge lists `coder.<name>` for each without importing the engine)."""

BUILTIN_NAMES: tuple[str, ...] = (
    "help",
    "model",
    "permissions",
    "trust",
    "new",
    "clear",
    "compact",
    "resume",
    "sessions",
    "diff",
    "undo",
    "btw",
    "agents",
    "task",
    "init",
    "review",
    "commit",
    "mcp",
    "context",
    "cost",
    "usage",
    "export",
    "rewind",
    "plugin",
)
