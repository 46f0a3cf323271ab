"""The bundled demo world: the fixture backend's default data directory (see README, "Tool data formats").

logs/ and knowledge/ carry an empty __init__.py only so that setuptools ships their files as package
data; the fixture backend reads *.ndjson and *.md and ignores everything else.
"""
