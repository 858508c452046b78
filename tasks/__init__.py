"""The task catalogue: generators, loaders, ground truth and suites."""

if __name__ != "srtui.tasks":  # one import package: a top-level `tasks` would be a second copy
    raise ImportError(f"srtui's tasks is imported as srtui.tasks, not as {__name__}")
