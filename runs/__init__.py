"""Runs: planning a suite into jobs, driving them on a backend, recording them in the store.

The CLI (`srtui run`, `srtui methods check`) and the app call this package; it never imports
Textual and never installs signal handlers (that is the CLI's job).
"""
