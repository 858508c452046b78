"""The published scoring rules, one module per release (discovered by ``srtui.results.scoring``)."""
