"""The published scoring rules, one module per release (discovered by ``results.scoring``)."""
