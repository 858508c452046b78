"""What the expert's screen says about an item, in words a domain expert reads without a glossary.

Pure functions of the frozen item content (no Textual widgets except the plots they draw into),
so every sentence is tested on its own and none can name a method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text

from srtui.views import LIKERT

if TYPE_CHECKING:
    from textual_plotext import PlotextPlot
    from textual_plotext.plot import Plot


def _points(xs: list[Any], ys: list[Any]) -> tuple[list[Any], list[Any]]:
    keep = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    return [k[0] for k in keep], [k[1] for k in keep]


def headroom(plt: Plot, values: Sequence[float | None]) -> None:
    """Room above the data for the legend, which plotext draws in the top-left corner."""
    finite = [v for v in values if v is not None]
    if finite:
        lo, hi = min(finite), max(finite)
        plt.ylim(lo, hi + 0.4 * ((hi - lo) or abs(hi) or 1.0))


def task_text(content: dict[str, Any]) -> Text:
    """The task: its own description first, then data set, target and horizon as facts."""
    text = Text()
    description = (content.get("description") or "").strip()
    text.append(description or f"Data set {content.get('task')}", style="bold")
    facts = [f"data set {content.get('task')}"]
    if content.get("target"):
        facts.append(f"predicts {content['target']}")
    if content.get("horizon"):
        facts.append(f"{content['horizon']} ahead")
    text.append("\n" + " · ".join(facts), style="dim")
    return text


def figures_text(content: dict[str, Any]) -> Text:
    """The accuracy figures, one line each, each saying what its number means."""
    text = Text()
    r2 = content.get("r2_test")
    text.append("R² ", style="bold")
    if r2 is None:
        text.append("not available for this model")
    else:
        text.append(f"{r2:.3f}", style="bold")  # to 3 decimals, as the scoring rule ranks it
        text.append(" on held-out data (1 = perfect, 0 = no better than the average)")
    simplicity = content.get("simplicity")
    text.append("\nSimplicity ", style="bold")
    if content.get("black_box"):
        text.append("black-box: the formula is too long to show (1,000 characters or more)")
    elif simplicity is None:
        text.append("not available for this model")
    else:  # the score is of the simplified model (the rule's); the count is of the formula on screen
        text.append(f"{simplicity:g}", style="bold")
        # the scale, not a count: 5**-simplicity of a rounded score can exceed the parts on screen
        # (an expert read "about 6 parts when simplified: the formula shown has 5", #55)
        text.append(" (0 is simplest; -1 is about 5 parts once simplified, -2 about 25)")
        if content.get("size"):
            text.append(f": the formula shown has {content['size']} parts")
    if content.get("footnote"):
        text.append("\n" + content["footnote"], style="dim")
    return text


_AFTER = frozenset("+-*/^(,⋅·\u00d7÷")  # a one-line formula may break after these when no space is in reach
MORE = "→"  # ends a line cut inside a token: only a name wider than the box needs it


def wrap_model(text: str, width: int, plain: str = "") -> str:
    """A formula no wider than ``width``, with every token whole.

    A 2-D print (fractions, powers) is cut into blocks at columns blank on every line (between
    terms) and stacked, a blank line between blocks. Where a block has no blank column in reach (a
    fraction wider than the box, say), no column cut would keep both its lines and its numbers
    whole, so the one-line form ``plain`` is shown instead, wrapped between terms."""
    lines = text.split("\n")
    widest = max(len(line) for line in lines)
    if width < 8 or widest <= width:
        return text
    if len(lines) == 1:
        return wrap_line(text, width)
    blocks = _blocks(lines, widest, width)
    if blocks is None:
        return wrap_line(plain, width) if plain else wrap_line(" ".join(" ".join(lines).split()), width)
    return "\n\n".join(blocks)


def _blocks(lines: list[str], widest: int, width: int) -> list[str] | None:
    """The 2-D print cut at blank columns into blocks of at most ``width``; None if one can't be."""
    grid = [line.ljust(widest) for line in lines]
    blank = [all(row[c] == " " for row in grid) for c in range(widest)]
    blocks: list[str] = []
    start = 0
    while start < widest:
        end = widest
        if widest - start > width:
            cut = next((c for c in range(start + width, start + width // 3, -1) if blank[c]), None)
            if cut is None:
                return None
            end = cut
        blocks.append("\n".join(r for r in (row[start:end].rstrip() for row in grid) if r.strip()))
        start = end
        while start < widest and blank[start]:
            start += 1
    return blocks


def _after_operator(text: str, c: int) -> bool:
    """Whether a cut before ``text[c]`` follows an operator (not the sign of an exponent: 1e-5)."""
    if text[c - 1] not in _AFTER:
        return False
    return not (text[c - 1] in "+-" and c >= 3 and text[c - 2] in "eE" and text[c - 3].isdigit())


def wrap_line(line: str, width: int) -> str:
    """One line of formula on lines of at most ``width``: cut at the last space in reach (the
    operator stays at the end of the line), else just after an operator or an opening
    parenthesis; only a single token wider than the box is cut inside, marked with ``MORE``."""
    out: list[str] = []
    rest = line.strip()
    while len(rest) > width:
        reach = range(width, width // 3, -1)
        cut = next((c for c in reach if rest[c] == " "), None)
        if cut is None:
            cut = next((c for c in reach if _after_operator(rest, c)), None)
        if cut is None:
            out.append(rest[: width - 1] + MORE)
            rest = rest[width - 1 :]
            continue
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    out.append(rest)
    return "\n".join(out)


def likert_text(choice: int | None, saved: int | None) -> Text:
    """The rating bar: every choice with its words; the current choice reversed."""
    text = Text("Rate ", style="bold")
    for k, label in LIKERT.items():
        style = "reverse bold" if choice == k else "underline" if saved == k else ""
        text.append(f" {k} {label} ", style=style)
    return text


def draw_series(widget: PlotextPlot, content: dict[str, Any]) -> None:
    """Truth and prediction over time (or by row), one glyph per series so no colour is needed."""
    s = content.get("series") or {}
    y_train, y_test = s.get("y_train") or [], s.get("y_test") or []
    p_train, p_test = s.get("pred_train") or [], s.get("pred_test") or []
    dates = bool(s.get("dates_train")) and bool(s.get("dates_test"))
    x_train = s["dates_train"] if dates else list(range(len(y_train)))
    x_test = s["dates_test"] if dates else list(range(len(y_train), len(y_train) + len(y_test)))
    plt = widget.plt
    plt.clear_data()
    plt.clear_figure()
    if dates:
        plt.date_form("Y-m-d")
    for xs, ys, label, color, marker in (
        (x_train, y_train, "training truth", "blue", "•"),
        (x_test, y_test, "test truth", "green", "+"),
        (x_train + x_test, p_train + p_test, "model", "orange", "x"),
    ):
        px, py = _points(xs, ys)
        if px:
            plt.plot(px, py, label=label, color=color, marker=marker)
    headroom(plt, y_train + y_test + p_train + p_test)
    plt.title("truth and model over time" if dates else "truth and model by row")
    widget.refresh()


def draw_scatter(widget: PlotextPlot, content: dict[str, Any]) -> None:
    s = content.get("series") or {}
    y_train, y_test = s.get("y_train") or [], s.get("y_test") or []
    p_train, p_test = s.get("pred_train") or [], s.get("pred_test") or []
    plt = widget.plt
    plt.clear_data()
    plt.clear_figure()
    for ys, ps, label, color, marker in (
        (y_train, p_train, "training", "blue", "•"),
        (y_test, p_test, "test", "orange", "x"),
    ):
        px, py = _points(ys, ps)
        if px:
            plt.scatter(px, py, label=label, color=color, marker=marker)
    truth = [v for v in y_train + y_test if v is not None]
    if truth:
        lo, hi = min(truth), max(truth)
        plt.plot([lo, hi], [lo, hi], label="perfect", color="gray", marker="·")
    headroom(plt, y_train + y_test + p_train + p_test)
    plt.title("model against truth")
    plt.xlabel("true")
    plt.ylabel("model")
    widget.refresh()
