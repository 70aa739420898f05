"""The MCP gateway: `mnemo mcp` serves MCP over stdio and forwards each tool call to one
SearchService RPC (see docs/gateway.md). Imports stay lazy: hosts wait for its cold start."""
