"""The edges: configuration, the service layer, the CLI, the MCP server, the watcher, rendering."""
