"""The engine: job specs, the job as a hard-limited process (engine.process), backends, method
adapters and the one safe expression parser. Lowest layer: imports nothing from tasks/results/reviews/srtui."""
