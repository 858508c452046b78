"""What the start-a-run form offers: the built-in suites, the installed methods and a number of
parallel jobs. Imported when the form opens: the registry and the suites stay out of start-up."""

from __future__ import annotations


def suite_names() -> list[str]:
    """The built-in suites (``tasks/suites/*.toml``)."""
    from srtui.tasks.suites import builtin_suite_names

    return builtin_suite_names()


def default_jobs() -> int:
    """The form's number of parallel jobs to start from: one per usable core."""
    from srtui.engine.backends.base import usable_cores

    return len(usable_cores())


def installed_methods() -> list[str]:
    """The registry's methods whose packages are installed (a cheap check: no imports)."""
    from srtui.engine.methods import registry

    out = []
    for name in registry.names():
        try:
            if registry.load(name).availability()[0]:
                out.append(name)
        except registry.MethodError:
            continue
    return out
