"""Every command the README and the docs show is run, so the docs cannot rot.

The convention (docs/index.md, "How the pages are tested"): shell commands are shown in ```console
blocks, each command after a ``$ `` prompt (a trailing backslash continues it), followed by what it
prints when that matters. Every command runs with bash, in the page's own temporary directory,
which holds a copy of a workspace where ``srtui run smoke`` has run (``./srtui-workspace``) and a
``.venv/bin`` with this srtui, so ``.venv/bin/srtui`` and ``source .venv/bin/activate`` work as
written. Each command must exit 0; the lines shown under it must appear in its output in order
(whitespace collapsed, ``...`` skips anything). A ```toml block whose first line is ``# NAME.toml``
is written to that file first, so a page can show a suite and then run it. A block right after
``<!-- not-run: REASON -->`` is skipped with that reason (downloads, sshd, clusters, a terminal).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SRTUI = Path(sys.executable).with_name("srtui")
#: a line that shows an srtui command: it must be in a tested form (a console prompt)
SHOWS_SRTUI = re.compile(r"^\s*(\$\s+)?(\.venv/bin/)?srtui(\s|$)")
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.+?)\s*-->")
#: the skipped blocks of all pages together: keep this list short
MAX_NOT_RUN = 14


@dataclass
class Block:
    info: str
    lines: list[str]
    line_no: int
    not_run: str | None = None


@dataclass
class Command:
    text: str
    expected: list[str] = field(default_factory=list)


def blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with the not-run reason of the line before each."""
    found: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)(`{3,})(.*)$", lines[i])
        if not opening:
            i += 1
            continue
        fence, info = opening.group(2), opening.group(3).strip()
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        reason = NOT_RUN.search(previous)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j])
            j += 1
        found.append(Block(info, body, i + 1, reason.group(1) if reason else None))
        i = j + 1
    return found


def commands(block: Block) -> list[Command]:
    """The ``$`` commands of a console block, each with the output lines shown under it."""
    found: list[Command] = []
    pending = ""
    for line in block.lines:
        if pending:
            pending += "\n" + line
        elif line.startswith("$ "):
            pending = line[2:]
        elif found and line.strip():
            found[-1].expected.append(line)
            continue
        else:
            continue
        if not pending.endswith("\\"):
            found.append(Command(pending))
            pending = ""
    return found


def loosely_in(expected: list[str], output: str) -> str | None:
    """None when every expected line's pieces (split at ``...``) appear in order, else the first
    piece missing."""
    flat = " ".join(output.split())
    at = 0
    for line in expected:
        for piece in (" ".join(p.split()) for p in line.split("...")):
            if not piece:
                continue
            found = flat.find(piece, at)
            if found < 0:
                return piece
            at = found + len(piece)
    return None


@dataclass
class Tour:
    """The README's tour, run once in a fresh directory: the workspace it leaves, or its failure."""

    workspace: Path
    failure: str | None


@pytest.fixture(scope="session")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Tour:
    """The README's commands from an empty directory (its first, ``srtui run smoke``, runs the
    suite); every other page starts from a copy of the workspace they leave."""
    home = tmp_path_factory.mktemp("docs-tour")
    try:
        run_page(ROOT / "README.md", home)
    except AssertionError as exc:
        return Tour(home / "srtui-workspace", str(exc))
    return Tour(home / "srtui-workspace", None)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SRTUI_") or k == "SRTUI_DATA_DIR"}
    env.update(
        PATH=f"{home / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),
        COLUMNS="80",
        NO_COLOR="1",
    )
    return env


def _venv(home: Path) -> None:
    """``.venv/bin`` of the page's directory: this srtui and Python, and an activate script."""
    bin_dir = home / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "srtui").symlink_to(SRTUI)
    (bin_dir / "python").symlink_to(sys.executable)
    activate = bin_dir / "activate"
    activate.write_text(f'export PATH="{bin_dir}:$PATH"\n')
    activate.chmod(activate.stat().st_mode | stat.S_IXUSR)


def test_every_shown_srtui_command_is_in_a_tested_form() -> None:
    """No page shows an srtui command outside a console prompt (it would not be run), and the
    list of skipped blocks stays short."""
    skipped: list[str] = []
    for page in PAGES:
        for block in blocks(page.read_text(encoding="utf-8")):
            where = f"{page.relative_to(ROOT)}:{block.line_no}"
            if block.not_run:
                skipped.append(f"{where}: {block.not_run}")
                continue
            if block.info in ("bash", "sh", "shell"):
                pytest.fail(f"{where}: a {block.info} block is never run: show it as console with $ prompts")
            if block.info != "console":
                bad = [line for line in block.lines if SHOWS_SRTUI.match(line)]
                assert not bad, f"{where}: srtui command outside a console block: {bad[0]}"
            else:
                bare = [line for line in block.lines if SHOWS_SRTUI.match(line) and not line.startswith("$")]
                assert not bare, f"{where}: srtui command without a $ prompt: {bare[0]}"
    assert len(skipped) <= MAX_NOT_RUN, "\n".join(skipped)


def test_readme_opens_with_what_srtui_is_and_the_two_setup_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# srtui"
    first = text.split("\n\n")[1].replace("\n", " ")  # the paragraph under the title: one sentence
    assert first.startswith("srtui is ") and first.endswith(".") and first.count(". ") == 0
    setup = blocks(text)[0]
    assert setup.lines == [
        "python3.11 -m venv .venv && .venv/bin/pip install -c constraints.txt . && .venv/bin/srtui run smoke",
        'python3.11 -m venv .venv && .venv/bin/pip install -c constraints.txt ".[test]" '
        "&& .venv/bin/python -m pytest -q",
    ]
    assert len(lines) <= 200, "the README is a front door: the depth goes into docs/"


def run_page(page: Path, home: Path) -> None:
    """Each command of the page, in order, in ``home``; AssertionError on the first that fails."""
    _venv(home)
    env = _env(home)
    for block in blocks(page.read_text(encoding="utf-8")):
        if block.not_run:
            continue
        name = re.match(r"#\s*(\S+\.toml)\s*$", block.lines[0]) if block.info == "toml" and block.lines else None
        if name:
            (home / name.group(1)).write_text("\n".join(block.lines) + "\n", encoding="utf-8")
        if block.info != "console":
            continue
        for command in commands(block):
            done = subprocess.run(
                ["bash", "-c", command.text], cwd=home, env=env, capture_output=True, text=True, timeout=600
            )
            where = f"{page.relative_to(ROOT)}:{block.line_no}: $ {command.text}"
            out = done.stdout[-3000:] + done.stderr[-3000:]
            assert done.returncode == 0, f"{where}\nexit {done.returncode}\n{out}"
            missing = loosely_in(command.expected, done.stdout + done.stderr)
            assert missing is None, f"{where}\nnot in its output: {missing!r}\n{out}"


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
def test_readme_tour_runs(tour: Tour) -> None:
    """The README's commands, from a directory without a workspace."""
    if tour.failure:
        pytest.fail(tour.failure, pytrace=False)


#: pages whose commands take long (a Dask cluster started, figures and reports drawn, scores of
#: every profile, a method fitted): in the slow step of `.ci/run --full`, so the default run keeps the
#: README's tour and the pages a newcomer reads next (this module near 2 minutes there)
SLOW_PAGES = {"dask.md", "figures.md", "scoring.md", "published.md", "methods.md", "metrics-in-the-run.md"}
DOCS = [pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.name in SLOW_PAGES else []) for p in PAGES[1:]]


@pytest.mark.slow  # over 8 s on a quiet machine: CI's slow step runs it
@pytest.mark.parametrize("page", DOCS)
def test_page_commands_run(page: Path, tour: Tour, tmp_path: Path) -> None:
    """Each command of the page, in order, in a copy of the workspace the README's tour left."""
    if not any(b.info == "console" and not b.not_run for b in blocks(page.read_text(encoding="utf-8"))):
        pytest.skip(f"{page.name} shows no command it runs")
    if tour.workspace.is_dir():
        shutil.copytree(tour.workspace, tmp_path / "srtui-workspace")
    run_page(page, tmp_path)
