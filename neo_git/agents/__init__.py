"""How coding agents use the memory (docs/architecture.md §12): an MCP server, hook entry points for
Claude Code and Codex, their installation, and local turn records."""
