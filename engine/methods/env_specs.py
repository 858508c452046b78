"""Named Python environments built from pinned specs: ``srtui env create NAME`` builds one,
``srtui run --env NAME`` runs the method folders and files of a run in it (``--method-dir``).

Each spec pins what the publication's environment pinned (``pinned_in_source``) and records what
it left unpinned, with the version chosen here (the newest release of its time that still installs
on srtui's Python). SRBench 2021's ``environment.yml`` (commit 5667c85) pins ``scikit-learn=0.24.1``
and leaves numpy, scipy, pandas, xgboost and lightgbm unpinned. SRBench 2.0 (branch
``srbench_2025``, commit dc3f6da) gives each method an ``algorithms/NAME/`` folder over a shared
``base_environment.yml`` (scikit-learn, pandas, numpy, sympy, all unpinned); the ``srbench2025-*``
specs are those of its methods that install from PyPI alone (``engine/methods/env_specs_2025.py``).
Besides the method's packages, an environment holds what srtui's worker imports (numpy, psutil)
and what SRBench's method contracts use (pandas, for a folder's DataFrame): srtui's parser (and
sympy) never runs there, the driver reads the model string.
"""

from __future__ import annotations

from srtui.engine.methods.env_specs_2025 import SPECS_2025
from srtui.engine.methods.environments import Environment, EnvSpec, MethodEnvironmentError

#: scikit-learn 0.24.1 and the build tools it compiles with on today's Python (no wheel for 3.11)
_SKLEARN_024 = (
    (
        "numpy==1.23.5",
        "Cython==0.29.37",
        "scipy==1.9.3",
        "joblib==1.2.0",
        "threadpoolctl==3.1.0",
        "wheel",
        "psutil==5.9.8",  # what srtui's fork server and worker need besides numpy
    ),
    ("--no-build-isolation", "scikit-learn==0.24.1"),
)
#: what SRBench's method contracts use besides a method's packages: pandas, for a folder's
#: DataFrame, in srbench2021's version (1.5.3: the last pandas 1.x, with wheels for srtui's Python;
#: 2021's environment.yml left it unpinned). A layer of its own (Environment.contract): adding it to a
#: built sklearn-0.24.1 installs one wheel and compiles nothing
_CONTRACT_2021 = ("pandas==1.5.3",)
_CHECK_024 = "import numpy, sklearn.linear_model; assert sklearn.__version__ == '0.24.1', sklearn.__version__"


SPECS: dict[str, EnvSpec] = {
    "sklearn-0.24.1": EnvSpec(
        Environment("sklearn-0.24.1", _SKLEARN_024, _CHECK_024, _CONTRACT_2021),
        "SRBench 2021's environment.yml (scikit-learn=0.24.1): its KernelRidge, MLP, AdaBoost, RandomForest, "
        "SGD, LinearRegression and LassoLars baselines",
        (
            "numpy (1.23.5: what 0.24.1 is built against here, on srtui's Python)",
            "scipy (1.9.3)",
            "pandas (1.5.3, for a method folder's DataFrame)",
        ),
        ("scikit-learn=0.24.1",),
    ),
    "srbench2021": EnvSpec(
        Environment(
            "srbench2021",
            (*_SKLEARN_024, ("xgboost==1.3.3", "lightgbm==3.1.1", "pandas==1.5.3")),
            _CHECK_024 + "\nimport xgboost, lightgbm, pandas",
        ),
        "SRBench 2021's environment.yml: scikit-learn=0.24.1 and its XGB and LGBM baselines",
        (
            "numpy (1.23.5)",
            "scipy (1.9.3)",
            "xgboost (1.3.3, January 2021)",
            "lightgbm (3.1.1, December 2020)",
            "pandas (1.5.3)",
        ),
        ("scikit-learn=0.24.1",),
    ),
    **SPECS_2025,
}


def get(name: str) -> EnvSpec:
    """The spec named ``name``, or a one-line refusal listing the others."""
    if name not in SPECS:
        raise MethodEnvironmentError(f"unknown environment {name!r} (environments: {', '.join(SPECS)})")
    return SPECS[name]
