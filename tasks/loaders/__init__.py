"""Task loaders: real data read from files (downloaded once, cached, checksummed)."""
