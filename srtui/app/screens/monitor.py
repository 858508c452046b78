"""Monitor: counts per status, running jobs against their limit, throughput/ETA, recent failures.

Follows any run writing the workspace (this app's or another process's). Polling is a chained
timer: the next poll is scheduled only when the previous one has been applied, and the read
runs in a thread worker, so polls never overlap and never block the UI.
"""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker, WorkerState

from srtui.app.messages import SnapshotReady
from srtui.app.screens.base import SectionScreen
from srtui.app.widgets import NavBar, VimTable, cell, fmt_duration, status_cell
from srtui.styles import STATUS_STYLE
from srtui.views import MonitorSnapshot, Reader, monitor_snapshot, visible

HELP = """\
The monitor follows every run writing this workspace, including a `srtui run` in another shell
(runs with `--backend dask` included: their driver is on this machine). It reads the store twice
a second in the background.

Counts: jobs per status. Throughput and ETA are over the runs still going.
Running: each running job with its elapsed wall time against its time limit. "driver gone": the
`srtui run` that started the job died (killed, machine restarted); the job is not running, and
the next `srtui run` of the workspace records it as lost and runs it again.
Failures: the latest failed jobs; highlight one to see its error and stderr tail below, Enter
opens the run. s starts a run from here (suite, methods, limits); x stops it.
"""


class MonitorScreen(SectionScreen):
    HELP = HELP
    AUTO_FOCUS = "#failures"
    BINDINGS = [
        Binding("s", "app.start_run", "Start run", id="monitor.start"),
        Binding("x", "app.stop_run", "Stop run", id="monitor.stop"),
    ]
    POLL_S = 0.5

    def __init__(self) -> None:
        super().__init__()
        self.snapshot: MonitorSnapshot | None = None

    def compose(self) -> ComposeResult:
        yield NavBar()
        with Vertical(id="monitor"):
            yield Static(id="counts", markup=False)
            yield Static(Text("Running", style="bold"), classes="section")
            yield VimTable(id="running", cursor_type="row", zebra_stripes=True)
            yield Static(Text("Recent failures", style="bold"), classes="section")
            yield VimTable(id="failures", cursor_type="row")
            yield Static(id="failure-tail", markup=False)
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.reader = Reader(self.app.workspace)
        running = self.query_one("#running", DataTable)
        running.add_column("job", key="job")
        running.add_column("host", key="host")
        running.add_column("elapsed / limit", key="elapsed")
        failures = self.query_one("#failures", DataTable)
        failures.add_column("status", key="status")
        failures.add_column("job", key="job")
        failures.add_column("last line", key="line")
        self.query_one("#counts", Static).update(Text("reading the workspace..."))
        self.query_one("#failure-tail", Static).update(Text("no failures", style="dim"))
        self.poll()

    def on_unmount(self) -> None:
        self.reader.close()

    def refresh_data(self) -> None:
        self.read_snapshot()

    def poll(self) -> None:
        if self.is_current or self.snapshot is None:
            self.read_snapshot()
        else:  # hidden: keep the chain alive cheaply, read again when shown
            self.set_timer(self.POLL_S * 2, self.poll)

    @work(thread=True, exclusive=True, group="monitor-poll", exit_on_error=False)
    def read_snapshot(self) -> None:
        self.post_message(SnapshotReady(monitor_snapshot(self.reader, self.snapshot, now=self.app.clock)))

    @on(Worker.StateChanged)
    def _poll_failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "monitor-poll" and event.state == WorkerState.ERROR:
            self.app.report_error(event.worker.error)
            self.set_timer(self.POLL_S * 4, self.poll)  # keep following; a locked or moved db may come back

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        self.apply(message.snapshot)
        self.set_timer(self.POLL_S, self.poll)

    # --- applying a snapshot -------------------------------------------------------------------

    def apply(self, snap: MonitorSnapshot) -> None:
        changed = snap is not self.snapshot
        self.snapshot = snap
        self.query_one("#counts", Static).update(self._counts_text(snap))
        self._update_running(snap)
        if changed:
            self._update_failures(snap)

    def _counts_text(self, snap: MonitorSnapshot) -> Text:
        if snap.error:  # the CLI's refusal, not an invitation to start a run over it
            return Text(visible(snap.error, one_line=True), style="bold red")
        if not snap.exists:
            return Text(
                f"No srtui workspace at {self.app.workspace_label} yet, and none is made until a run starts: "
                "press s to start one, or run `srtui run smoke` in a shell."
            )
        text = Text()
        done = snap.total - snap.remaining
        text.append(f"{done}/{snap.total} finished  ", style="bold")
        for name in ("ok", "running", "pending", *sorted(set(snap.counts) - {"ok", "running", "pending"})):
            if snap.counts.get(name):
                text.append(f"{name} {snap.counts[name]}  ", style=STATUS_STYLE.get(name, ""))
        text.append("\n")
        if snap.active_runs:
            rate = f"{snap.throughput:.1f}" if snap.throughput is not None else "-"
            text.append(f"{snap.active_runs} active run(s)  {rate} jobs/min  ETA {fmt_duration(snap.eta_s)}")
        else:
            text.append("no run in progress", style="dim")
        for line in snap.tuning:  # tuning jobs apart from the final fits they choose
            text.append("\n" + visible(line, one_line=True))
        for m in snap.metrics:  # computed in the run's slots behind its jobs
            text.append("\n" + visible(f"{m.suite}: metrics {m.done}/{m.total} jobs", one_line=True))
            text.append(f"  ETA {fmt_duration(m.eta_s)}")
        if snap.gone_runs:
            text.append(
                f"\n{snap.gone_runs} run(s) lost their driver: their jobs are not running; "
                "`srtui run` again retries them",
                style="bold yellow",
            )
        if self.app.run_active:
            text.append("  (a run started here is going: x stops it)", style="italic")
        return text

    def _update_running(self, snap: MonitorSnapshot) -> None:
        """Diff by job_id: add new rows, drop finished ones, update the elapsed cell."""
        table = self.query_one("#running", DataTable)
        now = self.app.clock()
        wanted = {job.job_id: job for job in snap.running}
        for key in [k for k in table.rows if k.value not in wanted]:
            table.remove_row(key)
        for job_id, job in wanted.items():
            elapsed = None if job.started is None else now - job.started
            over = elapsed is not None and job.time_s is not None and elapsed > job.time_s
            if job.driver_gone:
                value = Text("driver gone", style="bold yellow")
            else:
                value = Text(f"{fmt_duration(elapsed)} / {fmt_duration(job.time_s)}", style="bold red" if over else "")
            if job_id in table.rows:
                table.update_cell(job_id, "elapsed", value)
            else:
                table.add_row(cell(job.label), cell(job.host), value, key=job_id)

    def _update_failures(self, snap: MonitorSnapshot) -> None:
        table = self.query_one("#failures", DataTable)
        current = [k.value for k in table.rows]
        wanted = [f.job_id for f in snap.failures]
        if current == wanted:
            return
        table.clear()
        for f in snap.failures:
            last = f.tail.splitlines()[-1] if f.tail else ""
            table.add_row(status_cell(f.status), cell(f.label), cell(last, 60), key=f.job_id)
        self._show_tail(0)

    @on(DataTable.RowHighlighted, "#failures")
    def _failure_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_tail(event.cursor_row)

    def _show_tail(self, index: int) -> None:
        failures = self.snapshot.failures if self.snapshot else ()
        panel = self.query_one("#failure-tail", Static)
        if 0 <= index < len(failures):
            f = failures[index]
            panel.update(Text(f"{f.status} {f.label} at {f.ended_at}\n{f.tail}".rstrip()))  # untrusted
        else:
            panel.update(Text("no failures", style="dim"))

    @on(DataTable.RowSelected, "#failures")
    def _open_failure(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:  # every failure row has its job id as key
            self.app.open_expression(event.row_key.value)
