"""Issue #55: `srtui report --published` says which rows are published (source column, mark,
citation) as `srtui score --published` does, and draws no figure whose rule has no published
source (the refusal of `srtui plot --published`), through the real CLI."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import shared_data_dir, srtui


class _Tables(HTMLParser):
    """The page's tables (header and rows of cell texts), its notes and its skipped figures."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.notes: list[str] = []
        self._cell: list[str] | None = None
        self._note = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "p" and "note" in (dict(attrs).get("class") or ""):
            self._note, self._text = True, []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "p" and self._note:
            self.notes.append("".join(self._text))
            self._note = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._note:
            self._text.append(data)


@pytest.fixture(scope="module")
def mine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """linear and ridge on 2 of SRBench 2021's black-box datasets, scored by srbench2021."""
    data = shared_data_dir()
    if data is None or not (data / "srbench2022" / "qualification").is_dir():
        pytest.skip("shared data srbench2022/qualification not found (SRTUI_DATA_DIR)")
    root = tmp_path_factory.mktemp("mine")
    stems = ("556_analcatdata_apnea2", "579_fri_c0_250_5")
    tasks = [f"srbench2022-qual-{s.replace('_', '-').lower()}" for s in stems]
    suite = root / "mine.toml"
    suite.write_text(
        f'name = "mine"\ntasks = {json.dumps(tasks)}\nmethods = ["linear", "ridge"]\nseeds = [1]\n'
        'scoring = "srbench2021"\n'
    )
    srtui("run", str(suite), "-w", str(root / "ws"), env={"SRTUI_DATA_DIR": str(data)}, check=True)
    return root / "ws"


def _fills(svg: str) -> set[str]:
    return {c.lower() for c in re.findall(r"(?:fill|stroke)[:=]\s*\"?(#[0-9A-Fa-f]{6})", svg)}


@pytest.mark.slow  # real runs and every figure drawn twice: over 8 s on a quiet machine
def test_a_method_keeps_its_look_beside_the_published_ones(mine: Path, tmp_path: Path) -> None:
    """Plain and --published, every figure the rule draws: linear and ridge in their own colours
    (the workspace's first two), the published methods in the muted family only."""
    from srtui.results.outputs.figures.style import MUTED, PALETTE

    ws = str(mine)
    for kind in ("pareto", "points"):
        plain, beside = tmp_path / f"{kind}.svg", tmp_path / f"{kind}-published.svg"
        srtui("plot", kind, "--suite", "mine", "--out", str(plain), "-w", ws, check=True)
        srtui("plot", kind, "--suite", "mine", "--published", "--out", str(beside), "-w", ws, check=True)
        mine_colours = {PALETTE[0].lower(), PALETTE[1].lower()}  # linear, ridge: the sorted workspace methods
        palette = {c.lower() for c in PALETTE}
        a, b = _fills(plain.read_text()), _fills(beside.read_text())
        assert mine_colours <= a and mine_colours <= b, (kind, a, b)
        assert (b & palette) == (a & palette), kind  # no published method takes a workspace colour
        assert b & {c.lower() for c in MUTED}, kind  # the published ones are drawn, muted


@pytest.mark.slow  # a real run and a report of every figure: over 8 s on a quiet machine
def test_report_published_marks_and_cites_the_published_rows(mine: Path, tmp_path: Path) -> None:
    workspace = mine
    html = tmp_path / "r.html"
    srtui("report", "--published", "--out", str(html), "-w", str(workspace), check=True)
    page = html.read_text()
    parsed = _Tables()
    parsed.feed(page)
    board = parsed.tables[0]
    head, rows = board[0], board[1:]
    assert "source" in head, head
    src, method = head.index("source"), head.index("method")
    published = [r for r in rows if r[src].startswith("published:")]
    assert len(published) == 21 and all(r[method].endswith("\u2020") for r in published)
    ours = [r for r in rows if r[src] == "this workspace"]
    assert sorted(r[method] for r in ours) == ["linear", "ridge"]
    cite = [n for n in parsed.notes if n.startswith("\u2020 published: SRBench 2021: not run here;")]
    assert len(cite) == 1 and "La Cava" in cite[0], parsed.notes
    # cd and wilcoxon rank over methods the publication gives no value: refused, as `plot` does
    for kind, rule in (("cd", "friedman"), ("wilcoxon", "wilcoxon")):
        why = f"figure &#39;{kind}&#39; draws rule &#39;{rule}&#39;, which has no published source (--published)"
        assert f"<strong>{kind}</strong>: {why}" in page
    assert 'data-kind="cd"' not in page and 'data-kind="wilcoxon"' not in page
    # a legend says "hollow" only in a figure that draws hollow (published) points
    for kind, svg in re.findall(r'<figure class="figure" data-kind="([^"]+)">(.*?)</figure>', page, re.S):
        if "): hollow" in svg:
            assert 'fill="none"' in svg or "fill: none" in svg, kind
