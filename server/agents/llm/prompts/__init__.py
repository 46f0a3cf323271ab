"""Versioned prompt files, one per stage (front matter `version: <stage>-vN`)."""
