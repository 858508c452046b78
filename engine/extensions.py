"""srtui's one way to find its extensions: a package whose every module declares something
(a task family, a scoring rule, a figure kind, an expression metric) with a decorator or a
``register`` call that runs when the module is imported. Adding one is adding a module; the
package is walked only when its registry is first read, so start-up pays for none of them."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def import_every_module(package: ModuleType) -> list[str]:
    """Import each module of ``package`` once, in name order (each registers what it declares);
    returns their full names."""
    names = [
        f"{package.__name__}.{m.name}" for m in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
    ]
    for name in names:
        importlib.import_module(name)
    return names
