"""typer's coercion of command-line values, without pydantic where a value is plain text.

typer 0.29 coerces every parameter through a pydantic ``TypeAdapter`` it builds before it looks at
the value: importing pydantic cost any command with an option (``srtui status -w WS``, even a
misspelt command: the root's ``-w`` is parsed first) 50-75 ms, a quarter of ``status`` (issue 56).
Here a parameter's runtime coercion is built when a value needs it: an option left out is None
(or ``()``) as typer's own gives it, and a ``str`` or ``Path`` value (or a list of them) is what
pydantic's lax mode makes of text (the text; ``Path(text)``) put through typer's own path checks
(``coerce_cli_path``: exists, file_okay, resolve_path...), and a number or flag that already is
one (a default: ``srtui plot``'s ``--width 7.0`` left out) is itself, and a number written in
plain decimal digits (``--width 6.5``, ``--dpi 300``) is ``float(text)`` or ``int(text)``, as
pydantic reads it. Every other value (other numbers as text, bounded numbers, choices, parsers,
files) goes to the adapter typer builds, as before.
``tests/unit/test_cli_coercion.py`` checks both against typer's own.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_path
from typer.core import _TyperParameter

#: what ``plain`` returns for a value it leaves to typer
NOT_PLAIN = object()
#: numbers written in plain decimal digits, which Python and pydantic's lax mode read alike
#: (underscores, spaces, inf, other scripts' digits and longer numbers go to typer's adapter)
NUMBERS = {
    int: re.compile(r"[+-]?[0-9]{1,18}", re.ASCII),
    float: re.compile(r"[+-]?(?=\.?[0-9])[0-9]{0,30}(\.[0-9]{0,30})?([eE][+-]?[0-9]{1,3})?", re.ASCII),
}


@dataclass(frozen=True)
class Deferred(RuntimeParam):
    """typer's runtime coercion, built on the first value that is not plain text."""

    descriptor: TypeDescriptor | None = None

    @functools.cached_property
    def typers(self) -> RuntimeParam:
        assert self.descriptor is not None
        return build_runtime_param(self.descriptor)

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        # RuntimeParam.coerce has answered a missing value (None, or () if repeatable) already
        assert self.descriptor is not None
        found = plain(self.descriptor, value, param, ctx)
        return self.typers._coerce_value(value, param=param, ctx=ctx) if found is NOT_PLAIN else found


def plain(descriptor: TypeDescriptor, value: Any, param: Any = None, ctx: Any = None) -> Any:
    """``value`` as typer's adapter would make it, or NOT_PLAIN when that takes the adapter."""
    info: Any = descriptor.parameter_info  # typed loosely: typer's annotations vary by version
    if info.parser is not None or descriptor.file_annotation is not None:
        return NOT_PLAIN
    annotation: Any = descriptor.annotation
    if get_origin(annotation) is list:
        if not isinstance(value, (list, tuple)):
            value = [value]  # as typer's list adapter takes a single value
        items = [plain(_item(descriptor), item, param, ctx) for item in value]
        return NOT_PLAIN if any(item is NOT_PLAIN for item in items) else items
    if annotation in (int, float, bool) and type(value) is annotation and _unbounded(info):
        return value  # a default (`--width` left out: 7.0) is what pydantic's lax mode makes of it
    if not isinstance(value, str):
        return NOT_PLAIN
    if annotation in (int, float) and _unbounded(info) and NUMBERS[annotation].fullmatch(value):
        return annotation(value)  # `--width 6.5`: decimal digits are the number in either
    if annotation is str:
        return value
    if annotation is Path and info.path_type in (None, Path):
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    return NOT_PLAIN


def _unbounded(info: Any) -> bool:
    return getattr(info, "min", None) is None and getattr(info, "max", None) is None


def _item(descriptor: TypeDescriptor) -> TypeDescriptor:
    args = get_args(descriptor.annotation)
    return TypeDescriptor(args[0] if args else Any, descriptor.parameter_info, None)


def install() -> None:
    """Every typer parameter builds its coercion as ``Deferred`` (once; called where the app is built)."""
    if getattr(_TyperParameter.get_runtime_param, "srtui_deferred", False):
        return

    def get_runtime_param(self: Any) -> RuntimeParam:
        if self._runtime_param is None:
            desc = self.type_descriptor
            self._runtime_param = Deferred(
                parameter_info=desc.parameter_info, annotation=desc.annotation, descriptor=desc
            )
        return self._runtime_param  # type: ignore[no-any-return]

    get_runtime_param.srtui_deferred = True  # type: ignore[attr-defined]
    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]
