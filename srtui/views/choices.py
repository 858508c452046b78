"""What the start-a-run form offers: the run options declared with a form field (srtui.runs.options,
the same declaration `srtui run` is made from), each with its registry's names and its first
value. Imported when the form opens: the registry and the suites stay out of start-up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, get_origin

if TYPE_CHECKING:
    from srtui.runs.options import RunOption, RunRequest

#: a field's widget by its option's value type
_WIDGETS = {int: "integer", float: "number"}


@dataclass(frozen=True)
class FormInput:
    """One field of the start-a-run form."""

    name: str  # the option's name (the widget's id)
    label: str
    placeholder: str
    #: "integer", "number", "text", "select" (one of ``choices``) or "pick" (any of ``choices``)
    widget: str
    choices: tuple[str, ...] = ()
    initial: str = ""


def _many(opt: RunOption) -> bool:
    from srtui.runs.options import split_names

    return get_origin(opt.type) is list or opt.to_request is split_names


def _input(opt: RunOption) -> FormInput:
    assert opt.form is not None
    choices = tuple(opt.names())
    widget = ("pick" if _many(opt) else "select") if choices else _WIDGETS.get(opt.type, "text")
    initial = opt.form.initial() if opt.form.initial is not None else ""
    return FormInput(opt.name, opt.form.label, opt.form.placeholder, widget, choices, initial)


def form_inputs() -> list[FormInput]:
    """The form's fields, in the declaration's order."""
    from srtui.runs import options

    return [_input(opt) for opt in options.RUN_OPTIONS if opt.form is not None]


def form_request(values: Mapping[str, str | Sequence[str]]) -> RunRequest:
    """The request the form's ``values`` (text, or the names picked) mean; a blank field keeps
    the option's default. ValueError for a number field holding no number; OptionError for a
    list of names holding none."""
    from srtui.runs import options

    given: dict[str, object] = {}
    for opt in options.RUN_OPTIONS:
        raw = values.get(opt.name)
        if opt.form is None or raw is None:
            continue
        if not isinstance(raw, str):  # the names picked, as the command line writes them
            raw = ",".join(raw)
        if not raw.strip():
            continue
        if get_origin(opt.type) is list:
            given[opt.name] = options.split_names(raw)
        else:
            given[opt.name] = opt.type(raw.strip()) if opt.type in _WIDGETS else raw
    return options.request_from(given)
