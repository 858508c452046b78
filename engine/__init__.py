"""The engine: job specs, the job as a hard-limited process (srtui.engine.process), backends, method
adapters and the one safe expression parser. Lowest layer: imports nothing from tasks/results/reviews/srtui."""

if __name__ != "srtui.engine":  # one import package: a top-level `engine` would be a second copy
    raise ImportError(f"srtui's engine is imported as srtui.engine, not as {__name__}")
