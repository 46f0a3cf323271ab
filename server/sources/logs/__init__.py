"""Reading log files as they really are: formats, layouts, rotation, multi-line events, patterns."""
