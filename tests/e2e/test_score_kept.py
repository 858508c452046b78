"""`srtui score`'s kept answers (issue 56, srtui/cli/score_cache.py): the real CLI in subprocesses.

A second identical `srtui score` over unchanged runs prints the same bytes without importing
pandas; another option, format, or a store with one more run is scored afresh; an entry of the
workspace's cache that srtui did not write whole (cut short, edited, planted, a link) is never
printed. What a call imported is read from its driver's sys.modules (never from seconds).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import srtui
from test_lazy_imports import BOOT

SUITE = 'name = "kept"\ntasks = ["smoke-linear", "smoke-interaction"]\nmethods = ["linear"]\nseeds = [1, 2]\n'


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("score-kept")
    (root / "kept.toml").write_text(SUITE + 'scoring = "srbench2021"\n')
    srtui("run", str(root / "kept.toml"), "-w", str(root / "ws"), check=True, timeout=600)
    return root / "ws"


def score(
    ws: Path, *args: str, cwd: Path, env_extra: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """``srtui score ARGS -w ws`` (bytes out) and the modules its driver imported; steps on
    stderr never printed (their timing is the machine's, not the answer's)."""
    out_file = cwd / f"modules-{len(list(cwd.glob('modules-*')))}.txt"
    env = {k: v for k, v in os.environ.items() if k != "SRTUI_WORKSPACE"}
    env.update(SRTUI_MODULES_FILE=str(out_file), SRTUI_PROGRESS_AFTER_S="100000", **(env_extra or {}))
    argv = [sys.executable, "-c", BOOT, "score", *args, "-w", str(ws)]
    proc = subprocess.run(argv, capture_output=True, env=env, timeout=600, cwd=cwd)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc, set(out_file.read_text().split())


def entries(ws: Path) -> list[Path]:
    return sorted((ws / "cache" / "scores").glob("*.json"))


def test_a_second_score_prints_the_same_bytes_without_pandas(ws: Path, tmp_path: Path) -> None:
    for fmt in ("table", "json", "plot"):
        first, cold = score(ws, "srbench2021", "--format", fmt, "--option", "agg=median", cwd=tmp_path)
        second, kept = score(ws, "srbench2021", "--format", fmt, "--option", "agg=median", cwd=tmp_path)
        assert second.stdout == first.stdout and second.stderr == first.stderr
        assert len(first.stdout) > 200 and b"linear" in first.stdout
        assert "pandas" in cold and "srtui.cli.score_cache" in kept
        assert not {"pandas", "numpy", "srtui.results.scoring", "plotext"} & kept, fmt


def test_csv_files_beside_out_are_written_again_from_the_kept_answer(ws: Path, tmp_path: Path) -> None:
    out = tmp_path / "tables" / "board.csv"
    first, _ = score(ws, "srbench2021", "--format", "csv", "--out", str(out), cwd=tmp_path)
    written = {p.name: p.read_bytes() for p in out.parent.iterdir()}
    assert {"board.csv", "board.meta.json"} <= set(written) and len(written) >= 3
    for p in out.parent.iterdir():
        p.unlink()
    second, kept = score(ws, "srbench2021", "--format", "csv", "--out", str(out), cwd=tmp_path)
    assert {p.name: p.read_bytes() for p in out.parent.iterdir()} == written
    assert second.stderr == first.stderr and b"wrote" in second.stderr and "pandas" not in kept
    shown, _ = score(ws, "srbench2021", "--format", "md", cwd=tmp_path)  # kept on stdout, then asked into a file
    proc, kept = score(ws, "srbench2021", "--format", "md", "--out", str(tmp_path / "board.md"), cwd=tmp_path)
    assert (tmp_path / "board.md").read_bytes() == shown.stdout and proc.stdout == b"" and "pandas" not in kept


def test_another_option_format_or_run_is_scored_afresh(ws: Path, tmp_path: Path) -> None:
    base, _ = score(ws, "srbench2021", cwd=tmp_path)
    score(ws, "srbench2021", cwd=tmp_path)  # kept from here on
    for args in (["-o", "profile=corrected"], ["--format", "latex"], ["--raw"]):
        fresh, modules = score(ws, "srbench2021", *args, cwd=tmp_path)
        assert "pandas" in modules, args
        assert fresh.stdout != base.stdout or args == ["--raw"], args  # plain names: --raw changes no byte
    # a later -o wins: the same options in another order are another call, not the kept one
    one, _ = score(ws, "srbench2021", "-o", "profile=corrected", "-o", "profile=reference", cwd=tmp_path)
    other, modules = score(ws, "srbench2021", "-o", "profile=reference", "-o", "profile=corrected", cwd=tmp_path)
    assert "pandas" in modules and one.stdout != other.stdout
    suite = tmp_path / "kept.toml"  # one more run of the suite: the store changed, a fresh answer
    suite.write_text(SUITE.replace("[1, 2]", "[1, 2, 3]") + 'scoring = "srbench2021"\n')
    srtui("run", str(suite), "-w", str(ws), check=True, timeout=600)
    after, modules = score(ws, "srbench2021", cwd=tmp_path)
    assert "pandas" in modules and after.stdout != base.stdout
    again, modules = score(ws, "srbench2021", cwd=tmp_path)
    assert again.stdout == after.stdout and "pandas" not in modules


def test_a_figure_kept_for_one_terminal_size_is_not_printed_for_another(ws: Path, tmp_path: Path) -> None:
    """plotext fits the drawn figure to the terminal (COLUMNS, LINES or the terminal's own size):
    the figure kept for a narrow terminal is not the one a wide terminal gets (issue 56)."""
    args = ("srbench2021", "--format", "plot", "-o", "agg=mean")
    narrow = {"COLUMNS": "50", "LINES": "18"}
    wide = {"COLUMNS": "140", "LINES": "45"}
    small, _ = score(ws, *args, cwd=tmp_path, env_extra=narrow)
    score(ws, *args, cwd=tmp_path, env_extra=narrow)  # kept
    big, modules = score(ws, *args, cwd=tmp_path, env_extra=wide)
    assert "plotext" in modules and big.stdout != small.stdout
    assert max(len(line) for line in small.stdout.decode().splitlines()[2:-2]) <= 50
    again, modules = score(ws, *args, cwd=tmp_path, env_extra=narrow)
    assert again.stdout == small.stdout and "plotext" not in modules


def test_a_python_warning_is_shown_by_every_call(ws: Path, tmp_path: Path) -> None:
    """A warning Python prints while scoring (pandas' DtypeWarning of a CSV column of mixed
    types) is said by the second call too: that answer is computed every time (issue 56)."""
    n = 140_000  # the C parser reads in chunks: the types differ between the first and the last
    rows = "".join(f"t,m,{i},0.5,1,,,,,,,,{i}\n" for i in range(n - 10)) + "t,m,0,0.5,1,,,,,,,,x\n" * 10
    runs = tmp_path / "mixed.csv"
    runs.write_text("task,method,seed,r2_test,srbench2021.size,a,b,c,d,e,f,g,extra\n" + rows)
    first, _ = score(ws, "srbench2021", "--from-csv", str(runs), cwd=tmp_path)
    assert b"DtypeWarning" in first.stderr
    second, modules = score(ws, "srbench2021", "--from-csv", str(runs), cwd=tmp_path)
    assert second.stdout == first.stdout and b"DtypeWarning" in second.stderr and "pandas" in modules
    quiet = {"PYTHONWARNINGS": "ignore"}  # warnings hidden: kept, but only for calls that hide them
    hidden, _ = score(ws, "srbench2021", "--from-csv", str(runs), cwd=tmp_path, env_extra=quiet)
    assert b"DtypeWarning" not in hidden.stderr
    again, modules = score(ws, "srbench2021", "--from-csv", str(runs), cwd=tmp_path, env_extra=quiet)
    assert again.stdout == first.stdout and "pandas" not in modules
    shown, _ = score(ws, "srbench2021", "--from-csv", str(runs), cwd=tmp_path)
    assert b"DtypeWarning" in shown.stderr


def test_a_store_changed_with_its_time_set_back_is_scored_afresh(ws: Path, tmp_path: Path) -> None:
    """The store's owner (a colleague whose workspace this is, a restore with ``cp -p``) may
    write it in place and set its time back: the same path, size, inode and time, other runs.
    Its status change time is in the key: the answer is the new runs' (issue 56)."""
    import shutil
    import sqlite3

    copy = tmp_path / "ws"
    shutil.copytree(ws, copy, ignore=shutil.ignore_patterns("cache"))
    db = copy / "srtui.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before, _ = score(copy, "srbench2021", cwd=tmp_path)
    score(copy, "srbench2021", cwd=tmp_path)  # kept
    st = os.stat(db)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("UPDATE jobs SET r2_test = 0.123456")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(db)
    assert (after.st_size, after.st_ino, after.st_mtime_ns) == (st.st_size, st.st_ino, st.st_mtime_ns)
    proc, modules = score(copy, "srbench2021", cwd=tmp_path)
    assert "pandas" in modules and b"0.1235" in proc.stdout and proc.stdout != before.stdout


def test_an_entry_srtui_did_not_write_whole_is_never_printed(ws: Path, tmp_path: Path) -> None:
    args = ("srbench2021", "--format", "md", "-o", "agg=mean")
    before = set(entries(ws))
    truth, _ = score(ws, *args, cwd=tmp_path)
    [entry] = set(entries(ws)) - before
    good = json.loads(entry.read_bytes())
    assert good["body"]["docs"][0][1].encode() == truth.stdout
    forged = dict(good, body={"docs": [["stdout", "FORGED \x1b[31mboard\n"]], "stderr": []})
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(entry.read_bytes())
    plants = {
        "edited": json.dumps(forged).encode(),  # its tag is not of this text
        "cut short": entry.read_bytes()[:-40],
        "not JSON": b"\x00\xff garbage",
        "another key": json.dumps(dict(good, key="0" * 64)).encode(),
    }
    for why, data in plants.items():
        entry.write_bytes(data)
        proc, modules = score(ws, *args, cwd=tmp_path)
        assert proc.stdout == truth.stdout and "pandas" in modules, why
        assert json.loads(entry.read_bytes())["tag"] == good["tag"], why  # written whole again
    entry.unlink()
    entry.symlink_to(elsewhere)  # a link in the cache is not followed
    proc, modules = score(ws, *args, cwd=tmp_path)
    assert proc.stdout == truth.stdout and "pandas" in modules and not entry.is_symlink()
    proc, modules = score(ws, *args, cwd=tmp_path)
    assert proc.stdout == truth.stdout and "pandas" not in modules


def test_a_kept_figure_changed_in_the_cache_is_drawn_again(ws: Path, tmp_path: Path) -> None:
    """`srtui plot`'s kept figures share the key and the tagged entry (srtui/cli/output_cache.py):
    the figure file is reused only when it is the one its entry names."""
    env = {**os.environ, "SRTUI_PROGRESS_AFTER_S": "100000"}
    plot = ["plot", "pareto", "--width", "3.3", "-w", str(ws), "--out"]
    srtui(*plot, str(tmp_path / "a.svg"), env=env, check=True)
    [figure] = (ws / "cache" / "figures").glob("*.svg")
    figure.write_bytes(figure.read_bytes().replace(b"<svg", b"<svg data-planted='1'", 1))
    modules_file = tmp_path / "modules.txt"
    argv = [sys.executable, "-c", BOOT, *plot, str(tmp_path / "b.svg")]
    subprocess.run(argv, env={**env, "SRTUI_MODULES_FILE": str(modules_file)}, cwd=tmp_path, check=True)
    assert (tmp_path / "b.svg").read_bytes() == (tmp_path / "a.svg").read_bytes()
    assert "matplotlib" in modules_file.read_text().split()


def test_a_settings_file_matplotlib_reads_is_in_the_figure_key(ws: Path, tmp_path: Path) -> None:
    """matplotlib reads ``$XDG_CONFIG_HOME/matplotlib/matplotlibrc`` (or ``$MATPLOTLIBRC/matplotlibrc``):
    a figure kept without that file is not the one drawn with it (issue 56)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "MATPLOTLIBRC", "XDG_CONFIG_HOME")}
    env["SRTUI_PROGRESS_AFTER_S"] = "100000"
    plot = ["plot", "pareto", "--width", "3.1", "-w", str(ws), "--out"]
    srtui(*plot, str(tmp_path / "plain.svg"), env=env, check=True, cwd=tmp_path)
    (tmp_path / "xdg" / "matplotlib").mkdir(parents=True)
    (tmp_path / "xdg" / "matplotlib" / "matplotlibrc").write_text("axes.facecolor: ff0000\n")
    (tmp_path / "rcdir").mkdir()
    (tmp_path / "rcdir" / "matplotlibrc").write_text("axes.facecolor: 00ff00\n")
    for name, extra, colour in (("xdg", "XDG_CONFIG_HOME", b"ff0000"), ("rc", "MATPLOTLIBRC", b"00ff00")):
        folder = tmp_path / ("xdg" if name == "xdg" else "rcdir")
        srtui(*plot, str(tmp_path / f"{name}.svg"), env={**env, extra: str(folder)}, check=True, cwd=tmp_path)
        drawn = (tmp_path / f"{name}.svg").read_bytes()
        assert colour in drawn and b"ff0000" not in (tmp_path / "plain.svg").read_bytes(), name


def test_a_call_refused_afresh_is_refused_with_an_answer_kept(ws: Path, tmp_path: Path) -> None:
    """What the key does not hold is checked before a kept answer is used: `score --strict` (or
    --data-dir) without --published, and a figure of several protocols without --allow-mixed,
    fail with one line as they would afresh (issue 56)."""
    import shutil
    import sqlite3

    score(ws, "srbench2021", cwd=tmp_path)
    score(ws, "srbench2021", cwd=tmp_path)  # kept
    for extra in (["--strict"], ["--data-dir", str(tmp_path)]):
        proc = srtui("score", "srbench2021", *extra, "-w", str(ws))
        assert proc.returncode == 2 and "go with --published" in proc.stderr and proc.stdout == "", extra
    mixed = tmp_path / "mixed"
    shutil.copytree(ws, mixed, ignore=shutil.ignore_patterns("cache"))
    with contextlib.closing(sqlite3.connect(mixed / "srtui.db")) as conn:
        scaled = "replace(protocol, 'scaling\": \"none', 'scaling\": \"standard')"
        conn.execute(f"UPDATE jobs SET protocol = {scaled} WHERE seed = 1")
        conn.commit()
    plot = ["plot", "pareto", "-w", str(mixed), "--out"]
    assert srtui(*plot, str(tmp_path / "a.svg"), "--allow-mixed").returncode == 0
    refused = srtui(*plot, str(tmp_path / "b.svg"))
    assert refused.returncode == 2 and "--allow-mixed" in refused.stderr and not (tmp_path / "b.svg").exists()
