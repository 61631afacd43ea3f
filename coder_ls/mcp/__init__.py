"""The MCP client: servers from .mcp.json, the user config and plugins; their tools, prompts and resources."""
