"""Runs: planning a suite into jobs, driving them on a backend, recording them in the store.

The CLI (`srtui run`, `srtui methods check`) and the app call this package; it never imports
Textual and never installs signal handlers (that is the CLI's job).
"""

if __name__ != "srtui.runs":  # one import package: a top-level `runs` would be a second copy
    raise ImportError(f"srtui's runs is imported as srtui.runs, not as {__name__}")
