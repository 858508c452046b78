"""SRBench 2.0's methods that install from PyPI alone, as named environments
(``srtui env create srbench2025-NAME``; ``srtui run --env srbench2025-NAME --method-dir
path/to/srbench/experiment/methods/FOLDER``).

SRBench 2.0 (cavalab/srbench, branch ``srbench_2025``, commit dc3f6da) builds one conda
environment per method from ``base_environment.yml`` (scikit-learn, pandas, numpy, sympy, pyyaml:
all unpinned) and the method's ``algorithms/NAME/`` files (``environment.yml``,
``requirements.txt``, ``install.sh``). Each spec records what those files pin
(``pinned_in_source``, as written there) and what they leave unpinned, with the version pinned
here: releases that install as wheels on srtui's Python (3.11, the Python 2.0 pins for these)
beside numpy 1.26.4, the numpy 2.0 pins for every one of them.

Left out, each for a reason its ``algorithms/NAME/`` files give: pysr (Julia); ffx, bingo, bsr,
e2et, eql, feat, geneticengine, ps-tree, nesymres, tpsr, udsr (installed from git); afp/eplex,
brush, gpgomea, gpzgd (C++ compiled from git or a Makefile, conda's compilers); itea, tir
(Haskell); qlattice (``feyn==3.0.1``, ``numpy==1.22.3`` and Python 3.8: no wheel of either for
Python 3.11); rils-rols (``rils-rols==1.6.7`` is a source distribution only: C++ compiled at
install).
"""

from __future__ import annotations

from srtui.engine.methods.environments import Environment, EnvSpec

COMMIT_2025 = "dc3f6da"
#: base_environment.yml's unpinned packages and what numpy 1.26.4 pairs with here
_BASE: tuple[str, ...] = ("numpy==1.26.4", "scipy==1.14.1", "scikit-learn==1.5.2", "joblib==1.4.2")
_BASE += ("threadpoolctl==3.5.0", "pandas==2.2.3", "sympy==1.13.3", "pyyaml==6.0.2")
_BASE += ("psutil==5.9.8",)  # what srtui's worker imports besides numpy
_BASE_UNPINNED = (
    "scikit-learn (base_environment.yml; 1.5.2)",
    "pandas (base_environment.yml; 2.2.3)",
    "sympy (base_environment.yml; 1.13.3)",
    "pyyaml (base_environment.yml; 6.0.2)",
    "scipy (not named; 1.14.1)",
)
_NUMPY = "numpy==1.26.4"
_CHECK = "import numpy, sklearn, pandas, sympy\nassert numpy.__version__ == '1.26.4', numpy.__version__\n"


def _spec(
    name: str, extra: tuple[str, ...], check: str, folders: str, pinned: tuple[str, ...], unpinned: tuple[str, ...]
) -> EnvSpec:
    """``srbench2025-NAME``: the base packages, then the method's, one pip step each."""
    steps = (_BASE, extra) if extra else (_BASE,)
    source = (
        f"SRBench 2.0's algorithms/{name}/ (branch srbench_2025, {COMMIT_2025}) over base_environment.yml: "
        f"its {folders} method folder(s)"
    )
    env = Environment(f"srbench2025-{name}", steps, _CHECK + check)
    return EnvSpec(env, source, (*unpinned, *_BASE_UNPINNED), pinned)


SPECS_2025: dict[str, EnvSpec] = {
    s.environment.name: s
    for s in (
        _spec(
            "sklearn",
            (),
            "import sklearn.neural_network, sklearn.ensemble",
            "sklearn_adaboost, sklearn_lasso, sklearn_linear, sklearn_mlp, sklearn_randomforest, sklearn_ridge, "
            "sklearn_sgd",
            ("python=3.11", _NUMPY),
            (),
        ),
        _spec(
            "xgboost",
            ("xgboost-cpu==2.1.3",),
            "import xgboost",
            "xgboost",
            ("python=3.11", _NUMPY),
            ("xgboost (conda-forge's CPU build, unpinned; here PyPI's xgboost-cpu 2.1.3)",),
        ),
        _spec(
            "lightgbm",
            ("lightgbm==4.5.0",),
            "import lightgbm",
            "lightgbm",
            ("python=3.11", _NUMPY),
            (
                "lightgbm (install.sh: `pip install lightgbm --config-settings=cmake.define.USE_GPU=ON`, unpinned "
                "and built for a GPU; here PyPI's CPU wheel 4.5.0)",
            ),
        ),
        _spec(
            "gplearn",
            ("gplearn==0.4.2",),
            "import gplearn.genetic",
            "gplearn",
            ("python=3.11.10", _NUMPY),
            ("gplearn (requirements.txt; 0.4.2)",),
        ),
        _spec(
            "operon",
            ("pyoperon==0.5.0.dev1", "optuna==4.1.0"),
            "import pyoperon.sklearn, optuna",
            "operon",
            (_NUMPY, "pyoperon==0.5.0.dev1"),
            ("python (srtui's own)", "optuna (environment.yml; 4.1.0)"),
        ),
    )
}
