"""Task generators: deterministic by seed, offline."""
