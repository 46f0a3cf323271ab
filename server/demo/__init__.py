"""The bundled demo world: the fixture backend's default data directory (see README, "Tool data formats").

Its files ship as package data (pyproject.toml); scripts/generate_demo.py rebuilds the logs deterministically.
"""
