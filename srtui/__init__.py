"""srtui: benchmark symbolic regression from the terminal."""

from typing import Any


def __getattr__(name: str) -> Any:
    """``srtui.__version__``, read from the installed distribution on first use (importlib.metadata
    costs start-up time every command would pay)."""
    if name != "__version__":
        raise AttributeError(f"module 'srtui' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("srtui")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0.0.0+src"
