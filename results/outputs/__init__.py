"""What leaves srtui: the CSV/JSON export, the figures (matplotlib) and the HTML report. Reads the
store, the metrics and the scores (``results.scoring``); imported only by ``results.views`` and
the CLI."""
