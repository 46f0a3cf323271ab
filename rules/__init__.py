"""evigate rules package."""
