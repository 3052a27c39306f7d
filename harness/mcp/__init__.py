"""The mcp command: the memory store served over MCP (stdio)."""
