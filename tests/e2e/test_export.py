"""Export formats, the CLI commands, and metrics of a real workspace end to end."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from srtui.cli import app
from srtui.engine.errors import SrtuiError
from srtui.results.outputs.export import (
    latex_body,
    latex_escape,
    render_score,
    render_tables,
    srtui_version,
)
from srtui.results.scoring import score
from srtui.results.scoring.tables import normalise, read_runs_csv


def runs():
    return normalise(
        pd.DataFrame(
            [
                dict(task="t_1", method="a_b&c%", seed=0, r2_test=0.9, size=5),
                dict(task="t_1", method="linear", seed=0, r2_test=0.8, size=3),
                dict(task="t#2", method="a_b&c%", seed=0, r2_test=np.nan, size=5, status="timeout"),
                dict(task="t#2", method="linear", seed=0, r2_test=0.7, size=3),
            ]
        )
    )


def _unescaped_amps(line: str) -> int:
    return len(re.findall(r"(?<!\\)&", line))


def test_latex_table_body_is_balanced_and_escaped():
    text = render_score(score("srbench2022-qualification", runs()), "latex")
    assert text.startswith("% srbench2022-qualification (profile: reference; options: baseline=linear; srtui ")
    assert r"a\_b\&c\%" in text and "a_b&c%" not in text
    for body in re.findall(r"\\begin\{tabular\}\{([lr]+)\}\n(.*?)\\end\{tabular\}", text, re.S):
        ncol = len(body[0])
        rows = [ln for ln in body[1].splitlines() if not ln.startswith("\\") or ln.startswith("\\#")]
        assert rows, "a table with no rows"
        for ln in rows:
            assert ln.endswith(r" \\") and _unescaped_amps(ln) == ncol - 1, ln
        assert body[1].count(r"\toprule") == body[1].count(r"\bottomrule") == 1
    assert text.count(r"\begin{tabular}") == text.count(r"\end{tabular}") == 2
    assert latex_escape("x^2~{y}\\") == r"x\textasciicircum{}2\textasciitilde{}\{y\}\textbackslash{}"


def test_latex_missing_values_and_markdown():
    df = pd.DataFrame({"m": ["a|b"], "v": [np.nan], "ok": [True]})
    assert "a|b & -- & yes \\\\" in latex_body(df).replace("\\\\\n", "\\\\\n")
    md = render_tables({"t": df}, "md", "r", {"x": 1})
    assert "| a\\|b |  | yes |" in md and md.startswith("## r (options: x=1; srtui ")


def test_csv_roundtrip_and_json_metadata(tmp_path):
    s = score("srbench2021", runs(), profile="corrected")
    data = json.loads(render_score(s, "json"))
    assert data["rule"] == "srbench2021" and data["profile"] == "corrected"
    assert data["options"] == {"agg": "median", "size": "size"}
    assert data["srtui_version"] == srtui_version()
    path = tmp_path / "runs.csv"
    path.write_text(render_tables({"runs": runs()}, "csv", "runs"))
    back = read_runs_csv(path)
    assert back["method"].tolist() == runs()["method"].tolist()
    assert back["status"].tolist() == ["ok", "ok", "timeout", "ok"]


def test_cli_score_from_csv_and_errors(tmp_path):
    path = tmp_path / "srbench.csv"
    pd.DataFrame(
        {
            "dataset": ["d1", "d1", "d2", "d2"],
            "algorithm": ["linear", "x", "linear", "x"],
            "random_state": [0] * 4,
            "r2_test": [0.5, 0.9, 0.5, np.nan],
        }
    ).to_csv(path, index=False)
    runner = CliRunner()
    res = runner.invoke(
        app,
        ["score", "srbench2022-qualification", "--from-csv", str(path), "--format", "csv", "-o", "profile=corrected"],
    )
    assert res.exit_code == 0, res.output
    assert res.output.startswith(
        "# srbench2022-qualification (profile: corrected; options: baseline=linear, agg=median; srtui"
    )
    # x: rank 2 on d1 and the failed run ranks worst (1) on d2; linear 1 then 2: both 1.5, a tie
    # with the baseline qualifies; the failed run is counted
    assert "\nx,1.5,0.9,2,1,yes\n" in res.output and "\nlinear,1.5,0.5,2,0,baseline\n" in res.output
    bad = runner.invoke(app, ["score", "nope", "--from-csv", str(path)])
    assert isinstance(bad.exception, SrtuiError) and "unknown scoring rule" in str(bad.exception)
    missing = runner.invoke(app, ["score", "srbench2021", "--from-csv", str(tmp_path / "none.csv")])
    assert isinstance(missing.exception, SrtuiError) and "no such file" in str(missing.exception)


def test_cli_expr_reports_the_bingo_symbolic_solution():
    res = CliRunner().invoke(
        app, ["expr", "0.4*(x1 + 6.25)*(x2 - 3.75) + 10.37", "--truth", "0.4*x1*x2 - 1.5*x1 + 2.5*x2 + 1", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["features"] == ["x1", "x2"]
    rel = out["releases"]
    assert rel["srbench2021"]["symbolic_solution"] == 1  # no --r2-test: the 2021 R2 gate is not applied
    assert rel["srbench2022"]["symbolic_solution"] == 0 and rel["srbench2022"]["symbolic_solution:corrected"] == 1
    assert rel["srbench2025"]["size"] == 11
    bad = CliRunner().invoke(app, ["expr", "__import__('os')"])
    assert isinstance(bad.exception, SrtuiError)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_rescore_and_export_a_real_workspace(tmp_path):
    from conftest import srtui

    ws = tmp_path / "ws"
    srtui(
        "run",
        "smoke",
        "--methods",
        "linear",
        "--tasks",
        "smoke-linear,smoke-interaction",
        "--workspace",
        str(ws),
        check=True,
    )
    # `srtui run` computes the metrics at its end: nothing is missing afterwards
    again = srtui("rescore", "--workspace", str(ws), check=True)
    assert "metrics of 0 job(s)" in again.stdout
    forced = srtui("rescore", "--force", "--workspace", str(ws), "--timeout", "20", check=True)
    assert "metrics of 2 job(s), 2 model(s): 0 operation(s) computed" in forced.stdout  # all cached
    exp = srtui("export", "--format", "json", "--workspace", str(ws), check=True)
    text = exp.stdout
    assert '"rule": "runs"' in text and '"symbolic_solution"' in text
    table = srtui("score", "srbench2021", "--workspace", str(ws), "--format", "md", check=True)
    assert "## srbench2021" in table.stdout and "linear" in table.stdout
