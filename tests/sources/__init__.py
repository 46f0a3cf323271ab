"""Tests of server/sources."""
