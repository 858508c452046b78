"""The store: the workspace's SQLite database (schema and migrations, and the guard every connection
opens through: no object srtui did not make, no statement that cannot be stopped), its column
store, the queries and the explorer's filters and pages. The bottom room of ``results``: it imports
no other."""
