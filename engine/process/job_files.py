"""The files of a job's scratch folder, as the driver writes and reads them.

What the worker is given: ``data.npz`` (``job_view`` of the task's data: the arrays its method
may see, never y_test or the row numbers) and ``job.json`` (``job_config``: its spec, method and
seal). What it gives back: ``result.json`` and ``predictions.npz``, read by ``read_result`` as
untrusted files (srtui.engine.untrusted), within their caps. Steps of
srtui.engine.process.supervise's ``run_job``.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from srtui.engine import untrusted
from srtui.engine.process import phases, seal
from srtui.engine.process.job_io import JobOutcome, JobPayload
from srtui.engine.scaling import STAT_KEYS
from srtui.engine.textsafe import encodable


def job_config(payload: JobPayload, mode: str) -> dict[str, Any]:
    """What job.json tells the worker: its spec, data, method and seal."""
    ref = payload.method_ref or ""
    folders = [ref[len("srbench:") :]] if ref.startswith("srbench:") else []
    _limit_env, seal_limits = payload.spec.limits.crossing()  # the one derivation of what the job is told
    return {
        "spec": payload.spec.to_dict(),
        "data": "data.npz",
        "method_ref": payload.method_ref,
        "seal": seal.config(mode, seal_limits, payload.allow_network, folders),
    }


def task_bytes(payload: JobPayload) -> bytes:
    if payload.data_bytes is not None:
        return payload.data_bytes
    if not payload.data_path:
        raise ValueError("the job has no data")
    return untrusted.read_file(Path(payload.data_path), TASK_DATA_CAP)


#: the largest task data file a job reads when its bytes were not handed over (a file of the
#: workspace cache this driver did not write in this run)
TASK_DATA_CAP = 1 << 36


#: the arrays of a task's data file that a job's method may see (the scaling statistics are
#: those of its training rows); y_test, the row numbers and anything else stay with the driver
JOB_ARRAYS = ("X_train", "y_train", "X_test", "feature_names", *STAT_KEYS)


@functools.lru_cache(maxsize=8)
def job_view(data: bytes) -> bytes:
    """A task's data file as a job gets it: only ``JOB_ARRAYS`` (the same bytes for the same
    task, computed once per task and driver)."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        names = {n.removesuffix(".npy"): n for n in src.namelist()}
        for key in ("X_train", "y_train", "X_test", "feature_names"):
            if key not in names:
                raise KeyError(f"the task's data has no {key}")
        for key in JOB_ARRAYS:
            if key in names:
                info = zipfile.ZipInfo(names[key], date_time=(1980, 1, 1, 0, 0, 0))
                dst.writestr(info, src.read(names[key]))
    return out.getvalue()


#: bytes of predictions.npz the driver reads at most (16M float64 rows per split)
PREDICTIONS_FILE_CAP = 256 << 20
#: objects/arrays and items of result.json the driver parses at most (the worker writes ~1000
#: Pareto points and a few notes): the file's byte cap alone would allow gigabytes of objects
MAX_JSON_CONTAINERS = 100_000
MAX_JSON_ITEMS = 4_000_000


def read_result(scratch: Path, outcome: JobOutcome) -> None:
    """Read the worker's files as data, as untrusted files (srtui.engine.untrusted: no link followed,
    no FIFO waited on, nothing read past its cap). Anything else than the worker's two regular
    files within their caps makes the job an error, never a crash or a hang of the driver."""
    from srtui.engine.process.job_worker import PARETO_CAP, RESULT_FILE_CAP
    from srtui.engine.spec import MODEL_CAP

    try:
        dir_fd = untrusted.open_dir(scratch)
        try:
            raw = untrusted.read_capped(dir_fd, "result.json", RESULT_FILE_CAP)
            preds = untrusted.read_capped(dir_fd, "predictions.npz", PREDICTIONS_FILE_CAP)
        finally:
            os.close(dir_fd)
        if raw.count(b"{") + raw.count(b"[") > MAX_JSON_CONTAINERS or raw.count(b",") > MAX_JSON_ITEMS:
            # a few MB of "{}," would be gigabytes of Python objects in the driver
            raise untrusted.UntrustedFileError("result.json holds too many values")
        result = json.loads(raw)
        vectors = untrusted.load_vectors(preds, ("train_pred", "test_pred"), PREDICTIONS_FILE_CAP)
    except (OSError, ValueError, RecursionError, untrusted.UntrustedFileError) as exc:
        outcome.status, outcome.error = "error", f"worker result unreadable: {visible_one_line(exc)}"
        return
    outcome.train_pred, outcome.test_pred = vectors["train_pred"], vectors["test_pred"]
    if not isinstance(result, dict):
        outcome.status, outcome.error = "error", "worker result unreadable: not a JSON object"
        return
    result = encodable(result)  # JSON may carry lone surrogates, which the store cannot encode
    model = result.get("model")
    outcome.model = model[:MODEL_CAP] if isinstance(model, str) else None
    outcome.dialect = str(result.get("dialect") or "python")[:40]
    phases.add_worker(result.get("timing"))
    outcome.pareto = [p for p in result.get("pareto") or [] if isinstance(p, dict)][:PARETO_CAP]
    notes = result.get("notes")
    outcome.notes = notes if isinstance(notes, dict) else {}
    fit_s = result.get("fit_s")
    if isinstance(fit_s, (int, float)):  # the method's own timer: kept as its figure, read by no rule
        outcome.notes["reported_fit_s"] = float(fit_s)


def visible_one_line(exc: BaseException, limit: int = 200) -> str:
    """An exception's message as one line of at most ``limit`` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
