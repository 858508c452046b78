"""srtui: benchmark symbolic regression from the terminal."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("srtui")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+src"
