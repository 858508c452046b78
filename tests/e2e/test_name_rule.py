"""Issue 27: one name rule (srtui.engine.names) wherever a name enters: suite files, `tasks add`, review
sessions and experts; file names made from a name stay inside their folder; JSON to stdout is one
document."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import srtui

from srtui.engine.names import check_name, file_in, is_name

BAD = ["evil\x1b]0;PWN\x07", "../../../tmp/PWNED", "..", "a/b", "trailing\n", "nul\x00", "x" * 65, "", " lead"]


@pytest.mark.parametrize("name", BAD)
def test_the_rule_refuses(name: str) -> None:
    assert not is_name(name)
    with pytest.raises(ValueError) as err:
        check_name(name, "suite name")
    assert "\n" not in str(err.value) and "\x1b" not in str(err.value) and len(str(err.value)) < 200


def test_the_rule_accepts_srtuis_names() -> None:
    for name in ("smoke", "srbench2021-bb-1028-swd", "demo-realworld", "a.b_c-1", "x" * 64):
        assert is_name(name)


def test_suite_names_are_refused_in_one_line(tmp_path: Path) -> None:
    for toml_name in ("evil\\u001b]0;PWN\\u0007", "../../../tmp/PWNED", "..", "trail\\n", "nul\\u0000"):
        suite = tmp_path / "s.toml"
        suite.write_text(f'name = "{toml_name}"\ntasks = ["smoke-linear"]\nmethods = ["probe-noop"]\nseeds = [1]\n')
        proc = srtui("run", str(suite), "--workspace", str(tmp_path / "ws"))
        assert proc.returncode == 2, (toml_name, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "\x1b" not in proc.stderr and "must be" in proc.stderr
    # a name with '/' is a path: from a cwd where it exists it is read as a suite file (and is no
    # TOML), elsewhere it is no suite; either way one line, never a built-in suite's path
    proc = srtui("run", "../../etc/passwd", "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "unknown suite" in proc.stderr or "not valid TOML" in proc.stderr, proc.stderr


def test_task_names_with_a_trailing_newline_are_refused(tmp_path: Path) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("a,y\n" + "".join(f"{i},{2 * i}\n" for i in range(20)))
    proc = srtui("tasks", "add", "mine\n", str(csv), "--target", "y", "--workspace", str(tmp_path / "ws"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr


def test_review_session_names_with_a_trailing_newline_are_refused(tmp_path: Path) -> None:
    from srtui.engine.workspace import Workspace
    from srtui.results.store.store import Store
    from srtui.reviews.storage import ReviewError
    from srtui.reviews.storage import check_name as review_check

    Store(Workspace(tmp_path / "ws").ensure(), create=True).close()
    with pytest.raises(ReviewError):
        review_check("session\n", "session")
    with pytest.raises(ReviewError):
        review_check("expert\n", "expert")


def test_file_names_from_names_stay_inside_their_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert file_in(out, "leaderboard-x/../../../tmp/PWNED.csv").parent == out
    assert file_in(out, "..").parent == out
    out.mkdir()
    (out / "leaderboard-x.csv").symlink_to(tmp_path / "elsewhere.csv")
    with pytest.raises(ValueError):
        file_in(out, "leaderboard-x.csv")


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_export_of_a_stored_hostile_suite_name_writes_inside_out_and_json_is_one_document(
    workspace: Path, tmp_path: Path
) -> None:
    srtui(
        "run", "smoke", "--methods", "probe-noop", "--tasks", "smoke-linear", "--workspace", str(workspace), check=True
    )
    with sqlite3.connect(workspace / "srtui.db") as conn:  # as an older srtui stored it
        conn.execute("UPDATE jobs SET suite = 'x/../../../PWNED'")
        conn.execute("UPDATE runs SET suite = 'x/../../../PWNED'")
    out = tmp_path / "deep" / "out"
    proc = srtui("export", "--out", str(out), "--workspace", str(workspace))
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob("PWNED*")) and not list((tmp_path / "deep").glob("PWNED*"))
    suite = tmp_path / "mine.toml"
    suite.write_text(
        'name = "mine"\ntasks = ["smoke-linear", "smoke-interaction"]\nmethods = ["probe-noop", "linear"]\n'
        'seeds = [1]\nscoring = "wilcoxon"\n'
    )
    srtui("run", str(suite), "--workspace", str(workspace), check=True)
    doc = json.loads(srtui("export", "--format", "json", "--workspace", str(workspace), check=True).stdout)
    assert "runs" in doc and any(k.startswith("leaderboard-") for k in doc)
