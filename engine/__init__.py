"""The engine: job specs, hard-limited subprocess launcher, schedulers/backends, method adapters
and the one safe expression parser. Lowest layer: imports nothing from tasks/results/reviews/srtui."""
