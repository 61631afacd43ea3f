"""Hooks in Claude Code's format: settings files, plugins and front matter; run on the engine's events."""
