"""The probes as SRBench method folders, run under the folder fork server.

``--launcher folder`` is a test's third launcher (the fixture ``contained_launcher``):
``as_launched`` turns it into ``--launcher auto`` with every probe of the run replaced by a method
folder of the same name (``--method-dir``, named by ``--methods``) whose ``est`` runs that probe's
fit. The folder imports scikit-learn, numpy and srtui's engine only, so ``auto`` forks it from the
folder fork server (srtui.engine.process.fork_plan), and the probe's hostile code (escapes, fork
bombs, memory hogs, crashes, sleeps) runs in a forked folder job: what the containment, limit
and escapee tests check under the exec and fork launchers is checked there too.
"""

from __future__ import annotations

import re
import tempfile
import tomllib
from pathlib import Path

REGRESSOR = """
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from srtui.engine.methods import registry
from srtui.engine.spec import FitBudget

NAME = {name!r}


class Probe(RegressorMixin, BaseEstimator):
    def __init__(self, random_state=0):
        self.random_state = random_state

    def set_params(self, **params):
        self.extra_ = {{**getattr(self, "extra_", {{}}), **params}}
        return self

    def fit(self, X, y):
        X = np.asarray(X)
        names = [f"x{{i}}" for i in range(X.shape[1])]
        method = registry.load(NAME)
        extra = getattr(self, "extra_", {{}})
        self.fitted_ = method.fit(X, np.asarray(y), names, int(self.random_state), FitBudget(1e6), extra)
        return self

    def predict(self, X):
        return self.fitted_.predict(np.asarray(X))


est = Probe()


def model(est, X=None):
    return est.fitted_.expression
"""


def probe_folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "regressor.py").write_text(REGRESSOR.format(name=name))
    return folder


def as_launched(args: list[str] | tuple[str, ...]) -> list[str]:
    """``args`` of `srtui ...` with ``--launcher folder`` made real (see the module's docstring)."""
    args = list(args)
    if "--launcher" not in args or args[args.index("--launcher") + 1] != "folder":
        return args
    args[args.index("--launcher") + 1] = "auto"
    if "--methods" in args:
        methods = args[args.index("--methods") + 1].split(",")
    else:
        suite = next(Path(a) for a in args if a.endswith(".toml") and Path(a).is_file())
        methods = list(tomllib.loads(suite.read_text())["methods"])
        args += ["--methods", ",".join(methods)]
    # beside the test's workspace (its tmp_path, removed by pytest), else a temporary directory
    given = args[args.index("--workspace") + 1] if "--workspace" in args else None
    root = Path(given).parent / "probe-folders" if given else Path(tempfile.mkdtemp(prefix="srtui-probe-folders-"))
    for name in methods:
        if re.fullmatch(r"probe-[a-z]+", name):
            args += ["--method-dir", str(probe_folder(root, name))]
    return args
