"""PMLB files read as SRBench 2021's ``read_file`` read them with pandas 1.x (``--protocol
srbench2021``), bit for bit, and kept apart from the exact parse.

The expected values come from pandas 1.5.3 itself: the hand-picked strings below (its float64 as
hex), and the shared PMLB files' sha256 fingerprints in ``tests/data/pandas1_parse.json``
(``tests/data/pandas1_golden.py``, run in the ``srbench2021`` environment).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_data_dir

from srtui.engine.protocols import PARSE_EXACT, PARSE_PANDAS1, applied, get_protocol, protocol_key
from srtui.tasks.catalogue import TaskContext, get_task
from srtui.tasks.loaders.pandas1 import pandas1_floats, pandas1_frame
from srtui.tasks.loaders.pmlb_blackbox import task_name

GOLDEN = json.loads((Path(__file__).resolve().parent.parent / "data" / "pandas1_parse.json").read_text())

#: string -> pandas 1.5.3's float64 (``read_csv(..., sep=None, engine='python')``), as float.hex
PANDAS_153 = {
    "-0.9355247616767883": "-0x1.defd1a0000001p-1",  # 579_fri_c0_250_5, oz3 of row 2
    "0.02249941974878311": "0x1.70a167ffffffdp-6",  # 579_fri_c0_250_5, oz2 of row 3
    "0.01909378657975432": "0x1.38d5253aada50p-6",  # 17 digits with the leading zeros: one truncated
    "0.00000574911862527601": "0x1.81d11b1c8a354p-18",
    "9381911178441606810235.74": "0x1.fc982c2d4bfe6p+72",  # integer digits beyond 17 raise the exponent
    "132.66712768426846563": "0x1.095591c28460ep+7",
    "1.931833843392918e90": "0x1.e58ed31431253p+299",
    "-892.3043483954862057": "-0x1.be26f4e3629a1p+9",
    "2.5e-320": "0x0.00000000013c4p-1022",  # subnormal: two divisions
    "0.1": "0x1.999999999999ap-4",
    "-1.2921181917190552": "-0x1.4ac8420000000p+0",
}


def test_hand_picked_strings_parse_as_pandas_1_5_3_did() -> None:
    cells = np.array(list(PANDAS_153), dtype=object)
    values, read = pandas1_floats(cells)
    assert read.all()
    assert [v.hex() for v in values] == list(PANDAS_153.values())
    # eight of them are not the correctly rounded value: the rule is not today's parse
    assert sum(float(s) != v for s, v in zip(PANDAS_153, values)) == 8


def test_a_column_is_converted_whole_or_left_to_the_exact_parse() -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "decimals": ["0.01909378657975432", "1", None],
            "integers": ["12345678901234567", "-3", "7"],
            "text": ["0.01909378657975432", "abc", "1"],
        }
    )
    out = pandas1_frame(frame)
    assert out["decimals"].dtype == np.float64
    assert out["decimals"][0].hex() == PANDAS_153["0.01909378657975432"] and np.isnan(out["decimals"][2])
    # pandas 1.x kept an integer column as int64 and a column with text as text: exact later
    assert list(out["integers"]) == list(frame["integers"]) and list(out["text"]) == list(frame["text"])


def _sha(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()


def _table(name: str, parse: str, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """The task's X and y in the file's row order, built by srtui's loader under ``parse``."""
    shared = shared_data_dir()
    assert shared is not None
    task = get_task(task_name(name), TaskContext(cache_dir=cache, data_dir=shared, parse=parse))
    n = len(task.y_train) + len(task.y_test)
    X, y = np.empty((n, task.n_features)), np.empty(n)
    X[task.train_index], X[task.test_index] = task.X_train, task.X_test
    y[task.train_index], y[task.test_index] = task.y_train, task.y_test
    return X, y


SMALL = [n for n, d in sorted(GOLDEN["datasets"].items()) if d["shape"][0] * d["shape"][1] < 60_000]
LARGE = [n for n in sorted(GOLDEN["datasets"]) if n not in SMALL]


def _check_golden(name: str, tmp_path: Path) -> None:
    shared = shared_data_dir()
    if shared is None or not (shared / "srbench2022" / "qualification" / f"{name}.tsv.gz").is_file():
        pytest.skip("needs the shared PMLB files (../shared/data/srbench2022/qualification or $SRTUI_DATA_DIR)")
    golden = GOLDEN["datasets"][name]
    X, y = _table(name, PARSE_PANDAS1, tmp_path)
    assert list(X.shape) == golden["shape"]
    assert (_sha(X), _sha(y)) == (golden["X_sha256"], golden["y_sha256"])
    X_exact, y_exact = _table(name, PARSE_EXACT, tmp_path)
    assert int((X_exact != X).sum() + (y_exact != y).sum()) == golden["cells_not_exact"]


@pytest.mark.parametrize("name", SMALL)
def test_the_shared_pmlb_files_read_as_pandas_1_5_3_read_them(name: str, tmp_path: Path) -> None:
    _check_golden(name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", LARGE)
def test_the_large_shared_pmlb_files_read_as_pandas_1_5_3_read_them(name: str, tmp_path: Path) -> None:
    _check_golden(name, tmp_path)


def test_each_parse_has_its_own_cached_task_and_fingerprint(tmp_path: Path) -> None:
    name = "579_fri_c0_250_5"
    shared = shared_data_dir()
    if shared is None or not (shared / "srbench2022" / "qualification" / f"{name}.tsv.gz").is_file():
        pytest.skip("needs the shared PMLB files")

    def build(parse: str) -> str:
        return get_task(task_name(name), TaskContext(cache_dir=tmp_path, data_dir=shared, parse=parse)).fingerprint()

    first = {parse: build(parse) for parse in (PARSE_EXACT, PARSE_PANDAS1)}
    assert first[PARSE_EXACT] != first[PARSE_PANDAS1]
    cached = sorted(p.name for p in (tmp_path / "tasks").iterdir())
    assert cached == [f"{task_name(name)}-v1+{PARSE_PANDAS1}.npz", f"{task_name(name)}-v1.npz"]
    assert {parse: build(parse) for parse in (PARSE_PANDAS1, PARSE_EXACT)} == first  # from the cache, unmixed


def test_srbench2021_records_its_parse_and_an_older_job_does_not_sit_beside_it() -> None:
    reference, exact = get_protocol("srbench2021"), get_protocol("srbench2021-exact")
    assert (reference.data_parse, exact.data_parse) == (PARSE_PANDAS1, PARSE_EXACT)
    assert get_protocol("srbench2021-corrected").data_parse == PARSE_EXACT
    assert get_protocol("srbench2025").data_parse == PARSE_EXACT
    new = applied(reference, "xy", False, 3, 860)
    assert new["data"] == "PMLB files as pandas 1.x parsed them"
    assert "data" not in applied(get_protocol("srbench2025"), "xy", False, 3, 860)  # records (ids) unchanged
    older = {k: v for k, v in new.items() if k != "data"}  # an srbench2021 job recorded before the parse
    assert protocol_key(older) != protocol_key(new)
    assert protocol_key(older).endswith("data exact values)")
