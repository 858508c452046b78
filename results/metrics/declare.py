"""One declaration per expression metric, and everything derived from the declarations.

Each module of :mod:`srtui.results.metrics.declared` declares one metric with :func:`declare`: its
name, the releases that store it (``<release>.<name>``), the release its unprefixed default
aliases, its ranking direction, label, unit, doc line and definition version, and (for a metric
of the model) the function computing it from one release's reading of the model. From them come:

- the per-release values of ``srtui.results.metrics.release_values.model_op`` and ``assemble_release``;
- the stored names (:func:`stored_names`) and the unprefixed defaults (:func:`defaults`);
- the definition versions (:func:`version_offset`: the expression cache keys and
  ``srtui.results.metrics.version.METRICS_VERSION`` follow every declaration's ``version``);
- the rows of ``srtui expr`` (:func:`expr_rows`), the app's labels (:func:`labels`), the
  ranking direction (:func:`lower_is_better`) and the docs table (:func:`docs_table`, kept in
  docs/scoring.md; tests/unit/test_metric_contracts.py fails when the two differ).

Adding a metric is adding one module to ``results/metrics/declared/``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Literal

from srtui.engine.extensions import import_every_module

Direction = Literal["higher", "lower"]
#: where a value comes from: the release's reading of the model (``compute``), the release's
#: symbolic-solution check (srtui.results.metrics.solutions), or SRSD's distance to the truth
Source = Literal["model", "solution", "srsd"]


@dataclass(frozen=True)
class ModelView:
    """One model as one release reads it: what a model metric's ``compute`` gets."""

    release: str
    text: str
    features: Sequence[str]
    dialect: str
    unwanted: Sequence[str]
    raw: Any  # sympy tree of the model as the release reads it
    clean: Any  # rounded and simplified as the release does (or unsimplified, after its limit)

    @cached_property
    def clean_nodes(self) -> int:
        from srtui.results.metrics.releases import node_count

        return node_count(self.clean)


@dataclass(frozen=True)
class Example:
    """A golden value: ``values`` maps stored names (``srbench2022.simplicity``, or the
    unprefixed default) to what the release's own code gives for ``model`` (vs ``truth``)."""

    model: str
    values: dict[str, float]
    features: tuple[str, ...] = ("x0", "x1")
    truth: str | None = None
    unwanted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Metric:
    name: str
    releases: tuple[str, ...]  # the releases that store ``<release>.<name>``
    direction: Direction
    label: str  # the app's words for it
    unit: str
    doc: str  # one line: what it measures (the docs table)
    default: str | None  # the release the unprefixed name aliases (None: no unprefixed name)
    source: Source = "model"
    compute: Callable[[ModelView], Any] | None = None  # the value for one release (source "model")
    #: bump when the definition changes: cached values and stored jobs are then recomputed
    version: int = 0
    #: the place in listings (the `srtui expr` rows, the docs table)
    order: int = 100
    #: releases whose stored value is the release's own, with srtui's as ``name:corrected`` beside it
    corrected: tuple[str, ...] = ()
    examples: tuple[Example, ...] = field(default=())

    @property
    def needs_truth(self) -> bool:
        return self.source != "model"


_DECLARED: dict[str, Metric] = {}


def declare(metric: Metric) -> Metric:
    """Register ``metric`` (called once, at the module level of its ``declared`` module)."""
    if metric.name in _DECLARED:
        raise ValueError(f"metric {metric.name!r} is declared twice")
    if (metric.source == "model") != (metric.compute is not None):
        raise ValueError(f"metric {metric.name!r}: a model metric has a compute function, no other does")
    _DECLARED[metric.name] = metric
    return metric


@lru_cache(maxsize=1)
def metrics() -> tuple[Metric, ...]:
    """Every declared metric, in listing order (each module of srtui.results.metrics.declared, imported once)."""
    from srtui.results.metrics import declared

    import_every_module(declared)
    return tuple(sorted(_DECLARED.values(), key=lambda m: (m.order, m.name)))


def by_name() -> dict[str, Metric]:
    return {m.name: m for m in metrics()}


def model_metrics() -> tuple[Metric, ...]:
    return tuple(m for m in metrics() if m.source == "model")


def version_offset() -> int:
    """The sum of the declarations' versions: part of every definition version."""
    return sum(m.version for m in metrics())


def stored(release: str) -> tuple[str, ...]:
    """The names the metrics table stores for ``release`` (``<release>.<name>``): each declared
    metric of that release; a solution also as ``:corrected`` and as each named variant."""
    from srtui.results.metrics.profiles import Profile
    from srtui.results.metrics.solutions import VARIANTS

    out: list[str] = []
    for m in metrics():
        if release not in m.releases:
            continue
        out.append(m.name)
        if release in m.corrected:
            out.append(Profile.CORRECTED.metric(m.name))
        if m.source == "solution":
            out.append(Profile.CORRECTED.metric(m.name))
            out += [f"{m.name}:{v}" for v in VARIANTS.get(release, {})]
    return tuple(out)


def stored_releases() -> tuple[str, ...]:
    return tuple(sorted({r for m in metrics() for r in m.releases}))


@lru_cache(maxsize=1)
def stored_names() -> frozenset[str]:
    return frozenset(f"{r}.{n}" for r in stored_releases() for n in stored(r))


def defaults() -> dict[str, str]:
    """srtui's unprefixed names, each an alias of one release's value."""
    return {m.name: f"{m.default}.{m.name}" for m in metrics() if m.default}


def expr_rows() -> tuple[str, ...]:
    """The per-release rows of `srtui expr` (the release's own metrics, not SRSD's)."""
    return tuple(m.name for m in metrics() if m.source != "srsd")


def labels() -> dict[str, str]:
    return {m.name: m.label for m in metrics()}


def base_name(column: str) -> str:
    """``srbench2022.symbolic_solution:corrected`` -> ``symbolic_solution``."""
    return column.rpartition(".")[2].partition(":")[0]


def lower_is_better(column: str) -> bool | None:
    """The declared direction of a stored or default metric column; None when none declares it."""
    metric = by_name().get(base_name(column))
    return None if metric is None else metric.direction == "lower"


def docs_table() -> str:
    """The table of docs/scoring.md "Declared metrics", generated from the declarations."""
    from srtui.results.metrics.profiles import Profile

    rows = [
        "| name | stored as | default | better | unit | version | meaning |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for m in metrics():
        where = ", ".join(f"`{r}.{m.name}`" for r in m.releases)
        where += "".join(f", `{r}.{Profile.CORRECTED.metric(m.name)}`" for r in m.corrected)
        default = f"`{m.default}.{m.name}`" if m.default else "-"
        rows.append(f"| `{m.name}` | {where} | {default} | {m.direction} | {m.unit} | {m.version} | {m.doc} |")
    return "\n".join(rows) + "\n"
