"""srtui's coercion of plain command-line values gives what typer's pydantic adapters give
(srtui.cli.coercion; issue 56), and leaves every other value to them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
import typer.main
from typer._coercion import build_runtime_param

from srtui.cli.coercion import NOT_PLAIN, Deferred, plain


def _params() -> dict[str, Any]:
    app = typer.Typer()

    @app.command()
    def cmd(
        text: str = "",
        path: Path | None = None,
        texts: list[str] | None = None,
        paths: list[Path] | None = None,
        must: Annotated[Path | None, typer.Option(exists=True)] = None,
        real: Annotated[Path | None, typer.Option(resolve_path=True)] = None,
        folder: Annotated[Path | None, typer.Option(file_okay=False)] = None,
        number: int = 0,
        ratio: float = 7.0,
        flag: bool = False,
        bounded: Annotated[int, typer.Option(min=10)] = 300,
    ) -> None:
        pass

    return {p.name: p for p in typer.main.get_command(app).params}


#: no click context: typer's coercion reads one only to word an error
NO_CTX: Any = None

VALUES = [
    ("text", "a b"),
    ("text", ""),
    ("text", "-x"),
    ("path", "ws"),
    ("path", ""),
    ("path", "~/x"),
    ("texts", ["a", "b"]),
    ("texts", "one"),
    ("paths", ["a", "b/c"]),
    ("real", "x/../y"),
    ("folder", "missing"),
    ("number", 3),
    ("ratio", 7.0),
    ("flag", True),
    *[("number", text) for text in ("3", "-3", "+3", "007")],
    *[("ratio", text) for text in ("3", "-3.5", "+3.5", "1e3", ".5", "5.", "1E-2", "0.1", "6.1", "007")],
]


def _outcome(runtime: Any, value: Any, param: Any) -> tuple[Any, ...]:
    try:
        return ("value", runtime.coerce(value, param=param, ctx=NO_CTX))
    except typer.BadParameter as exc:
        return ("error", exc.message)


@pytest.mark.parametrize(("name", "value"), VALUES)
def test_plain_values_are_what_typer_makes_of_them(name: str, value: Any) -> None:
    param = _params()[name]
    desc = param.type_descriptor
    deferred = Deferred(desc.parameter_info, desc.annotation, desc)
    assert _outcome(deferred, value, param) == _outcome(build_runtime_param(desc), value, param)
    assert "typers" not in vars(deferred)  # answered without typer's adapter


ADAPTER = [("ratio", 7), ("bounded", 300), ("bounded", "300")]
ADAPTER += [("number", t) for t in ("3.5", "1_0", " 3", "0x10", "\u0663", "1" * 19, "", "-")]
ADAPTER += [("ratio", t) for t in ("1_0", " 3", "inf", "0x10", "\u0663", ".", "e3", "1e")]


@pytest.mark.parametrize(("name", "value"), ADAPTER)
def test_other_numbers_as_text_or_of_another_type_or_bounded_go_to_typer(name: str, value: Any) -> None:
    param = _params()[name]
    desc = param.type_descriptor
    deferred = Deferred(desc.parameter_info, desc.annotation, desc)
    assert _outcome(deferred, value, param) == _outcome(build_runtime_param(desc), value, param)
    assert "typers" in vars(deferred)


def test_path_checks_are_typer_s(tmp_path: Path) -> None:
    params = _params()
    desc = params["must"].type_descriptor
    with pytest.raises(typer.BadParameter, match="does not exist"):
        plain(desc, str(tmp_path / "missing"), params["must"])
    desc = params["folder"].type_descriptor
    (tmp_path / "f").write_text("")
    with pytest.raises(typer.BadParameter, match="is a file"):
        plain(desc, str(tmp_path / "f"), params["folder"])


def test_missing_values_and_numbers() -> None:
    params = _params()
    for name in ("text", "path", "number"):
        desc = params[name].type_descriptor
        assert Deferred(desc.parameter_info, desc.annotation, desc).coerce(None, param=params[name], ctx=NO_CTX) is None
    desc = params["paths"].type_descriptor
    assert Deferred(desc.parameter_info, desc.annotation, desc).coerce(None, param=params["paths"], ctx=NO_CTX) == ()
    desc = params["number"].type_descriptor
    assert plain(desc, "1_0", params["number"]) is NOT_PLAIN
    assert Deferred(desc.parameter_info, desc.annotation, desc).coerce("1_0", param=params["number"], ctx=NO_CTX) == 10
    with pytest.raises(typer.BadParameter):
        Deferred(desc.parameter_info, desc.annotation, desc).coerce("x", param=params["number"], ctx=NO_CTX)


def test_a_command_with_text_and_path_values_imports_no_pydantic(tmp_path: Path) -> None:
    code = (
        "import sys; from srtui.cli import main; "
        "sys.argv = ['srtui', 'status', '-w', sys.argv[1]]; "
        "import atexit; atexit.register(lambda: print('pydantic' in sys.modules, file=sys.__stderr__)); main()"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "nothing")], capture_output=True, text=True, timeout=120
    )
    assert out.stderr.strip().splitlines()[-1] == "False", out.stderr
