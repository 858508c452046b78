"""The results layer: the SQLite store, metrics, scoring rules and exports."""
