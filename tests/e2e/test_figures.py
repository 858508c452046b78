"""`srtui plot`: every figure from a real smoke workspace (with a real two-expert review) and from
SRBench's published 2021 table, checked as files: the SVG parses, the PDF has its fonts embedded
and its page exactly --width wide, and the text of each names every method and its axes."""

from __future__ import annotations

import io
import re
import shutil
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import shared_data_dir, srtui

from srtui.engine.workspace import Workspace
from srtui.outputs import figure_data
from srtui.results.outputs.figures import FigureData, kinds, render
from srtui.results.store.store import Store

SMOKE_METHODS = ("linear", "poly2", "gplearn", "pyoperon", "ffx")
REVIEWED = ("gplearn", "pyoperon", "ffx")  # the review leaves the baselines out
#: words of each figure's axes (or title) that must be in its text
KINDS = kinds()
KIND_NAMES = tuple(KINDS)


@pytest.fixture(scope="module")
def smoke_ws(tmp_path_factory) -> Path:
    """`srtui run smoke`, then a review of it by two experts (headless raters), closed and unblinded."""
    ws = tmp_path_factory.mktemp("figures") / "ws"
    srtui("run", "smoke", "-w", str(ws), check=True, timeout=600)
    srtui(
        "review",
        "create",
        "panel",
        "--suite",
        "smoke",
        "--experts",
        "ann,bob",
        "--seed",
        "1",
        "-w",
        str(ws),
        check=True,
    )
    for expert in ("ann", "bob"):
        subprocess.run(
            [sys.executable, "-m", "srtui.reviews.headless", str(ws), "panel", expert, "--auto", "50"],
            check=True,
            capture_output=True,
            timeout=120,
        )
    srtui("review", "close", "panel", "-w", str(ws), check=True)
    srtui("review", "unblind", "panel", "-w", str(ws), check=True)
    return ws


@pytest.fixture(scope="module")
def published_2021() -> Path:
    """SRBench's docs/csv/blackbox_results.csv (branch master), as srtui ships it (results/scoring/published)."""
    import srtui.results.scoring.published

    path = Path(srtui.results.scoring.published.__file__).parent / "data" / "srbench2021-blackbox_results.csv"
    assert path.is_file()
    return path


def svg_texts(path: Path) -> str:
    """Every text of an SVG (it must parse as XML), joined by newlines."""
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    return "\n".join("".join(t.itertext()) for t in root.iter() if t.tag.endswith("text"))


def pdf_check(path: Path, width_in: float) -> str:
    """The PDF's header, embedded TrueType fonts and page width; returns its text."""
    from pypdf import PdfReader

    data = path.read_bytes()
    assert data.startswith(b"%PDF-")
    assert b"/FontFile2" in data and b"/Type3" not in data  # pdf.fonttype 42: TrueType, embedded
    reader = PdfReader(io.BytesIO(data))
    assert len(reader.pages) == 1
    assert abs(float(reader.pages[0].mediabox.width) - width_in * 72) < 0.5
    return reader.pages[0].extract_text()


def kind_args(kind: str) -> list[str]:
    return ["--review", "panel"] if KINDS[kind].rule == "(review)" else []


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_every_figure_from_the_smoke_workspace(smoke_ws, tmp_path, kind):
    svg = tmp_path / f"{kind}.svg"
    out = srtui("plot", kind, "--suite", "smoke", "--out", str(svg), *kind_args(kind), "-w", str(smoke_ws))
    assert out.returncode == 0, out.stderr
    assert f"wrote {svg}" in out.stderr
    text = svg_texts(svg)
    methods = REVIEWED if kind == "trust" else SMOKE_METHODS
    for name in (*methods, *KINDS[kind].axes):
        assert name in text, (kind, name)
    # the PDF in-process (the CLI's path is the SVG's above): one column wide, fonts embedded
    store = Store(Workspace(smoke_ws), readonly=True)
    try:
        data = figure_data(store, "smoke", review="panel" if kind == "trust" else None)
        words = " ".join(pdf_check(render(kind, data, tmp_path / f"{kind}.pdf", width=3.5), 3.5).split())
    finally:
        store.close()
    for name in methods:
        assert name in words, (kind, name)


@pytest.mark.slow  # 15-35 s: the default run stays well under 15 minutes; CI runs it in its slow step
def test_published_2021_table_every_figure_it_supports(published_2021, tmp_path):
    runs_methods = set(pd.read_csv(published_2021)["algorithm"])
    data_dir = shared_data_dir()
    for kind in KIND_NAMES:
        out_file = tmp_path / f"{kind}.svg"
        extra = []
        if kind == "trust":
            if data_dir is None or not (data_dir / "srbench2022" / "expert_scores.json").is_file():
                continue
            extra = ["--trust", str(data_dir / "srbench2022" / "expert_scores.json")]
        out = srtui("plot", kind, "--from-csv", str(published_2021), "--out", str(out_file), *extra)
        # the published table has no energy, and no ground truth (black-box): nothing to draw is
        # refused in one clear line, no file (docs/figures.md, "Nothing empty")
        refused = {"energy": "no run has an energy figure", "solution-rate": "no run has a symbolic solution figure"}
        if kind in refused:
            assert out.returncode == 2 and refused[kind] in out.stderr, (kind, out.stderr)
            assert out.stderr.count("\n") == 1 and not out_file.exists(), (kind, out.stderr)
            continue
        assert out.returncode == 0, (kind, out.stderr)
        text = svg_texts(out_file)
        if kind != "trust":
            missing = [m for m in runs_methods if m not in text]
            assert not missing, (kind, missing)
        for word in KINDS[kind].axes:
            if kind == "trust" and word in ("agreement", "Krippendorff"):
                continue
            assert word in text, (kind, word)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_published_2021_pareto_labels_front_0_with_operon_gp_gomea_and_dsr(published_2021, tmp_path):
    pdf = tmp_path / "pareto.pdf"
    out = srtui("plot", "pareto", "--from-csv", str(published_2021), "--out", str(pdf))
    assert out.returncode == 0, out.stderr
    words = " ".join(pdf_check(pdf, 7.0).split())
    assert "front 0: *Operon, *GP-GOMEA, *DSR" in words
    svg = tmp_path / "pareto.svg"
    srtui("plot", "pareto", "--from-csv", str(published_2021), "--out", str(svg), check=True)
    assert "front 0: *Operon, *GP-GOMEA, *DSR" in svg_texts(svg)
    png = tmp_path / "pareto.png"
    srtui("plot", "pareto", "--from-csv", str(published_2021), "--out", str(png), "--dpi", "100", check=True)
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_published_pareto_compares_like_for_like(smoke_ws, tmp_path):
    """`srtui plot pareto --suite smoke --published`: the same merge as `srtui score --published`;
    smoke ran none of SRBench 2021's datasets, so no published method is ranked beside its methods
    (over other datasets), and a warning says so."""
    svg = tmp_path / "pareto.svg"
    out = srtui("plot", "pareto", "--suite", "smoke", "--published", "--out", str(svg), "-w", str(smoke_ws))
    assert out.returncode == 0, out.stderr
    text = svg_texts(svg)
    assert "*Operon" not in text and "pyoperon" in text and "gplearn" in text
    assert "srtui: warning: datasets: none of this workspace's 2 task(s) is a published dataset" in out.stderr
    refused = srtui("plot", "cd", "--published", "--out", str(tmp_path / "cd.svg"), "-w", str(smoke_ws))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr


def _hostile_runs() -> pd.DataFrame:
    names = ["$\\frac{1}{2}$ and \\$", "<script>x</script>", "esc\x1b[31mred"]
    rows = [
        {
            "task": f"d{t}",
            "method": m,
            "seed": 0,
            "r2_test": 0.5 + 0.1 * i + 0.01 * t,
            "size": 10 + i + t,
            "wall_s": 1.0 + i,
        }
        for t in range(4)
        for i, m in enumerate(names)
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("kind", ["pareto", "points", "cd", "wilcoxon", "profiles"])
def test_untrusted_names_print_as_text_never_as_mathtext_or_markup(tmp_path, kind):
    from srtui.results.scoring.tables import normalise

    data = FigureData(runs=normalise(_hostile_runs()))
    text = svg_texts(render(kind, data, tmp_path / "f.svg"))
    assert "$\\frac{1}{2}$ and \\$" in text  # mathtext off: the dollars and backslashes print
    assert "<script>x</script>" in text  # XML-escaped in the file, the same text when parsed
    assert "esc\\x1b[31mred" in text and "\x1b" not in text
    pdf_text = pdf_check(render(kind, data, tmp_path / "f.pdf"), 7.0)
    assert "frac" in pdf_text


def test_style_file_applies_but_cannot_turn_on_tex_or_mathtext(smoke_ws, tmp_path):
    style = tmp_path / "paper.mplstyle"
    style.write_text("axes.facecolor: ff0000\ntext.usetex: True\ntext.parse_math: True\n")
    svg = tmp_path / "p.svg"
    out = srtui("plot", "profiles", "--suite", "smoke", "--style", str(style), "--out", str(svg), "-w", str(smoke_ws))
    assert out.returncode == 0, out.stderr
    assert "fill: #ff0000" in svg.read_text()


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_refusals_are_one_line(smoke_ws, tmp_path):
    cases = [
        (["plot", "pareto", "--suite", "smoke", "--out", str(tmp_path / "x.jpg")], "must end in .pdf, .svg or .png"),
        (["plot", "nope", "--suite", "smoke", "--out", str(tmp_path / "x.svg")], "unknown figure 'nope'"),
        (["plot", "pareto", "--suite", "smoke", "--out", str(tmp_path / "x.svg"), "--width", "0.5"], "--width must be"),
        (
            ["plot", "pareto", "--suite", "smoke", "--out", str(tmp_path / "x.svg"), "--style", str(tmp_path / "no")],
            "no such style file",
        ),
        (["plot", "trust", "--suite", "smoke", "--out", str(tmp_path / "x.svg")], "needs ratings"),
        (["plot", "pareto", "--suite", "nosuch", "--out", str(tmp_path / "x.svg")], "no runs of suite nosuch"),
        (
            ["plot", "pareto", "--suite", "smoke", "--out", str(tmp_path / "x.svg"), "-o", "bogus=1"],
            "has no option(s) bogus",
        ),
        (
            ["plot", "ranks", "--suite", "smoke", "--rule", "friedman", "--out", str(tmp_path / "x.svg")],
            "draws srbench2022",
        ),
        (["report", "--out", str(tmp_path / "r.pdf")], "must end in .html"),
        (["report", "--suite", "nosuch", "--out", str(tmp_path / "r.html")], "no runs of suite(s) nosuch"),
    ]
    for args, message in cases:
        out = srtui(*args, "-w", str(smoke_ws))
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr and out.stderr.count("\n") == 1, (args, out.stderr)
    assert not list(tmp_path.glob("x.*")) and not list(tmp_path.glob("r.*"))


def test_blinded_review_is_refused(smoke_ws, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(smoke_ws, ws)
    srtui("review", "create", "open-one", "--suite", "smoke", "-w", str(ws), check=True)
    out = srtui("plot", "trust", "--review", "open-one", "--out", str(tmp_path / "t.svg"), "-w", str(ws))
    assert out.returncode == 2 and "still blinded" in out.stderr


def test_list_describes_every_figure():
    out = srtui("plot", "--list", check=True)
    for kind in KIND_NAMES:
        assert f"\n{kind}" in "\n" + out.stdout
    assert "rule srbench2021" in out.stdout and "rule friedman" in out.stdout


def test_a_method_keeps_its_colour_in_every_figure(smoke_ws, tmp_path):
    """The same method gets the same colour in two figures of one workspace."""
    from srtui.results.outputs.figures.style import looks

    look = looks(SMOKE_METHODS)
    assert len({(v.color, v.marker) for v in look.values()}) == len(SMOKE_METHODS)
    for kind in ("profiles", "points"):
        svg = tmp_path / f"{kind}.svg"
        srtui("plot", kind, "--suite", "smoke", "--out", str(svg), "-w", str(smoke_ws), check=True)
        body = svg.read_text()
        for method in SMOKE_METHODS:
            assert look[method].color.lower() in body.lower(), (kind, method)


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_report_escapes_models_and_names(smoke_ws, tmp_path):
    """A model holding <script> and a method named with markup are text in the report."""
    ws = hostile_copy(smoke_ws, tmp_path / "ws")
    html = tmp_path / "report.html"
    out = srtui("report", "--out", str(html), "-w", str(ws))
    assert out.returncode == 0, out.stderr
    page = html.read_text()
    assert page.count("<script") == 1  # srtui's own sorting script, nothing else
    assert "&lt;script&gt;window.__srtui_pwned=1&lt;/script&gt;" in page
    assert "<img" not in page and "&lt;img src=x onerror=" in page
    # nothing to fetch: every src/href is a fragment or inline data (namespaces are no requests)
    assert re.findall(r"""(?:src|href)\s*=\s*["'](?!#|data:)""", page) == []
    assert page.count("<svg") >= 8 and "<math" in page


def hostile_copy(src: Path, dest: Path) -> Path:
    """A copy of the smoke workspace whose stored method output is hostile: linear's model is a
    script, poly2 is renamed to an <img> with an onerror handler."""
    shutil.copytree(src, dest)
    with sqlite3.connect(dest / "srtui.db") as conn:
        conn.execute("UPDATE jobs SET model = '<script>window.__srtui_pwned=1</script>' WHERE method = 'linear'")
        conn.execute(
            "UPDATE jobs SET method = ? WHERE method = 'poly2'",
            ('<img src=x onerror="window.__srtui_pwned=2">$x$',),
        )
    return dest


SORTS_NUMERIC = """(() => {
  const t = document.querySelector('.leaderboard table');
  const ths = [...t.querySelectorAll('th')];
  const i = ths.findIndex(h => h.dataset.numeric === '1');
  ths[i].click();
  const v = [...t.tBodies[0].rows].map(r => parseFloat(r.cells[i].dataset.key));
  return v.length > 1 && v.every((x, k) => k === 0 || v[k - 1] <= x);
})()"""


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.browser
def test_report_in_headless_chromium(smoke_ws, tmp_path):
    """The report opened offline in Debian's chromium: no console message, no page error, no
    request but its own file, all nine figures and every table there, the hostile model and
    method name shown as text and never run."""
    from browser import Browser, chromium

    if chromium() is None:
        pytest.skip("chromium is not installed (.ci/run installs Debian's package)")
    ws = hostile_copy(smoke_ws, tmp_path / "ws")
    html = tmp_path / "report.html"
    srtui("report", "--out", str(html), "-w", str(ws), check=True)
    browser = Browser()
    try:
        page = browser.open_page(
            html,
            {
                "kinds": "[...document.querySelectorAll('figure.figure')].map(f => f.dataset.kind)",
                "svgs": "document.querySelectorAll('figure.figure svg').length",
                "leaderboards": "document.querySelectorAll('.leaderboard table').length",
                "breakdowns": "document.querySelectorAll('.breakdown table').length",
                "tables": "document.querySelectorAll('table').length",
                "maths": "document.querySelectorAll('math').length",
                "pwned": "typeof window.__srtui_pwned",
                "model_text": "[...document.querySelectorAll('pre.model-text')].some("
                "e => e.textContent.includes('<script>window.__srtui_pwned=1</script>'))",
                "name_text": "document.body.textContent.includes('<img src=x onerror=')",
                "imgs": "document.querySelectorAll('img').length",
                "scripts": "document.querySelectorAll('script').length",
                "headings": "[...document.querySelectorAll('h3')].map(h => h.textContent)",
                "sorts": SORTS_NUMERIC,
            },
        )
    finally:
        browser.close()
    v = page.values
    assert v["kinds"] == list(KIND_NAMES) and v["svgs"] == len(KIND_NAMES)
    assert v["leaderboards"] == 1 and v["breakdowns"] >= 1 and v["tables"] >= 8
    assert v["maths"] >= 4  # best and median models of the SR methods as MathML
    assert v["pwned"] == "undefined" and v["model_text"] and v["name_text"]
    assert v["imgs"] == 0 and v["scripts"] == 1
    for heading in ("Leaderboard", "Figures", "Models", "Failures", "Expert review", "Run metadata"):
        assert heading in v["headings"]
    assert v["sorts"] is True
    assert [u for u in page.requests if not u.startswith(("file:", "data:"))] == []
    assert page.console == [] and page.errors == []
    assert [e for e in page.log if e.get("level") in ("error", "warning")] == []


def drawn_texts(fig) -> list[tuple[str, Any]]:
    """(text, bounding box in pixels) of every text the figure draws: tick labels of hidden axes
    and ticks outside the view (matplotlib keeps them, undrawn) left out."""
    import matplotlib.text
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    ticks, shown = set(), set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks |= {id(tick.label1), id(tick.label2)}
            if axis.get_visible():
                shown |= {id(lab) for tick in axis._update_ticks() for lab in (tick.label1, tick.label2)}
    out = []
    for text in fig.findobj(matplotlib.text.Text):
        if text.get_visible() and text.get_text().strip() and (id(text) not in ticks or id(text) in shown):
            out.append((text.get_text(), text.get_window_extent(renderer)))
    return out


def layout_problems(fig) -> list[str]:
    """Texts that overlap one another (by more than half a pixel each way) or leave the page."""
    import itertools

    texts, page = drawn_texts(fig), fig.bbox
    bad = [
        f"{a!r} overlaps {b!r}"
        for (a, ba), (b, bb) in itertools.combinations(texts, 2)
        if min(ba.x1, bb.x1) - max(ba.x0, bb.x0) > 0.5 and min(ba.y1, bb.y1) - max(ba.y0, bb.y0) > 0.5
    ]

    def outside(b) -> bool:
        return b.x0 < page.x0 - 0.5 or b.x1 > page.x1 + 0.5 or b.y0 < page.y0 - 0.5 or b.y1 > page.y1 + 0.5

    return bad + [f"{t!r} leaves the page" for t, b in texts if outside(b)]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize("width", [7.0, 3.5])
def test_no_figure_has_overlapping_text_or_text_off_the_page(smoke_ws, tmp_path, width):
    """Every figure kind, one and two columns wide: each text's bounding box, measured at draw
    time, overlaps no other and stays on the page; the SVG written parses with every text."""
    from srtui.results.outputs.figures import draw

    store = Store(Workspace(smoke_ws), readonly=True)
    try:
        for kind in KIND_NAMES:
            data = figure_data(store, "smoke", review="panel" if kind == "trust" else None)
            fig = draw(kind, data, width=width)
            assert layout_problems(fig) == [], (kind, width)
            svg = render(kind, data, tmp_path / f"{kind}.svg", width=width)
            assert svg_texts(svg)
    finally:
        store.close()


def test_score_plot_draws_every_listed_method_with_dots_and_one_label_a_line(smoke_ws):
    """`score --format plot` (docs/published.md): ● the workspace's methods, · the published ones,
    every method of the legend drawn (two in one cell share it), each axis label on its own line."""
    out = srtui("score", "srbench2021", "--suite", "smoke", "--published", "--format", "plot", "-w", str(smoke_ws))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    top = next(i for i, line in enumerate(lines) if line.lstrip().startswith("┌"))
    bottom = next(i for i, line in enumerate(lines) if line.lstrip().startswith("└"))
    plot = "\n".join(lines[top + 1 : bottom])
    assert lines[top - 1].startswith("y: ") and "x: " not in lines[top - 1]
    xlabel = lines[bottom + 2]
    assert xlabel.strip().startswith("x: ") and "y: " not in xlabel
    legend = [line.split() for line in lines if re.match(r"  [●·] \S  ", line)]
    # smoke ran no published dataset: like for like, no published method is drawn beside it
    assert {glyph for glyph, *_ in legend} == {"●"}
    for glyph, key, method, *_ in legend:
        assert re.search(rf"[●·]\w*{re.escape(key)}|{re.escape(key)}\w*[●·]", plot), (key, method)
        assert (glyph == "●") == (method in SMOKE_METHODS), method
