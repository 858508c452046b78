"""Expression metrics exactly as each SRBench release computes them (and SRSD's edit distance);
the symbolic-solution checks are in :mod:`srtui.results.metrics.solutions`.

Every model and truth string is read by ``srtui.engine.expression.sympy_view`` (the tree sympy's parser
would build, never sympify). Per release (docs/scoring.md, "Expression metrics per release"):

- ``srbench2021`` (branch master, symbolic_utils ``clean_pred_model``): model read with every
  log/sqrt as PLOG/PSQRT and ``pi`` as 3.1415926535 (a string its text replacements break raises,
  as there); floats below 1e-4 -> 0, others ``Float(round(c, 3), 3)`` (by sequential ``subs``);
  ``simplify(ratio=1)``. ``size`` = nodes of the read model, ``size_simplified`` = nodes of the
  cleaned model.
- ``srbench2022`` (srcomp, competition-2022 metrics/evaluation.py): ``simplify`` then floats below
  1e-3 -> 0, others ``round(c, 3)``; simplicity = -round(log5(nodes), 1); feature absence on that
  model. A simplify over 10 s (SIGALRM) leaves the model unsimplified.
- ``srbench2025`` (srbench_2025 evaluate_model, metrics/evaluation.py, symbolic_utils): ``size`` =
  nodes of the model read with ``pi`` -> 3.1415926535 and 2021's rounding; simplicity of
  ``simplify(rounded model)``. A simplify over 60 s leaves the (rounded) model unsimplified.
- srtui's own deadline (one per model, ``expr_batch``) ends a simplify sooner: 2022 and 2.0 then
  keep the unsimplified model as their code would (``Release.simplify_limit``); 2021 has no limit,
  so its metrics record a timeout.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp

from srtui.engine.expression.errors import ExpressionError
from srtui.engine.expression.parser import numbered_names
from srtui.engine.expression.sympy_view import parse_sympy_view

PI_LITERAL = "3.1415926535"
RELEASES = ("srbench2021", "srbench2022", "srbench2025")


def node_count(expr: sp.Basic) -> int:
    return sum(1 for _ in sp.preorder_traversal(expr))


def simplicity(size: int | None) -> float | None:
    """-round(log5(size), 1) with numpy's rounding, as the 2022 and 2.0 code compute it."""
    if not size or size < 1:
        return None
    return float(-np.round(np.log(size) / np.log(5), 1))


def feature_absence(used: set[str], unwanted: Sequence[str]) -> float | None:
    """Share of the unwanted (irrelevant or shortcut) features the model leaves out."""
    unwanted = list(unwanted)
    if not unwanted:
        return None
    return sum(1 for f in unwanted if f not in used) / len(unwanted)


def round_floats(expr: sp.Basic, below: float, three_digits: bool) -> sp.Basic:
    """SRBench's round_floats: each Float of the original tree, in pre-order, substituted in turn
    (``subs`` re-evaluates: a zeroed term vanishes); tiny -> 0, else rounded to 3 decimals
    (``Float(round(c, 3), 3)`` in 2021/2.0 symbolic_utils, ``round(c, 3)`` in evaluation.py).

    Their loop is quadratic (one ``subs`` over the whole tree per Float: seconds for FFX's
    1,500-node models). The same replacements are made in one pass (``_replace_at_once``); where
    that pass sees a node change shape (terms merged or vanished: the order of the ``subs`` could
    then matter), their loop itself runs (``round_floats_by_subs``)."""
    new_of: dict[tuple[Any, ...], sp.Expr] = {}
    for a in sp.preorder_traversal(expr):
        if isinstance(a, sp.Float) and _float_key(a) not in new_of:
            new = _rounded(a, below, three_digits)
            new_of[_float_key(a)] = new
            # subs(a, new) also replaces a Float equal to -a by -new (Number._eval_subs)
            new_of.setdefault(_float_key(-a), -new)
    if not new_of:
        return expr
    out = _replace_at_once(expr, new_of)
    return out if out is not None else round_floats_by_subs(expr, below, three_digits)


def _float_key(a: sp.Float) -> tuple[Any, ...]:
    """What ``subs`` matches a Float by: its value and its precision (sympy's Float equality
    compares both, so ``subs(Float(1.5, 13), new)`` leaves a ``Float(1.5, 17)`` alone: truth and
    model can hold one value at two precisions, 2.0's ratio of get_sym_model's truth and a model)."""
    return (a._mpf_, a._prec)


def _rounded(a: sp.Float, below: float, three_digits: bool) -> sp.Expr:
    if abs(a) < below:
        return sp.Integer(0)
    return sp.Float(round(a, 3), 3) if three_digits else round(a, 3)


def round_floats_by_subs(expr: sp.Basic, below: float, three_digits: bool) -> sp.Basic:
    """SRBench's own loop, one ``subs`` per Float (the reference ``round_floats`` agrees with)."""
    out = expr
    for a in sp.preorder_traversal(expr):
        if isinstance(a, sp.Float):
            out = out.subs(a, _rounded(a, below, three_digits))
    return out


def _replace_at_once(expr: sp.Basic, new_of: dict[tuple[Any, ...], sp.Expr]) -> sp.Basic | None:
    """``expr`` with each Float replaced by ``new_of[its value]``, rebuilt bottom-up as ``subs``
    rebuilds (a node only where an argument changed, and an argument only where the new one is
    not the same as sympy's ``_aresame`` reads it: an equal Float keeps its own precision); None
    as soon as a rebuilt node differs in class or number of arguments from the node it replaces.
    Without such a change no replacement can meet another's result, so the sequential ``subs``
    build the same tree (tests/unit/test_releases.py checks it on FFX's models)."""
    from sympy.core.basic import _aresame

    memo: dict[int, sp.Basic] = {}

    def walk(node: sp.Basic) -> sp.Basic | None:
        if isinstance(node, sp.Float):
            new = new_of[_float_key(node)]
            return node if _aresame(new, node) else new
        if not node.args:
            return node
        key = id(node)
        if key in memo:
            return memo[key]
        args = []
        for arg in node.args:
            out = walk(arg)
            if out is None:
                return None
            args.append(out)
        if all(a is b for a, b in zip(args, node.args)):
            rebuilt = node
        else:
            rebuilt = node.func(*args)
            if type(rebuilt) is not type(node) or len(rebuilt.args) != len(args):
                return None
        memo[key] = rebuilt
        return rebuilt

    if isinstance(expr, sp.Float):  # subs returns the new value itself at the top
        return new_of[_float_key(expr)]
    return walk(expr)


#: symbolic_utils.clean_pred_model's text replacements after the feature renaming, in its order
CLEAN_PRED_MODEL = (
    ("^", "**"),
    ("p/", "/"),
    ("plog", "PLOG"),
    ("aq", "/"),
    ("mylog", "PLOG"),
    ("sqrtAbs", "PSQRT"),
    ("np.", ""),
    ("|", ""),
    ("log", "PLOG"),
    ("sqrt", "PSQRT"),
    ("pi", PI_LITERAL),
    ("[", ""),
    ("]", ""),
)


def clean_pred_model_text(text: str, features: Sequence[str], dialect: str) -> str:
    """The string 2021's (and 2.0's assess) ``clean_pred_model`` hands ``parse_expr``: the
    dialect's numbered names renamed to the features, then its text replacements."""
    rename = numbered_names(text, features, dialect)
    out = text.strip()
    if rename:
        out = re.sub(r"[A-Za-z_][A-Za-z_0-9]*", lambda n: rename.get(n.group(0), n.group(0)), out)
    for old, new in CLEAN_PRED_MODEL:
        out = out.replace(old, new)
    return out


@lru_cache(maxsize=64)
def _read(
    text: str, features: tuple[str, ...], dialect: str, plain_log_protected: bool, pi_value: str | None
) -> sp.Expr:
    # one model is read by several releases (and twice by 2.0) within one worker task
    return parse_sympy_view(text, features, dialect, plain_log_protected=plain_log_protected, pi_value=pi_value)


def refuse_what_clean_pred_model_breaks(text: str, features: Sequence[str], dialect: str) -> None:
    """2021's clean-up (2.0's assess too) raises where its text replacements break the syntax
    (``1/(p/(q*v*B))`` -> ``1/(/(q*v*B))``): so does srtui's reading of it (profile reference)."""
    try:
        ast.parse(clean_pred_model_text(text, features, dialect), mode="eval")
    except SyntaxError:
        raise ExpressionError("clean_pred_model's text replacements leave a string parse_expr cannot read") from None


#: simplify results of this process, by (canonical tree, ratio): the releases' model clean-ups and
#: the reference and corrected checks often simplify the very same tree (a worker computes all of
#: one model's operations in one task, so they meet here)
_SIMPLIFIED: dict[tuple[str, float | None], sp.Basic] = {}
_SIMPLIFIED_MAX = 512


def shared_simplify(expr: sp.Basic, ratio: float | None = None) -> sp.Basic:
    """``sp.simplify(expr[, ratio])``, computed once per tree. The key is ``srepr`` (classes,
    arguments, Float precision and symbol assumptions), never the printed string, which can
    merge trees sympy treats differently."""
    key = (sp.srepr(expr), ratio)
    hit = _SIMPLIFIED.get(key)
    if hit is None:
        hit = sp.simplify(expr) if ratio is None else sp.simplify(expr, ratio=ratio)
        if len(_SIMPLIFIED) >= _SIMPLIFIED_MAX:
            del _SIMPLIFIED[next(iter(_SIMPLIFIED))]
        _SIMPLIFIED[key] = hit
    return hit


@dataclass(frozen=True)
class Release:
    name: str
    below: float  # floats below this magnitude become 0
    three_digits: bool  # Float(round(c, 3), 3) rather than round(c, 3)
    ratio: float | None  # simplify(ratio=...), None for sympy's default
    round_first: bool  # round the floats before simplify (2021, 2.0) or after (2022)
    pi_literal: bool  # pi read as 3.1415926535 for the simplified model and truth (2021)
    plain_log_protected: bool  # every log/sqrt read as PLOG/PSQRT (2021's clean-up)
    #: seconds the release's own code lets one simplify run (SIGALRM) before it keeps the model
    #: unsimplified; None: no limit (2021), so srtui's deadline can only record a timeout
    simplify_limit: float | None = None

    def read(
        self, text: str, features: Sequence[str], dialect: str, pi_literal: bool | None = None, as_code: bool = True
    ) -> sp.Expr:
        """The model as the release reads it; ``as_code=False``: srtui's token reading alone, where
        2021's text replacements would break the string (the corrected variant)."""
        pi = self.pi_literal if pi_literal is None else pi_literal
        if as_code and self.plain_log_protected:
            refuse_what_clean_pred_model_breaks(text, features, dialect)
        return _read(text, tuple(features), dialect, self.plain_log_protected, PI_LITERAL if pi else None)

    def rnd(self, expr: sp.Basic) -> sp.Basic:
        return round_floats(expr, self.below, self.three_digits)

    def simplify(self, expr: sp.Basic) -> sp.Basic:
        return shared_simplify(expr, self.ratio)

    def clean(self, expr: sp.Basic, simplified: bool = True) -> sp.Basic:
        """The model (or truth) as the release compares it; ``simplified=False``: as the release's
        code keeps it when its simplify runs out of time (rounded, unsimplified)."""
        if not simplified:
            return self.rnd(expr)
        return self.simplify(self.rnd(expr)) if self.round_first else self.rnd(self.simplify(expr))


SPECS = {
    "srbench2021": Release("srbench2021", 1e-4, True, 1, True, True, True),
    "srbench2022": Release("srbench2022", 1e-3, False, None, False, False, False, simplify_limit=10),
    "srbench2025": Release("srbench2025", 1e-4, False, None, True, False, False, simplify_limit=60),
}


def sympy_complexity(text: str, features: Sequence[str], dialect: str) -> int | None:
    """2.0's ``model_size`` (evaluate_model.py ``sympy_complexity``): nodes of ``get_sympy_model``,
    the text with every ``pi`` replaced by 3.1415926535 (inside names too, as there), parsed and
    rounded (2021's ``round_floats``), not simplified; None where that reading fails (2.0 then
    records -1, or a method folder's own ``complexity``)."""
    try:
        return node_count(
            round_floats(_read(text.replace("pi", PI_LITERAL), tuple(features), dialect, False, None), 1e-4, True)
        )
    except ExpressionError:
        return None


# --- SRSD's normalised tree edit distance ------------------------------------------------------


def _srsd_prepare(expr: sp.Expr) -> sp.Expr:
    return expr.subs(sp.pi, sp.pi.evalf()).evalf().factor().simplify().subs(1.0, 1)


#: a node's label and its children's trees
SrsdTree = tuple[str, *tuple["SrsdTree", ...]]


def srsd_tree(expr: sp.Basic) -> SrsdTree:
    """Labels as SRSD's sympy2zss_module: every number ``Const``, symbols by name, else the class."""
    from sympy.utilities.misc import func_name

    if expr.is_number:
        label = "Const"
    elif isinstance(expr, sp.Symbol):
        label = str(expr)
    else:
        label = func_name(expr)
    return (label, *(srsd_tree(a) for a in expr.args))


def _apted(tree: SrsdTree) -> Any:
    from apted.helpers import Tree as ATree

    return ATree(tree[0], *(_apted(c) for c in tree[1:]))


def _tree_size(tree: SrsdTree) -> int:
    return 1 + sum(_tree_size(c) for c in tree[1:])


@lru_cache(maxsize=256)
def _srsd_truth(truth: str, features: tuple[str, ...]) -> SrsdTree:
    # a truth is compared with every model of its task: its factor().simplify() (a fifth of an
    # srsd operation) is computed once per worker; the tree is a pure function of the string
    return srsd_tree(_srsd_prepare(parse_sympy_view(truth, features, "python")))


def srsd_op(text: str, truth: str, features: Sequence[str], dialect: str) -> dict[str, Any]:
    """SRSD's edit distance d (unit costs, ordered trees) and min(d, n) / n, n = truth's nodes."""
    from apted import APTED

    m = srsd_tree(_srsd_prepare(parse_sympy_view(text, features, dialect)))
    t = _srsd_truth(truth, tuple(features))
    d = int(APTED(_apted(m), _apted(t)).compute_edit_distance())
    n = _tree_size(t)
    return {"ted": d, "ted_norm": min(d, n) / n}
