"""The results layer, in five rooms, each importing only the rooms below it (import-linter):

- ``results.views``: the app's facade, plain data for each screen;
- ``results.outputs``: what leaves srtui (CSV/JSON export, figures, the HTML report);
- ``results.scoring``: scoring rules of a runs table, statistics, SRBench's published results;
- ``results.metrics``: the metrics of each run (accuracy, the releases' expression metrics);
- ``results.store``: the workspace's SQLite store, its schema, column store and queries.
"""
