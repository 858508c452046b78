"""What leaves srtui: the CSV/JSON export, the figures (matplotlib) and the HTML report. Reads the
store, the metrics and the scores (``srtui.results.scoring``); imported only by ``srtui.views`` and
the CLI."""
