"""evigate server package."""
