"""The store: the workspace's SQLite database (schema and migrations), its column store, the
queries and the explorer's filters and pages. The bottom room of ``results``: it imports no other."""
