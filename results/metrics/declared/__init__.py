"""The expression metrics, one module each: every module here calls
``srtui.results.metrics.declare.declare`` once, and ``srtui.results.metrics.declare.metrics`` imports them
all. Adding a metric is adding a module here (CONTRIBUTING.md, "Adding an expression metric")."""
