"""Protocols as data, and hyper-parameter tuning expanded into ordinary jobs.

A protocol fixes how a (task, method, seed) is run. With a search, each configuration of the
method's grid (its defaults, then its ``hyper_params``) is fitted on every cross-validation fold
of the training set as an ordinary engine job (same limits, resumable, on any backend); the
configuration with the best mean validation R2 is then fitted on the whole training set: the one
*final* job per (task, method, seed).

Folds are scikit-learn's ``KFold(n_splits, shuffle=True, random_state=seed)`` (reproduced here so
the driver does not import scikit-learn; tests check the equality), and the choice is
``GridSearchCV``'s: the highest mean score, the first configuration on ties, a configuration with
a failed fold (no score) ranked last.

Halving search (SRBench 2021: ``HalvingGridSearchCV(est, cv=KFold(5, shuffle=True,
random_state=seed), scoring="r2", error_score=0.0)`` with its defaults: factor 3, resource =
training rows, ``min_resources="exhaust"``) is the same jobs in iterations: ``halving_schedule``
gives each iteration's number of rows, ``halving_folds`` its subsampled folds (drawn as
scikit-learn's ``_SubsampleMetaSplitter`` draws them), ``halving_keep`` the candidates kept for the
next iteration and ``halving_best`` the final choice, each as scikit-learn computes them.

Which scikit-learn: ``Protocol.halving_rule``. SRBench 2021 ran 0.24.1 (``SKLEARN_0_24``): a fold
whose R2 is undefined (one validation row) scores NaN, so its candidate's mean is NaN; ``_top_k``
keeps the last ``k`` of ``np.argsort(means)`` (numpy 1.20's introsort, NaNs last, so a NaN mean
counts as the best: ``srtui.engine.legacy_sort``) and ``_select_best_index`` takes ``np.argmax`` (the
first NaN if any, else the first maximum). ``SKLEARN_CURRENT`` is srtui's correction, today's
scikit-learn order: a fold without a score counts ``error_score``, NaN means rank last
(``np.roll``) and the best is ``np.nanargmax``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from srtui.engine import legacy_sort
from srtui.engine.errors import SrtuiError, did_you_mean

#: what one fit of a method draws from numpy's global generator: (RandomState method, args) calls
FitDraws = tuple[tuple[str, tuple[Any, ...]], ...]


#: ``Protocol.halving_rule``: scikit-learn 0.24.1's halving search (SRBench 2021's), or today's
SKLEARN_0_24, SKLEARN_CURRENT = "sklearn-0.24.1", "sklearn-current"
#: ``Protocol.data_parse``: how a PMLB file's numbers are read (``srtui.tasks.loaders.pandas1``): exactly
#: (correctly rounded, today's pandas), or as pandas 1.x's python engine read them (SRBench 2021)
PARSE_EXACT, PARSE_PANDAS1 = "exact", "pandas-1.x"
PARSES = {PARSE_EXACT: "exact values", PARSE_PANDAS1: "PMLB files as pandas 1.x parsed them"}


class ProtocolError(SrtuiError, ValueError):
    """An unknown protocol; one line for the CLI."""


@dataclass(frozen=True)
class Protocol:
    name: str
    search: str | None  # None: no tuning; "grid" (GridSearchCV) or "halving" (HalvingGridSearchCV)
    folds: int = 0
    description: str = ""
    #: score of a failed tuning job: None ranks it last (GridSearchCV's default error_score=nan);
    #: SRBench 2021 passes error_score=0.0
    error_score: float | None = None
    split: str = "task"  # "task": the task's own train/test rows; "srbench2021": 75/25 per seed
    runs: int | None = None  # the protocol's number of runs (seeds) when the suite names none
    #: scaling of X and y unless the suite's [tuning] says otherwise: srtui.engine.scaling.SCALINGS, or
    #: "method": each method's eval_kwargs scale_x / scale_y over ``method_scaling``
    scaling: str = "none"
    method_scaling: dict[str, bool] = field(default_factory=dict)
    #: the seeds of the protocol's runs when the suite names none (else the competition's)
    seeds: tuple[int, ...] = ()
    #: SRBench 2021's cap on training rows (``n_samples``): a dataset of more rows trains on this
    #: many, drawn with replacement by ``np.random.choice`` after ``np.random.seed(seed)``
    train_cap: int | None = None
    #: how the cap draws (CAP_DRAWS): 2021's (with replacement, when the dataset is over the cap)
    #: or 2.0's (without replacement, when the training rows are)
    cap_draw: str = "srbench2021"
    #: at most this many configurations besides the defaults (SRBench 2.0's rule); None: all
    max_configs: int | None = None
    #: the defaults are a candidate besides hyper_params (SRBench 2021 searches hyper_params only)
    search_defaults: bool = True
    #: how a halving search scores, ranks and keeps candidates (SKLEARN_0_24 or SKLEARN_CURRENT)
    halving_rule: str = SKLEARN_CURRENT
    #: how the tasks' PMLB files are parsed (PARSE_EXACT or PARSE_PANDAS1)
    data_parse: str = PARSE_EXACT


_SRBENCH2021: dict[str, Any] = {
    "error_score": 0.0,
    "split": "srbench2021",
    "runs": 10,
    # evaluate_model.py of 2021 scales X and y unless a method's eval_kwargs say otherwise
    "scaling": "method",
    "method_scaling": {"scale_x": True, "scale_y": True},
    # experiment/seeds.py's first ten (analyze.py's -n_trials 10 takes SEEDS[0:10])
    "seeds": (23654, 15795, 860, 5390, 29802, 21575, 11964, 11284, 22118, 6265),
    "train_cap": 10000,  # evaluate_model(..., n_samples=10000)
    "search_defaults": False,
    "halving_rule": SKLEARN_0_24,
    # read_file.py: pd.read_csv(..., sep=None, engine='python'), pandas 1.x's float converter
    "data_parse": PARSE_PANDAS1,
}

#: SRBench 2.0's runs: the first 30 of its experiment/seeds.py (analyze.py: SEEDS[start_seed + t] for
#: t < n_trials, starting seed 0, 30 trials)
SEEDS_2025 = (
    23654, 15795, 860, 5390, 16850, 29910, 4426, 21962, 14423, 28020,
    29802, 21575, 11964, 11284, 22118, 6265, 11363, 27495, 16023, 8322,
    1685, 32052, 769, 26967, 30187, 32157, 23333, 2433, 5311, 5051,
)  # fmt: skip

PROTOCOLS = {
    "none": Protocol("none", None, description="one fit per (task, method, seed) with the given params"),
    "srbench2022": Protocol(
        "srbench2022",
        None,
        description="SRBench 2022 competition (evaluate_model.py of its Competition2022 branch): no tuning (the "
        "submitted configuration), 75/25 split per seed, X and y scaled unless a method's eval_kwargs say otherwise",
        split="srbench2021",  # the same train_test_split(train_size=0.75, test_size=0.25, random_state=seed)
        scaling="method",
        method_scaling={"scale_x": True, "scale_y": True},
    ),
    "srbench2025": Protocol(
        "srbench2025",
        "grid",
        5,
        "SRBench 2.0 (optimize_model.py of its srbench_2025 branch): grid search over the method's defaults + "
        "hyper_params, 5-fold shuffled CV on the training set, R2; the best configuration refitted on the whole "
        "training set; 75/25 split per seed, at most 40,000 training rows (drawn without replacement); X and y "
        "scaled (its benchmark commands pass --scale_x --scale_y); its seeds",
        runs=30,
        max_configs=4,
        scaling="xy",
        split="srbench2021",  # optimize_model.py: the same train_test_split(0.75, 0.25, random_state=seed)
        train_cap=40_000,  # analyze.py's -max_samples default, passed to every job
        cap_draw="srbench2025",
        seeds=SEEDS_2025,
    ),
    "srbench2021": Protocol(
        "srbench2021",
        "halving",
        5,
        "SRBench 2021: halving grid search (HalvingGridSearchCV of scikit-learn 0.24.1, factor 3, resource = "
        "training rows) over the method's hyper_params (its defaults if it has none), 5-fold shuffled CV, R2, "
        "a failed fit scores 0, a fold of one validation row NaN; 75/25 split per seed, at most 10,000 training "
        "rows, its ten seeds; PMLB files parsed as pandas 1.x's python engine parsed them (read_file.py)",
        **_SRBENCH2021,
    ),
    "srbench2021-exact": Protocol(
        "srbench2021-exact",
        "halving",
        5,
        "srbench2021 on the PMLB files' exact values (today's pandas) instead of pandas 1.x's parse, which is "
        "not correctly rounded (up to 4.5e-13 relative)",
        **{**_SRBENCH2021, "data_parse": PARSE_EXACT},
    ),
    "srbench2021-corrected": Protocol(
        "srbench2021-corrected",
        "halving",
        5,
        "srbench2021 with srtui's correction of its halving search (today's scikit-learn): a fold without a "
        "score (one validation row) scores 0 as a failed fit does, a NaN mean ranks last; the PMLB files' exact "
        "values",
        **{**_SRBENCH2021, "halving_rule": SKLEARN_CURRENT, "data_parse": PARSE_EXACT},
    ),
}


def get_protocol(name: str) -> Protocol:
    if name in PROTOCOLS:
        return PROTOCOLS[name]
    raise ProtocolError(f"unknown protocol {name!r} (protocols: {', '.join(PROTOCOLS)}){did_you_mean(name, PROTOCOLS)}")


#: the fields of what a protocol applied to one job (``JobSpec.protocol``), in the order shown
APPLIED_FIELDS = ("protocol", "scaling", "split", "cap", "tuning", "data", "seed")
#: a job planned before srtui recorded its protocol
NOT_RECORDED = "not recorded"
SPLITS = {"task": "task's own rows", "srbench2021": "75/25 per seed"}


def applied(
    protocol: Protocol, scaling: str, capped: bool, candidates: int, seed: int, why_untuned: str = ""
) -> dict[str, Any]:
    """What ``protocol`` applied to one job: its scaling, split, cap (``capped``: the dataset was
    over it), tuning (``candidates`` configurations compared; one: nothing to tune), data parse
    (recorded only when not exact: every job recorded before srtui had a choice read exact values)
    and seed."""
    if protocol.search is None:
        tuning = "none"
    elif candidates < 2:
        tuning = f"none ({why_untuned or 'one configuration'})"
    else:
        tuning = f"{protocol.search} search over {candidates} configurations, {protocol.folds}-fold CV"
    parse = {} if protocol.data_parse == PARSE_EXACT else {"data": PARSES[protocol.data_parse]}
    return {
        "protocol": protocol.name,
        "scaling": scaling,
        "split": SPLITS.get(protocol.split, protocol.split),
        "cap": f"{protocol.train_cap} training rows" if capped else "none",
        "tuning": tuning,
        **parse,
        "seed": seed,
    }


def describe(record: dict[str, Any] | None) -> str:
    """One line: ``srbench2021: scaling xy, split 75/25 per seed, cap none, tuning none, seed 860``."""
    if not record:
        return NOT_RECORDED
    rest = ", ".join(f"{k} {record[k]}" for k in APPLIED_FIELDS[1:] if k in record)
    return f"{record.get('protocol')}: {rest}"


def protocol_key(record: dict[str, Any] | None) -> str:
    """What must be equal for two jobs to sit in one leaderboard: the protocol's name, split, kind
    of tuning, scaling and data parse (the seed, the cap of one dataset, the number of
    configurations of one method may differ, and the scaling too where the protocol takes each
    method's eval_kwargs). A job of a protocol that parses as pandas 1.x did, recorded without a
    parse, ran before srtui had one: it read exact values, and says so."""
    if not record:
        return NOT_RECORDED
    name = str(record.get("protocol"))
    known = PROTOCOLS.get(name)
    kind = (known.search or "none") if known is not None else str(record.get("tuning"))
    per_method = known is not None and known.scaling == "method"
    scaling = "per method" if per_method else record.get("scaling")
    parses = known is not None and known.data_parse != PARSE_EXACT
    data = f", data {record.get('data', PARSES[PARSE_EXACT])}" if parses or "data" in record else ""
    return f"{name} (scaling {scaling}, split {record.get('split')}, tuning {kind}{data})"


def configurations(
    default_params: dict[str, Any],
    hyper_params: Sequence[dict[str, Any]],
    base: dict[str, Any],
    with_defaults: bool = True,
) -> list[dict[str, Any]]:
    """The grid: the defaults (``base``: the suite's params over the method's), then each of
    ``hyper_params`` over ``base``; repeats dropped, order kept. Without ``with_defaults`` (SRBench
    2021: ``HalvingGridSearchCV(est, param_grid=hyper_params)``) the defaults are a candidate
    only when there is no ``hyper_params``."""
    grid, seen = [], set()
    for extra in [{}, *hyper_params] if with_defaults or not hyper_params else hyper_params:
        params = {**base, **extra}
        key = json.dumps({**default_params, **params}, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            grid.append(params)
    return grid


def kfold(n_rows: int, n_splits: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train rows, validation rows) of ``KFold(n_splits, shuffle=True, random_state=seed)``."""
    if not 2 <= n_splits <= n_rows:
        raise ProtocolError(f"cannot make {n_splits} folds of {n_rows} training rows")
    order = np.arange(n_rows)
    np.random.RandomState(seed % 2**32).shuffle(order)
    sizes = np.full(n_splits, n_rows // n_splits)
    sizes[: n_rows % n_splits] += 1
    folds, start = [], 0
    for size in sizes:
        validation = np.sort(order[start : start + size])  # KFold yields the rows in order
        mask = np.ones(n_rows, dtype=bool)
        mask[validation] = False
        folds.append((np.arange(n_rows)[mask], validation))
        start += size
    return folds


def best_configuration(scores: Sequence[Sequence[float | None]]) -> tuple[int, list[float]]:
    """(index of the chosen configuration, mean score of each); ``scores[c][f]`` is the
    validation R2 of configuration c on fold f (None: the fold job failed)."""
    means = []
    for row in scores:
        values = [math.nan if s is None else float(s) for s in row]
        means.append(math.nan if not values or any(math.isnan(v) for v in values) else float(np.mean(values)))
    finite = [(m, -i) for i, m in enumerate(means) if not math.isnan(m)]
    if not finite:
        return 0, means  # every configuration failed somewhere: the defaults, as GridSearchCV's rank 1
    return -max(finite)[1], means


def halving_schedule(n_candidates: int, n_rows: int, n_splits: int, factor: int = 3) -> list[int]:
    """Training rows (resources) of each iteration, as ``HalvingGridSearchCV._run_search`` sets
    them with ``min_resources="exhaust"``, ``max_resources="auto"``, no aggressive elimination."""
    required = 1 + math.floor(math.log(n_candidates, factor))
    min_resources = max(n_splits * 2, n_rows // factor ** (required - 1))
    if min_resources > n_rows:
        raise ProtocolError(f"halving search needs {min_resources} training rows, the task has {n_rows}")
    possible = 1 + math.floor(math.log(n_rows // min_resources, factor))
    return [min(int(factor**i * min_resources), n_rows) for i in range(min(possible, required))]


def halving_folds(
    n_rows: int,
    n_splits: int,
    seed: int,
    resources: Sequence[int],
    rng: np.random.RandomState | None = None,
    fit_draws: FitDraws = (),
    n_candidates: int = 0,
    factor: int = 3,
) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    """(train rows, validation rows) of each fold of each iteration: the shuffled KFold's rows,
    each subsampled to ``resources[i] / n_rows`` of its size by ``resample(replace=False)``.

    SRBench 2021 leaves the search's ``random_state`` unset after ``np.random.seed(seed)``: the
    subsamples are draws from numpy's global generator, in order (iteration, fold, train then
    validation): ``rng`` is that generator, ``RandomState(seed)`` by default. Between two
    iterations the search fits each of its candidates on each fold, one process, in order; a
    method whose fit draws from that generator (``fit_draws``: calls of it, e.g.
    ``(("randint", (1, 2**31 - 1)),)``) moves it, and those draws are replayed here."""
    rng = np.random.RandomState(seed % 2**32) if rng is None else rng
    base = kfold(n_rows, n_splits, seed)
    out = []
    for n_resources in resources:
        fraction = n_resources / n_rows
        out.append([(_resample(train, fraction, rng), _resample(valid, fraction, rng)) for train, valid in base])
        for _ in range(n_candidates * n_splits if fit_draws else 0):  # this iteration's fits
            for name, args in fit_draws:
                getattr(rng, name)(*args)
        n_candidates = math.ceil(n_candidates / factor)
    return out


def _resample(rows: np.ndarray, fraction: float, rng: np.random.RandomState) -> np.ndarray:
    order = np.arange(len(rows))
    rng.shuffle(order)
    return rows[order[: int(fraction * len(rows))]]


def mean_scores(scores: Sequence[Sequence[float | None]], error_score: float | None) -> list[float]:
    """Mean validation score per candidate; a failed fold counts ``error_score`` (None: nan), a
    NaN score (scikit-learn 0.24.1's R2 of one row) makes the mean NaN."""
    fill = math.nan if error_score is None else float(error_score)
    means = []
    for row in scores:
        values = np.array([fill if s is None else float(s) for s in row], dtype=float)
        means.append(float(np.mean(values)) if len(values) else math.nan)
    return means


def fold_score(ok: bool, r2: float | None, n_valid: int, rule: str = SKLEARN_CURRENT) -> float | None:
    """A halving fold's score: None when it has none (``error_score`` stands in), NaN for a
    finite prediction of one validation row under 0.24.1 (its ``r2_score`` returns NaN; a
    non-finite prediction makes the scorer raise, which scores ``error_score``)."""
    if ok and r2 is None and n_valid < 2 and rule == SKLEARN_0_24:
        return math.nan
    return r2 if ok else None


def halving_keep(
    candidates: Sequence[int], means: Sequence[float], factor: int = 3, rule: str = SKLEARN_CURRENT
) -> list[int]:
    """The candidates of the next iteration, in scikit-learn's order (``_top_k``: ascending
    score, the best last). 0.24.1: ``np.argsort`` as numpy 1.20 sorts (NaNs last, i.e. kept
    first; ties in introsort's order); today's: NaNs moved first (``np.roll``)."""
    scores = np.asarray(means, dtype=float)
    if rule == SKLEARN_0_24:
        order = np.asarray(legacy_sort.argsort(means), dtype=int)
    else:
        order = np.roll(np.argsort(scores), np.count_nonzero(np.isnan(scores)))
    keep = math.ceil(len(candidates) / factor)
    return [int(candidates[i]) for i in order[-keep:]]


def halving_best(candidates: Sequence[int], means: Sequence[float], rule: str = SKLEARN_CURRENT) -> int:
    """The chosen candidate of the last iteration (``_select_best_index``). 0.24.1: ``np.argmax``,
    the first NaN if any, else the first maximum; today's: ``nanargmax``, the first on ties, the
    first candidate if every mean is nan."""
    scores = np.asarray(means, dtype=float)
    if rule == SKLEARN_0_24:
        return int(candidates[int(np.argmax(scores))])  # numpy's argmax: the first NaN wins, in every version
    return int(candidates[0 if np.isnan(scores).all() else int(np.nanargmax(scores))])


#: how a protocol's training cap draws its rows
CAP_DRAWS = {
    "srbench2021": "with replacement, when the dataset is over the cap",
    "srbench2025": "without replacement, when the training rows are over the cap",
}


def capped_rows(
    n_rows: int, n_total: int, cap: int | None, rng: np.random.RandomState, draw: str = "srbench2021"
) -> np.ndarray | None:
    """The training subsample, drawn on numpy's global generator ``rng`` (seeded with the job's
    seed); None when not capped. SRBench 2021 (``evaluate_model(n_samples=...)``): when the dataset
    has more than ``cap`` rows, ``np.random.choice(np.arange(n_rows), size=cap)``, with replacement.
    SRBench 2.0 (``max_train_samples``): when the ``n_rows`` training rows are more than ``cap``,
    the same draw with ``replace=False``."""
    if cap is None or cap <= 0:
        return None
    if draw == "srbench2025":
        return rng.choice(np.arange(n_rows), size=cap, replace=False) if n_rows > cap else None
    if n_total <= cap:
        return None
    return rng.choice(np.arange(n_rows), size=cap)


def train_test_split_rows(n_rows: int, train_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, test rows) of ``train_test_split(train_size=t, test_size=1-t, random_state=seed)``:
    ``ShuffleSplit``'s one permutation, test rows first, each in permutation order."""
    n_test = math.ceil((1 - train_size) * n_rows)
    n_train = math.floor(train_size * n_rows)
    if n_train < 1 or n_test < 1:
        raise ProtocolError(f"cannot split {n_rows} rows {train_size:g}/{1 - train_size:g}")
    order = np.random.RandomState(seed % 2**32).permutation(n_rows)
    return order[n_test : n_test + n_train], order[:n_test]
