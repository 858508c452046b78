"""The `srtui` command line. Each command group lives in its own module; this one wires them.

Imports stay lazy: a command's module loads only when that command runs (``srtui.cli.lazy``), and
the commands' own imports stay inside them, so `srtui --help` and `srtui status` answer fast.
"""

from __future__ import annotations

import errno
import io
import os
import sys

import typer

from srtui import warnings_policy
from srtui.cli import coercion, tui_cmd
from srtui.cli.common import plain_help_types
from srtui.cli.lazy import LazyGroup

warnings_policy.install()  # before any command imports a dependency that warns about itself

app = typer.Typer(
    cls=LazyGroup,
    name="srtui",
    help="Benchmark symbolic regression: run suites under hard limits, score, explore, review.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# bare `srtui` opens the app; every command is listed by LazyGroup and loaded when it runs
app.callback(invoke_without_command=True)(tui_cmd.default)
plain_help_types()
coercion.install()  # no pydantic for an option left out or a plain text value


def main(argv: list[str] | None = None) -> None:
    """Console entry point: one clear line and a non-zero exit for every expected failure.

    Every command lets an srtui.engine.errors.SrtuiError through to here, where it is printed the
    same way (``srtui: error: MESSAGE``) with its exit code (2; 130 for a run interrupted
    before it began). stdout and stderr show control characters visibly (srtui.engine.textsafe).
    A stdout that cannot be written ends any command with exit 1 (``STDOUT_GONE``), quietly when
    its reader went away (``| head``), in one line when it was closed (``>&-``)."""
    from srtui.engine.errors import SrtuiError
    from srtui.engine.textsafe import SafeStream

    one_blas_thread()
    # interpreters get -P when a command is resolved to run (srtui.cli.lazy): not for --help
    if not isinstance(sys.stdout, SafeStream):
        if sys.stdout is None:  # started with fd 1 closed
            sys.stdout = _closed_stdout()
        sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        try:
            app(args=optional_values(sys.argv[1:] if argv is None else argv), prog_name="srtui", standalone_mode=True)
        except SystemExit:
            sys.stdout.flush()  # now, not as the interpreter exits, where a broken pipe is a traceback
            raise
    except StdoutClosed:
        _one_line("standard output is closed: nothing could be written", STDOUT_GONE)
    except BrokenPipeError:  # the reader went away (typer ends its own so, exit 1, quietly)
        _quiet_stdout()
        sys.exit(STDOUT_GONE)
    except SrtuiError as exc:
        _one_line(exc.one_line(), exc.exit_code)
    except OSError as exc:  # read-only or full file system, permissions
        where = f": {str(exc.filename)[:300]}" if exc.filename else ""  # a crafted name may be megabytes
        _one_line(f"{exc.strerror or exc}{where}")
    except Exception as exc:
        _database_error(exc)
        raise


#: the exit status of a command whose stdout cannot be written (closed, or its reader gone):
#: 1, as typer ends one whose reader went away (EPIPE) while it runs
STDOUT_GONE = 1


class StdoutClosed(OSError):
    """A write to a stdout that was closed when srtui started."""


class _ClosedStdout(io.TextIOBase):
    """sys.stdout when srtui started with fd 1 closed: every write fails (``StdoutClosed``)."""

    encoding = "utf-8"
    errors = "strict"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise StdoutClosed(errno.EBADF, "standard output is closed")


def _closed_stdout() -> io.TextIOBase:
    """A stdout that fails every write; fd 1 gets /dev/null, so no file srtui opens later takes
    fd 1 (a database a child process would then print into)."""
    _quiet_stdout()
    return _ClosedStdout()


def _quiet_stdout() -> None:
    """fd 1 points at /dev/null: what is still buffered for it has nowhere left to fail."""
    null = os.open(os.devnull, os.O_WRONLY)
    if null != 1:
        os.dup2(null, 1)
        os.close(null)


#: the threading knobs of the BLAS libraries numpy and scipy load
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def one_blas_thread() -> None:
    """The driver's BLAS runs on one thread (unless the user says otherwise): its numpy work is
    small (tasks built, splits, scores), and OpenBLAS's second thread spins after each call, which
    cost a dry run 0.1 s of CPU (a third of it) on two cores, taken from the jobs. Jobs set their
    own (srtui.engine.process.worker_env: one thread each)."""
    for var in BLAS_THREADS:
        os.environ.setdefault(var, "1")


def _database_error(exc: Exception) -> None:
    """One line for a store's sqlite3.DatabaseError (corrupted, truncated, not a database, disk
    I/O, or a statement results/store/guard.py stopped: Ctrl-C, its budget); else nothing.
    sqlite3 is looked up, not imported: a command that opened no store raised none of its errors."""
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is None or not isinstance(exc, sqlite3.DatabaseError):
        return
    from srtui.results.store.guard import why_stopped

    stopped = why_stopped(exc)
    if stopped is not None:
        _one_line(stopped, 130)
    _one_line(f"the workspace's srtui.db is not a usable srtui database: {exc}")


#: options whose value may be left out (typer has no optional values): the value they then take
OPTIONAL_VALUES = {"--published": "default"}


def optional_values(args: list[str]) -> list[str]:
    """``--published`` alone (last, or before another option) means ``--published default``."""
    out = []
    for i, arg in enumerate(args):
        out.append(arg)
        if arg in OPTIONAL_VALUES and (i + 1 == len(args) or args[i + 1].startswith("-")):
            out.append(OPTIONAL_VALUES[arg])
    return out


#: an error line's ceiling: whatever bad value a message quotes, the line stays readable
ERROR_MAX_CHARS = 1000


def _one_line(message: str, code: int = 2) -> None:
    line = " ".join(message.split())
    if len(line) > ERROR_MAX_CHARS:
        line = line[: ERROR_MAX_CHARS - 3] + "..."
    print(f"srtui: error: {line}", file=sys.stderr)
    sys.exit(code)
