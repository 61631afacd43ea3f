"""The slash-command registry: built-ins plus prompt commands from markdown files."""
