"""Tests of server/sources/retrieval."""
