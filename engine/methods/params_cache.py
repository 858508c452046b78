"""Estimator signatures kept by the installed library's fingerprint, so a plan reads each once.

Checking a suite's ``[params.NAME]`` reads the keyword parameters of the method's estimator in a
process of its own (``srtui.engine.methods.base.estimator_params``): importing scikit-learn or pyoperon
there costs one to two seconds of CPU, paid by every ``--dry-run`` and ``run`` before this cache
(issue 56). What the child read is kept in srtui's private folder (``srtui.engine.kept``: this
user's alone, so nobody else can plant a parameter list) under a fingerprint of what the answer
depends on: the class, this interpreter, and the installed files of the library (the package's
``__init__`` and the class's module, found without importing them; a reinstall or an upgrade
writes them anew). Any change is a new key.
"""

from __future__ import annotations

import sys

from srtui.engine import kept

#: bump when what the child reports changes: every older entry is then a miss
READER_VERSION = "1"


def fingerprint(target: str) -> str:
    """The key of ``module:Class``'s parameter list as this interpreter's installed files give it."""
    module = target.partition(":")[0]
    return kept.code_key(f"srtui-params {READER_VERSION}", [module], target, sys.executable, sys.version)


def cached(key: str) -> list[str] | None:
    """The parameter names kept under ``key``, or None when there are none or they are unusable."""
    names = kept.cached("params", key)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return names


def keep(key: str, names: list[str]) -> None:
    """Keep ``names`` under ``key`` (``srtui.engine.kept``: a failure to write is no error of the plan)."""
    kept.keep("params", key, names)
