"""evigate storage package."""
