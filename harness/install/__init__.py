"""The install and uninstall commands: the router, session, gate and MCP entries in Claude Code's
settings.json and .mcp.json, written and taken out again exactly."""
