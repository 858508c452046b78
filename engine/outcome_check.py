"""Turn a finished job's outcome into its record: the model string read through the one safe
parser, and the fidelity check (accuracy is the declared metrics', srtui.results.metrics.accuracy).

The model string is untrusted: it is only ever read by ``srtui.engine.expression.parse_expression``,
and never in a driver thread. ``Checker`` runs ``evaluate_outcome`` in a process of its own per
slot (``srtui.engine.pool.TimedPool``) under a deadline and a memory cap: a model that takes longer is
recorded with a ``model_error``, and the driver goes on.
"""

from __future__ import annotations

import io
import os
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from srtui.engine.scaling import STAT_KEYS, Scaling

if TYPE_CHECKING:  # the scoring functions are read without the run machinery (`srtui score`, #56)
    from srtui.engine.process.job_io import JobOutcome


@dataclass
class TaskArrays:
    """The data of one task as the driver holds it (from the npz in the workspace cache)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    train_index: np.ndarray
    test_index: np.ndarray
    feature_names: list[str]
    #: srtui.engine.scaling.STAT_KEYS of a tuning fold (the whole training set's scalers), if stored
    scale_stats: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str, expect: tuple[int, str] | None = None) -> TaskArrays:
        """From the npz at ``path``; ``expect``: (size, sha256) the driver wrote there
        (srtui.engine.task_files): a file that no longer holds them is refused, not read."""
        from srtui.engine.task_files import read_checked
        from srtui.engine.untrusted import UntrustedFileError, open_regular

        if expect is None:
            with open_regular(Path(path)) as fh:
                return cls.from_npz(fh)
        data = read_checked(Path(path), *expect)
        if data is None:
            raise UntrustedFileError(f"{Path(path).name} was changed by a job: not read")
        return cls.from_npz(io.BytesIO(data))

    @classmethod
    def from_npz(cls, fh: BinaryIO) -> TaskArrays:
        with np.load(fh, allow_pickle=False) as z:
            return cls(
                X_train=z["X_train"],
                y_train=z["y_train"],
                X_test=z["X_test"],
                y_test=z["y_test"],
                train_index=z["train_index"],
                test_index=z["test_index"],
                feature_names=[str(n) for n in z["feature_names"]],
                scale_stats={k: z[k] for k in STAT_KEYS if k in z.files},
            )


def evaluate_outcome(outcome: JobOutcome, data: TaskArrays, scaler: Scaling | None = None) -> dict[str, Any]:
    """The model check's fields of the job record; may turn an ok outcome into invalid_model. A
    model fitted on standardised data (``scaler``) is first mapped back to the task's units.
    Accuracy is not computed here: the declared metrics are (srtui.results.metrics.accuracy, written
    by srtui.runs.sink when the job ends), one definition each."""
    fields: dict[str, Any] = {}
    if outcome.status != "ok" or outcome.train_pred is None or outcome.test_pred is None:
        return fields
    if len(outcome.train_pred) != len(data.y_train) or len(outcome.test_pred) != len(data.y_test):
        outcome.status, outcome.error = "error", "predictions do not match the data's row counts"
        return fields
    if outcome.model is None:
        return fields  # black-box: scored on accuracy only

    from srtui.engine.expression import ExpressionError, fidelity_check, parse_expression

    try:
        if outcome.dialect == "srbench":
            folder_in_task_units(outcome, data.feature_names)
        if scaler is not None:
            outcome.pareto = pareto_in_original_units(outcome.pareto, data.feature_names, outcome.dialect, scaler)
            printed = outcome.model
            outcome.model = scaler.model_in_original_units(printed, data.feature_names, outcome.dialect or "python")
            outcome.notes = {**(outcome.notes or {}), "model_as_printed": printed}
        parsed = parse_expression(outcome.model, data.feature_names, outcome.dialect)
    except ExpressionError as exc:
        outcome.status = "invalid_model"
        fields["model_error"] = str(exc)
        outcome.error = f"model rejected by the safe parser: {exc}"
        return fields
    if parsed.too_large:
        fields["model_too_large"] = 1
        return fields
    fields["model_too_large"] = 0
    check = fidelity_check(parsed, data.X_test, data.y_test, outcome.test_pred)
    fields["r2_test_expr"] = check.get("r2_test_expr")
    fields["fidelity_r2"] = check.get("fidelity_r2")
    fields["max_abs_diff"] = check.get("max_abs_diff")
    fields["expression_mismatch"] = int(bool(check.get("expression_mismatch")))
    return fields


def folder_in_task_units(outcome: JobOutcome, features: list[str]) -> None:
    """An SRBench folder's or file's model and front, printed over its own standardised (or
    numbered) features, composed with the scalers its worker recorded (``srbench_eval``): over
    the task's raw features, the printed model kept as ``model_as_printed``. Unreadable
    statistics are an ExpressionError (the job is invalid_model), never a guess."""
    from srtui.engine.expression import ExpressionError
    from srtui.engine.methods import srbench_eval as ev
    from srtui.engine.process.job_worker import PARETO_EXPRESSION_CAP
    from srtui.engine.spec import MODEL_CAP

    notes = dict(outcome.notes or {})
    try:
        stats = ev.ScalerStats.from_note(notes.get(ev.SCALERS_NOTE), len(features))
    except (ValueError, TypeError, IndexError) as exc:
        raise ExpressionError(str(exc)) from None
    printed = outcome.model or ""
    outcome.model = ev.composed(printed, features, stats, MODEL_CAP)
    if outcome.model != printed:
        notes["model_as_printed"] = printed
    outcome.notes = notes
    pareto = []
    for point in outcome.pareto:
        text = point.get("expression")
        if isinstance(text, str) and not point.get("too_large"):
            mapped = ev.composed(text, features, stats, PARETO_EXPRESSION_CAP)
            if mapped != text:
                point = {**point, "expression": mapped, "expression_as_printed": text}
        pareto.append(point)
    outcome.pareto = pareto


def pareto_in_original_units(
    pareto: list[dict[str, Any]], features: list[str], dialect: str | None, scaler: Scaling
) -> list[dict[str, Any]]:
    """The method's alternative models mapped back to the task's units like its final model.

    Each mapped point keeps the string the method printed under ``expression_as_printed``. A
    point that cannot be mapped (cut at the size cap, or unreadable) keeps its printed string,
    marked ``units: "standardised"`` with the reason, so it is never shown as if in raw units.
    Its ``loss`` stays the method's own figure, on the standardised target."""
    out = []
    for point in pareto:
        printed = point.get("expression")
        if not isinstance(printed, str) or point.get("too_large"):
            why = "cut at the size cap: not mapped" if point.get("too_large") else "no expression"
            out.append({**point, "units": "standardised", "units_error": why})
            continue
        try:
            mapped = scaler.model_in_original_units(printed, features, dialect or "python")
        except (ValueError, RecursionError) as exc:  # ExpressionError is a ValueError; one point, not the job
            out.append({**point, "units": "standardised", "units_error": str(exc)[:200]})
            continue
        out.append({**point, "expression": mapped, "expression_as_printed": printed})
    return out


#: what the check of one model may take, in its own process (the limits table of docs/running.md)
CHECK_TIMEOUT_S = 60.0
CHECK_MEM_MB = 3000
#: the outcome's fields the check may change (scaling maps the model back, a bad model is invalid)
_CHANGED = ("status", "error", "model", "notes", "pareto")
_arrays: dict[str, TaskArrays] = {}


def check_in_process(
    payload: tuple[JobOutcome, str, str | None, tuple[int, str] | None],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pool's side: ``evaluate_outcome`` of one outcome; returns its fields and the changes.
    The task's file is read only if it holds the bytes the driver wrote (``expect``)."""
    outcome, data_path, option, expect = payload
    key = f"{data_path}\0{expect}"
    data = _arrays.get(key)
    if data is None:
        _arrays.clear()  # one task at a time is the common case: keep the process small
        data = _arrays[key] = TaskArrays.load(data_path, expect)
    from srtui.engine.scaling import data_arrays

    scaler = Scaling.for_job(option, data_arrays(data)) if option else None
    fields = evaluate_outcome(outcome, data, scaler)
    return fields, {name: getattr(outcome, name) for name in _CHANGED}


#: what the checkers' processes import before their first model (the forkserver's preload);
#: the first makes that server leave at once when its driver has gone
CHECK_PRELOAD = (
    "srtui.engine.forkserver_exit",
    "srtui.engine.outcome_check",
    "srtui.engine.expression",
    "srtui.engine.expression.warm",
)


def start_checkers() -> None:
    """Start the checkers' forkserver (a fresh interpreter importing the parser: about 1.5 s of
    CPU) in the background while the run is planned and its launchers start, so the run's
    first results do not wait for it (every ``Checker`` of this process forks from it)."""
    import multiprocessing as mp

    from srtui.engine import private

    if "forkserver" not in mp.get_all_start_methods():
        return
    private.multiprocessing_sockets_in_private()  # before the thread: its socket's path must fit AF_UNIX

    def start() -> None:
        from multiprocessing import forkserver

        try:
            mp.get_context("forkserver").set_forkserver_preload(list(CHECK_PRELOAD))
            forkserver.ensure_running()
        except Exception:  # noqa: BLE001 - the first check starts it, as without this
            pass

    threading.Thread(target=start, name="srtui-checker-warm", daemon=True).start()


class Checker:
    """Checks outcomes: the prediction counts in the calling thread, the model's
    parse and fidelity in one ``TimedPool`` process per calling thread (a slot), under
    ``CHECK_TIMEOUT_S`` and ``CHECK_MEM_MB``."""

    def __init__(self, timeout: float | None = None) -> None:
        # SRTUI_CHECK_TIMEOUT_S: for tests of the deadline, which no real model reaches quickly
        self.timeout = timeout or float(os.environ.get("SRTUI_CHECK_TIMEOUT_S") or CHECK_TIMEOUT_S)
        self._local = threading.local()
        self._pools: list[Any] = []
        self._lock = threading.Lock()

    def _pool(self) -> Any:
        pool = getattr(self._local, "pool", None)
        if pool is None:
            from srtui.engine.pool import TimedPool

            pool = TimedPool(
                check_in_process,
                workers=1,
                timeout=self.timeout,
                mem_mb=CHECK_MEM_MB,
                preload=CHECK_PRELOAD,
            )
            self._local.pool = pool
            with self._lock:
                self._pools.append(pool)
        return pool

    def score(self, outcome: JobOutcome, data: TaskArrays, data_path: str, option: str | None) -> dict[str, Any]:
        if outcome.status != "ok" or outcome.model is None:
            return evaluate_outcome(outcome, data)  # the prediction counts only: no model string to read
        from srtui.engine.task_files import TASK_FILES

        light = replace(outcome, stdout=b"", stderr=b"")
        known = TASK_FILES.true_bytes(data_path)
        expect = (len(known[0]), known[1]) if known else None
        [result] = list(self._pool().run([(outcome.job_id, (light, data_path, option, expect))]))
        if result.status == "ok":
            fields, changed = result.value
            for name, value in changed.items():
                setattr(outcome, name, value)
            return dict(fields)
        bare = replace(outcome, model=None)
        fields = evaluate_outcome(bare, data)
        outcome.status, outcome.error = bare.status, bare.error
        why = f"after {self.timeout:g} s" if result.status == "timeout" else str(result.value)[:200]
        fields["model_error"] = f"the model check was stopped ({result.status} {why}): not read"
        return fields

    def close(self) -> None:
        with self._lock:
            pools, self._pools = self._pools, []
        for pool in pools:
            pool.close()
