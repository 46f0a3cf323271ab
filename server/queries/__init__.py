"""The shared vocabulary of tools and sources (docs/design.md §9): query and answer types
(types.py), tokens for lexical search (text.py) and the structure of a case (case_structure.py).
It imports nothing of server.tools or server.sources, so both stand on it."""
