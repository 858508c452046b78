"""Saving from the app: the save keys of Board and Plots (f: the publication figure
as a PDF, w: the suite's HTML report), done in a worker thread by ``srtui.outputs``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.binding import Binding
from textual.screen import Screen

if TYPE_CHECKING:
    from srtui.views import Profile, Reader


#: the save keys of Leaderboards and Suite plots (not in the footer, but in F1 help and the palette)
SAVE_BINDINGS = [
    Binding("f", "save_figure", "Save figure (PDF)", show=False),
    Binding("w", "save_report", "Save report (HTML)", show=False),
]
SAVE_HELP = """
f saves the figure shown (the rule's publication figure on Board; profiles, Pareto plot or
energy on Plots) as a PDF, as `srtui plot` draws it; w saves the suite's HTML report
(`srtui report`). Both go into <workspace>/exports/, and a notice says where (docs/figures.md).
"""


def save_in_background(
    screen: Screen[Any], reader: Reader, what: str, suite: str, kind: str = "", profile: Profile | None = None
) -> None:
    """Save a publication figure (PDF) or the suite's HTML report into <workspace>/exports/ in a
    worker thread, then say where the file went (or why there is none)."""
    from srtui.outputs import save_figure, save_report

    folder = screen.app.workspace.root / "exports"  # type: ignore[attr-defined]
    screen.notify(f"saving the {kind or what} of {suite}...", markup=False, timeout=3)

    def job() -> None:
        from srtui.views import SrtuiError, visible

        try:
            with reader.lock:
                store = reader.store()
                if store is None:
                    raise SrtuiError("no workspace yet")
                path = (
                    save_figure(store, suite, kind, folder, profile)
                    if what == "figure"
                    else save_report(store, suite, folder)
                )
        except SrtuiError as exc:
            message, severity = f"no {what}: {visible(str(exc), one_line=True)}", "error"
        else:
            message, severity = f"saved {what} to {path}", "information"
        screen.app.call_from_thread(screen.notify, message, severity=severity, markup=False, timeout=10)

    screen.run_worker(job, thread=True, group="save", exit_on_error=False)
