"""The metrics of each run: accuracy from the stored predictions, and each SRBench release's
expression metrics (size, simplicity, symbolic solution), computed in bounded workers. Reads and
writes the store (``srtui.results.store``); imports no room above it."""
