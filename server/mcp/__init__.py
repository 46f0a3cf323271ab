"""The MCP front end (docs/design.md §8.13): the checked diagnosis and the Gatekeeper offered to other
agents over the Model Context Protocol, on stdio (`evigate mcp`) and streamable HTTP
(`evigate serve --mcp HOST:PORT`). Like the gRPC servicers and the web viewer it validates,
calls one use case (server.usecases) and shapes the result; it knows nothing of storage or gRPC."""
