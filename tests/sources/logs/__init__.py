"""Tests of server.sources.logs."""
