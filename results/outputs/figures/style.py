"""How every figure looks: paper sizes, fonts that embed, one colour and one marker per method,
and labels made safe from untrusted names.

* Sizes: ``width`` in inches (3.5 one column, 7 two columns); fonts in points stay the same at
  either width, as a journal's do.
* Fonts: TrueType embedded in PDF and PS (``pdf.fonttype 42``), text kept as text in SVG.
* Methods: Okabe and Ito's colour-blind-safe palette, each colour with its own marker (and line
  dash; a terminal glyph for the app's plots, ``GLYPHS``), assigned in the sorted order of the
  workspace's methods (every suite's), then of any other (published, a CSV's): a method keeps
  its look in every figure, the report and the app.
  8 colours x 10 markers give 40 distinct pairs.
* Untrusted text (method, task and expert names): control characters shown (``srtui.engine.textsafe``),
  cut to a length, and never read as mathtext or TeX: ``text.parse_math`` and ``text.usetex``
  are forced off after any ``--style`` file.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from srtui.engine.errors import SrtuiError
from srtui.engine.textsafe import visible

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ONE_COLUMN, TWO_COLUMNS = 3.5, 7.0
FORMATS = ("pdf", "svg", "png")
#: Okabe & Ito (2008), ordered so neighbours differ in lightness too (readable in grey)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p")
#: each marker as one terminal character (the app's plots draw a method with its figures' look)
GLYPHS = dict(zip(MARKERS, ("●", "■", "▲", "◆", "▼", "✚", "✖", "◀", "▶", "★")))
DASHES = ("-", "--", "-.", ":")
#: published methods (``--published``): one muted family of greys apart from PALETTE, so a
#: workspace method never shares a colour with a published one and keeps its look beside them
MUTED = ("#5F5F5F", "#9A9A9A", "#7D776F", "#6F7A85", "#B3B3B3", "#4A4A4A")
LABEL_CHARS = 32

BASE_RC: dict[str, Any] = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 6.5,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.2,
    "lines.markersize": 5,
    "savefig.bbox": "standard",  # exactly --width wide: constrained layout keeps the labels inside
    "savefig.pad_inches": 0.02,
    "svg.hashsalt": "srtui",  # the same figure gives the same SVG bytes
    "svg.fonttype": "none",
}
#: applied last, over any --style file: these keep the output embeddable and untrusted names inert
FORCED_RC: dict[str, Any] = {
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "text.usetex": False,
    "text.parse_math": False,
}
_RC_LOCK = threading.Lock()  # rcParams are global: one figure at a time per process


class FigureError(SrtuiError, ValueError):
    """A figure that cannot be drawn from this input (missing data, a bad option); one line."""


@dataclass(frozen=True)
class Look:
    color: str
    marker: str
    dash: Any  # a matplotlib line style ("-", "--", "-.", ":")

    @property
    def glyph(self) -> str:
        """The marker as one terminal character (GLYPHS), for the app's plots and legends."""
        return GLYPHS.get(self.marker, self.marker)


def _sorted(methods: Iterable[str]) -> list[str]:
    return sorted({str(m) for m in methods}, key=lambda m: (m.lstrip("*").casefold(), m))


def looks(methods: Iterable[str], extra: Iterable[str] = (), published: Iterable[str] = ()) -> dict[str, Look]:
    """Each method's colour, marker and dash: a function of its name and the set ``methods`` (a
    workspace's methods, every suite's), by its place in their sorted list, so it is the same in
    every figure, the report and the app. ``extra`` names (a CSV's) come after them, so adding
    them changes no workspace method's look; ``published`` names take the MUTED family, by their
    place among themselves, so they change none of the others."""
    first = _sorted(methods)
    muted = [m for m in _sorted(published) if m not in set(first)]
    names = first + [m for m in _sorted(extra) if m not in set(first) | set(muted)]
    out = {m: look_at(i) for i, m in enumerate(names)}
    out.update({m: Look(MUTED[i % len(MUTED)], MARKERS[i % len(MARKERS)], ":") for i, m in enumerate(muted)})
    return out


def look_at(i: int) -> Look:
    """The ``i``-th look: 8 colours x 10 markers give 40 distinct pairs, then the dash changes."""
    return Look(PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)], DASHES[(i // len(PALETTE)) % len(DASHES)])


def label(text: Any, limit: int = LABEL_CHARS) -> str:
    """An untrusted name as a figure label: one line, control characters visible, at most
    ``limit`` characters. Mathtext and TeX are off (FORCED_RC), so ``$`` and ``\\`` print as such."""
    shown = visible(str(text), one_line=True)
    return shown if len(shown) <= limit else shown[: limit - 1] + "\u2026"


def rc_from_style(path: Path | None) -> dict[str, Any]:
    """The settings of a matplotlib style file (``--style``), checked: one line on error."""
    if path is None:
        return {}
    from matplotlib import rc_params_from_file

    if not Path(path).is_file():
        raise FigureError(f"no such style file: {path}")
    try:
        params = rc_params_from_file(str(path), use_default_template=False)
        return {str(k): params[k] for k in params}
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise FigureError(f"cannot read style file {path}: {' '.join(str(exc).split())}") from None


def _unsigned_artists() -> None:
    """Importing matplotlib.figure writes a signature and a docstring for the ``set()`` of each
    of its ~100 Artist classes, which only help() and inspect read: 0.085 s of CPU, a third of
    that import's own (#56). Before the classes exist, their ``set()`` is only marked as generated
    (what a subclass's own ``set()`` is told apart by); drawing reads neither, so every file is
    the same bytes (tests/e2e/test_figure_ranks.py). A matplotlib without that step is left as it is."""
    import sys

    if "matplotlib.lines" in sys.modules:  # the classes exist already
        return
    from matplotlib import artist

    if not hasattr(artist.Artist, "_update_set_signature_and_docstring"):
        return

    def mark(cls: Any) -> None:
        cls.set._autogenerated_signature = True

    artist.Artist._update_set_signature_and_docstring = classmethod(mark)


@contextmanager
def paper_style(style: Path | None = None) -> Iterator[None]:
    """srtui's paper settings, then the ``--style`` file's, then FORCED_RC."""
    _unsigned_artists()
    import matplotlib

    matplotlib.use("Agg", force=False)
    extra = rc_from_style(style)
    settings: Any = {**BASE_RC, **extra, **FORCED_RC}
    with _RC_LOCK, matplotlib.rc_context(settings):
        yield


def new_figure(width: float, height: float, layout: Literal["constrained"] | None = "constrained") -> Figure:
    """A figure that is not registered with pyplot (safe in worker threads, nothing to close)."""
    from matplotlib.figure import Figure

    if not 1.0 <= width <= 20.0:
        raise FigureError(f"--width must be between 1 and 20 inches (3.5: one column, 7: two), not {width:g}")
    return Figure(figsize=(width, max(1.2, min(height, 2.5 * width, 20.0))), layout=layout)


#: where a point's label may go, in points from the point: right-up first, then the other corners,
#: then above and below, then the same twice as far (the first that overlaps nothing is taken)
_NEAR: tuple[tuple[int, int, str, str], ...] = (
    (4, 2, "left", "bottom"),
    (4, -2, "left", "top"),
    (-4, 2, "right", "bottom"),
    (-4, -2, "right", "top"),
    (0, 6, "center", "bottom"),
    (0, -6, "center", "top"),
)
_PLACES = _NEAR + tuple((2 * dx, 3 * dy, ha, va) for dx, dy, ha, va in _NEAR)


def annotate_points(ax: Any, points: list[tuple[float, float, str]], chars: int = 20) -> None:
    """A label beside each point, placed by measurement: each label takes the first place around
    its point where it overlaps no point and no label placed before it (methods at the same
    point share one label). Labels stay out of the layout, so placing them moves nothing."""
    shared: dict[str, tuple[float, float, list[str]]] = {}
    for x, y, name in points:
        key = f"{float(x):.6g} {float(y):.6g}"  # relative: a log axis spans many decades
        shared.setdefault(key, (float(x), float(y), []))[2].append(label(name, chars))
    notes = []
    for x, y, names in shared.values():
        note = ax.annotate(", ".join(names), (x, y), xytext=(4, 2), textcoords="offset points", fontsize=6)
        note.set_in_layout(False)
        notes.append(note)
    if notes:
        _place(ax, notes)


def _place(ax: Any, notes: list[Any]) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = ax.figure
    if not hasattr(fig.canvas, "get_renderer"):  # a Figure outside pyplot: Agg measures its text
        FigureCanvasAgg(fig)
    fig.draw_without_rendering()  # the final layout: where the points are on the page
    renderer = fig.canvas.get_renderer()
    pad = 3 * fig.dpi / 72  # a marker's half width, in pixels
    taken = []
    for note in notes:
        px, py = ax.transData.transform(note.xy)
        taken.append((px - pad, py - pad, px + pad, py + pad))
    page = fig.bbox
    for note in notes:
        for dx, dy, ha, va in _PLACES:
            note.set_position((dx, dy))
            note.set_horizontalalignment(ha)
            note.set_verticalalignment(va)
            box = note.get_window_extent(renderer)
            inside = page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1
            if inside and not any(box.x0 < b[2] and b[0] < box.x1 and box.y0 < b[3] and b[1] < box.y1 for b in taken):
                break
        else:
            note.set_position(_PLACES[0][:2])
            note.set_horizontalalignment("left")
            note.set_verticalalignment("bottom")
            box = note.get_window_extent(renderer)
        taken.append((box.x0, box.y0, box.x1, box.y1))


def save(fig: Figure, out: Path, dpi: int = 300) -> Path:
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise FigureError(f"--out must end in .pdf, .svg or .png, not {out.name!r}")
    # no date: the same figure gives the same bytes (a figure in docs/ changes only when it does)
    meta: dict[str, Any] = {"Software": "srtui"} if fmt == "png" else {"Creator": "srtui", "Date": None}
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format=fmt, dpi=dpi, metadata=meta)
    return out


def svg_text(fig: Figure) -> str:
    """The figure as an SVG document (for the HTML report)."""
    import io

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Creator": "srtui", "Date": None})
    return buf.getvalue()


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def power_label(value: float, _pos: object = None) -> str:
    """A log axis tick as 10 with a superscript exponent, in plain characters (mathtext is off)."""
    import math

    if value <= 0 or not math.isfinite(value):
        return ""
    k = math.log10(value)
    if abs(k - round(k)) > 1e-9:
        return ""
    return "1" if round(k) == 0 else "10" + str(round(k)).translate(_SUPERSCRIPT)


def log_axis(axis: Any) -> None:
    """Put ``axis`` (ax.xaxis or ax.yaxis) on a log scale with plain-text power labels."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.axes.set_xscale("log") if axis is axis.axes.xaxis else axis.axes.set_yscale("log")
    axis.set_major_formatter(FuncFormatter(power_label))
    axis.set_minor_formatter(NullFormatter())
