"""evigate tests (a package, so test folders never shadow the server/storage/rules packages)."""
