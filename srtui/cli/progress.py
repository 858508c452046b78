"""Live progress of `srtui run`: counts per status, running jobs against their limit, ETA.

On a terminal it is a rich Live panel; otherwise (CI, a pipe) one plain line per finished job.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from srtui.engine.backends.base import RunState
from srtui.engine.textsafe import raw_stream, visible
from srtui.styles import STATUS_STYLE

if TYPE_CHECKING:
    from srtui.runs.execution import RunResult
    from srtui.runs.planning import RunPlan


def _fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class RunProgress:
    def __init__(self, plan: RunPlan) -> None:
        self.plan = plan
        # rich writes its own escape codes, so it gets the unwrapped stream; every untrusted string
        # it shows (job labels, errors) is made visible first
        self.console = Console(file=raw_stream(sys.stderr))
        self.live: Live | None = None
        self.state: RunState | None = None
        self._printed = 0
        self._lock = threading.Lock()
        self._positions: dict[str, str] | None = None  # tuning job -> its configuration and fold

    def __enter__(self) -> RunProgress:
        if self.console.is_terminal:
            self.live = Live(
                Text("starting..."),
                console=self.console,
                refresh_per_second=4,
                transient=False,
                get_renderable=self._render,
            )
            self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def notify(self, message: str) -> None:
        self.console.print(Text(visible(f"srtui: {message}", one_line=True), style="bold yellow"))

    def update(self, state: RunState) -> None:
        self.state = state
        if self.live is None:
            self._print_new_lines(state)

    def _print_new_lines(self, state: RunState) -> None:
        """One plain line per finished job, as the live panel names it: task, method, seed,
        status and wall time."""
        with self._lock:  # two slots finishing at once must not interleave their lines
            with state.lock:
                finished = list(state.finished)
                state.finished.clear()
                total = state.total
            for job, status, wall_s in finished:
                self._printed += 1
                spec = job.spec
                where = self.position(spec.job_id)
                line = f"[{self._printed}/{total}] {spec.task}  {spec.method}  seed {spec.seed}{where}  {status}"
                print(visible(f"{line}  {wall_s:.1f} s", one_line=True), file=sys.stderr, flush=True)

    def position(self, job_id: str) -> str:
        """A tuning job's configuration and fold (``  config 2/6 fold 3/5``); a final job's
        ``  final``; empty for a run without tuning."""
        if not self.plan.searches:
            return ""
        if self._positions is None:
            self._positions = {k: v for search in self.plan.searches for k, v in search.positions().items()}
        return f"  {self._positions.get(job_id, 'final')}"

    def _render(self) -> RenderableType:
        state = self.state
        if state is None:
            return Text(f"planning {self.plan.n_jobs} jobs...")
        with state.lock:
            counts = dict(state.counts)
            running = list(state.running.values())
            failures = list(state.recent_failures[-3:])
            done, total = state.done, state.total
            metrics = (state.metrics_done, state.metrics_total, state.metrics_eta_s)
        head = Text()
        head.append(f"{self.plan.suite.name}: {done}/{total} done  ", style="bold")
        for name, n in sorted(counts.items()):
            head.append(f"{name} {n}  ", style=STATUS_STYLE.get(name, ""))
        head.append(f"  {state.throughput():.1f} jobs/min  ETA {_fmt_s(state.eta_s())}")
        if metrics[1]:  # computed in the slots behind the jobs
            head.append(f"\nmetrics {metrics[0]}/{metrics[1]} jobs  ETA {_fmt_s(metrics[2])}")
        table = Table(box=None, pad_edge=False, show_header=bool(running))
        table.add_column("running")
        table.add_column("elapsed / limit", justify="right")
        now = time.monotonic()
        for job, started in sorted(running, key=lambda r: r[1]):
            table.add_row(
                Text(visible(job.label + self.position(job.spec.job_id), one_line=True)),
                f"{_fmt_s(now - started)} / {_fmt_s(job.spec.limits.time_s)}",
            )
        parts: list[RenderableType] = [head, table]
        for job, outcome in failures:
            line = Text(
                visible(f"{outcome.status}: {job.label}", one_line=True), style=STATUS_STYLE.get(outcome.status, "")
            )
            tail = (outcome.error or outcome.limit_detail or outcome.stderr_tail or "").strip().splitlines()
            if tail:
                line.append(
                    f"  {visible(tail[-1][:120], one_line=True)}", style="dim"
                )  # Text(): untrusted, never markup
            parts.append(line)
        return Group(*parts)

    def summary(self, result: RunResult) -> None:
        state = result.state
        counts = ", ".join(f"{k} {v}" for k, v in sorted(state.counts.items())) or "nothing to run"
        extra = f"; {result.skipped} already done" if result.skipped else ""
        extra += f"; {result.lost_recovered} lost jobs of a dead driver recovered" if result.lost_recovered else ""
        self.console.print(Text(f"run {result.run_id}: {counts}{extra} ({_fmt_s(time.monotonic() - state.started)})"))
