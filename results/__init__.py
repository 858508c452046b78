"""The results layer, in four rooms, each importing only the rooms below it (import-linter; the
app's facade, ``srtui.views``, is a room of its own above runs and reviews):

- ``srtui.results.outputs``: what leaves srtui (CSV/JSON export, figures, the HTML report);
- ``srtui.results.scoring``: scoring rules of a runs table, statistics, SRBench's published results;
- ``srtui.results.metrics``: the metrics of each run (accuracy, the releases' expression metrics);
- ``srtui.results.store``: the workspace's SQLite store, its schema, column store and queries.
"""

if __name__ != "srtui.results":  # one import package: a top-level `results` would be a second copy
    raise ImportError(f"srtui's results is imported as srtui.results, not as {__name__}")
