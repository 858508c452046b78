"""Which scoring rule a suite of the workspace names: one definition for the CLI, the report and
the app's Board."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from srtui.results.store.store import Store


def suite_rule(store: Store | None, name: str) -> str | None:
    """The scoring rule of a suite by name: built in, or the suite file a run of it was given
    (the store keeps each run's argv), so a suite run from a path has its leaderboard too."""
    from srtui.results.store.typed import stored_json
    from srtui.tasks.suites import SuiteError, load_suite

    stored: object = name  # a crafted workspace's suite name may be a blob (warned where it was read)
    if not isinstance(stored, str):
        return None
    candidates = [name]
    if store is not None:
        found = store.conn.execute("SELECT run_id, argv FROM runs WHERE suite = ? ORDER BY started_at DESC", (name,))
        for run_id, argv in found:
            args = stored_json(argv, "runs", run_id, "argv", [], list)
            candidates += [a for a in args if isinstance(a, str) and a.endswith(".toml")]
    for candidate in dict.fromkeys(candidates):
        try:
            suite = load_suite(candidate)
        except (SuiteError, OSError):  # OSError: a crafted name too long for a path
            continue
        if suite.name == name:
            return suite.scoring
    return None
