"""Make ``tests/data/pandas1_parse.json``: how SRBench 2021's ``read_file`` reads each shared PMLB
file with pandas 1.x, as sha256 fingerprints of its float64 bytes (no data is stored).

Run it with the Python of an environment holding pandas 1.x (here the ``srbench2021``
environment's pandas 1.5.3), never srtui's own::

    ~/.local/share/srtui/envs/srbench2021/bin/python tests/data/pandas1_golden.py \
        /work/shared/data/srbench2022/qualification > tests/data/pandas1_parse.json

It reads each file as 2021's ``experiment/read_file.py`` does (``pd.read_csv(filename, sep=None,
compression='gzip', engine='python')``, ``X = ....values.astype(float)``, ``y = [label].values``)
and, for the record, counts the cells that differ from the correctly rounded values
(``float_precision='round_trip'``, Python's own conversion).
"""

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def fingerprint(a: Any) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float64).tobytes()).hexdigest()


def main(folder: Path) -> None:
    datasets: dict[str, Any] = {}
    out = {"pandas": pd.__version__, "numpy": np.__version__, "datasets": datasets}
    for path in sorted(folder.glob("*.tsv.gz")):
        frame = pd.read_csv(str(path), sep=None, compression="gzip", engine="python")
        X = frame.drop("target", axis=1).values.astype(float)
        y = np.asarray(frame["target"].values)
        exact = pd.read_csv(str(path), sep="\t", compression="gzip", float_precision="round_trip")
        both = np.column_stack([X, y.astype(float)])
        differ = int((both != exact.drop("target", axis=1).assign(target=exact["target"]).values).sum())
        datasets[path.name[: -len(".tsv.gz")]] = {
            "shape": list(X.shape),
            "X_sha256": fingerprint(X),
            "y_sha256": fingerprint(y),
            "cells_not_exact": differ,
        }
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
