"""The command model: built-ins plus commands and skills from files, plugins, MCP prompts."""
