"""The MCP server: tools, Markdown for agents, token budgets, `ctxd serve`."""
