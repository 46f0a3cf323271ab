"""The read-only trace viewer in the browser (`evigate serve --web HOST:PORT`): server-rendered
pages over the same use cases as the gRPC API (docs/design.md §1.1, §8)."""
