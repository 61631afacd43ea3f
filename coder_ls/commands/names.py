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
    "worktrees",
    "plan",
    "init",
    "review",
    "commit",
    "mcp",
    "context",
    "cost",
    "shells",
    "export",
    "rewind",
    "plugin",
    "config",
    "effort",
    "status",
    "skills",
)

# Other names of built-ins, in BUILTIN_NAMES order (`coder.<alias>` is an id too).
BUILTIN_ALIASES: tuple[str, ...] = ("reset", "usage", "settings")
