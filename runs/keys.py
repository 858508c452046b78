"""Names runs keep in the store, importable without the run machinery (``srtui status`` reads
them: importing ``srtui.runs.sink`` for one name loaded the engine's backends and numpy; issue 56)."""

from __future__ import annotations


def workers_key(run_id: str) -> str:
    """The store's meta key under which a cluster run keeps 'live/expected' workers."""
    return f"workers:{run_id}"
