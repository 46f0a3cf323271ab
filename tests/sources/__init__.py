"""Tests of server.sources."""
