"""The neutral rendering of models (srtui.engine.expression.neutral) and the blinding check (srtui.reviews.blinding).

The same model written in every dialect srtui reads must be shown as one text; protected
operators read as the plain operation; one number format; the check names what is left.
"""

from __future__ import annotations

import re

import pytest

from srtui.engine.expression.neutral import format_number, neutral_forms
from srtui.reviews.blinding import Tell, number_format, tells, tokens, warnings

FEATS = ("speed", "mass")


def shown(text: str, dialect: str, feats: tuple[str, ...] = FEATS) -> str:
    return neutral_forms(text, feats, dialect, 1000)["plain"]


# one model, 2*speed + mass/3 - 0.5, as each method's dialect writes it
SAME_MODEL = [
    ("python", "2*speed + mass/3 - 0.5"),
    ("python", "-0.5000000000000001 + 0.3333333333333333*mass + 2.0*speed"),
    ("gplearn", "sub(add(mul(2.000, X0), div(X1, 3.000)), 0.500)"),
    ("srbench", "Sub(Add(Mul(2.0, X0), Div(X1, 3.0)), 0.5)"),
    ("pyoperon", "((2.00000000000000000 * X1) + ((X2 / 3.00000000000000000) + (-0.50000000000000000)))"),
    ("ffx", "-0.5 + 2.00*x0 + 0.333*x1"),
    ("bingo", "(2.0)(X_0) + (X_1)/(3.0) - 0.5"),
    ("itea", "2.0*id(x_0^1) + 0.3333333*id(x_1) + -0.5"),
    ("pysr", "((x0 * 2.0) + (x1 / 3.0)) - 0.5"),
]


def test_one_model_in_every_dialect_is_one_rendering():
    renderings = {shown(text, dialect) for dialect, text in SAME_MODEL}
    assert renderings == {"0.333*mass + 2*speed - 0.500"}


@pytest.mark.parametrize(
    ("dialect", "text", "expected"),
    [
        ("gplearn", "div(X0, X1)", "speed/mass"),
        ("gplearn", "log(X0)", "log(speed)"),
        ("gplearn", "sqrt(X0)", "sqrt(speed)"),
        ("gplearn", "inv(X1)", "1/mass"),
        ("pyoperon", "sqrtabs(X1) + logabs(X2)", "sqrt(speed) + log(mass)"),
        ("pyoperon", "cbrt(X1)", "speed**(1/3)"),
        ("bingo", "sqrt(X_0) + log(|X_1|)", "sqrt(speed) + log(mass)"),
        ("itea", "1.5*sqrt.abs(x_0)", "1.50*sqrt(speed)"),
        ("python", "speed**0.5 + mass**2.0", "mass**2 + sqrt(speed)"),
        ("ffx", "log10(x0)", "0.434*log(speed)"),
        ("python", "pi*speed", "3.14*speed"),
        ("ffx", "0.34*max(0, 0.7265296225001675 - x1)", "0.340*max(0, 0.727 - mass)"),
        ("gplearn", "mul(-1.0, add(X0, X1))", "-mass - speed"),
        ("gplearn", "add(div(X0, 0.000), log(0.0001))", "1"),  # protected at a constant: its value
        ("gplearn", "mul(X0, inv(sub(X1, X1)))", "0"),
        ("gplearn", "add(X0, log(mul(-1.0, 2.0)))", "speed + 0.693"),  # log|a| of a constant, not I*pi
    ],
)
def test_protected_operators_and_spellings_read_as_the_plain_operation(dialect, text, expected):
    assert shown(text, dialect) == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.5, "0.500"),
        (1.3600000000000001e-11, "1.36e-11"),
        (1.36e-11, "1.36e-11"),
        (-0.0268, "-0.0268"),
        (123.4, "123"),
        (1234.5, "1.23e3"),
        (0.00012345, "0.000123"),
        (0.000012345, "1.23e-5"),
        (999.6, "1.00e3"),
        (0.0, "0"),
    ],
)
def test_one_number_format(value, text):
    assert format_number(value) == text


def test_constants_read_alike_whatever_their_printed_digits():
    # gplearn's %.3f, 17 digits, a float error: one constant, one text
    assert shown("2.000*speed", "python") == shown("2.0000000000000004*speed", "python") == "2*speed"
    assert shown("0.167*speed", "python") == shown("0.16666666666666666*speed", "python") == "0.167*speed"
    assert shown("1.3600000000000001e-11*speed - 4.25e-8", "python") == "1.36e-11*speed - 4.25e-8"


def test_the_2d_print_uses_the_same_numbers_and_the_feature_names_as_written():
    forms = neutral_forms("0.1234567*value_cases_14/(x_1 + 2.0)", ("value_cases_14", "x_1"), "python", 1000)
    plain_numbers = set(re.findall(r"\d+\.\d+", forms["plain"]))
    for key in ("expression", "expression_ascii"):
        assert set(re.findall(r"\d+\.\d+", forms[key])) == plain_numbers == {"0.123"}
        assert "value_cases_14" in forms[key] and "x_1" in forms[key]  # no subscripts
    assert forms["size"] == 8 and not forms["black_box"]


def test_black_boxes():
    assert neutral_forms("nan", FEATS, "python", 1000)["black_box"]
    assert neutral_forms("speed +* 2", FEATS, "python", 1000)["black_box"]
    assert neutral_forms(" + ".join(f"{i}.5*speed**{i}" for i in range(1, 200)), FEATS, "python", 1000)["black_box"]


def test_tokens_and_number_formats():
    assert number_format("0.500") == "3 significant digits"
    assert number_format("0.5") == "1 significant digit"
    assert number_format("1.3600000000000001e-11") == "17 significant digits"
    assert number_format("1.36E-11") == "3 significant digits, exponent written E, e+ or e-0"
    assert number_format("12") == "integer"
    assert tokens("0.500*speed + X0 - pdiv(x_1, 2)", FEATS) == {
        ("number", "3 significant digits"),
        ("variable", "feature"),
        ("variable", "X<n>"),
        ("variable", "x_<n>"),
        ("function", "pdiv"),
        ("number", "integer"),
        ("operator", "("),
        ("operator", ")"),
        ("operator", ","),
        ("operator", "*"),
        ("operator", "+"),
        ("operator", "-"),
    }


def test_the_check_names_handwriting_and_content_and_never_the_method():
    found = tells(
        {
            "gplearn": [("pdiv(speed, 2.00) + X0", FEATS)],
            "pyoperon": [("0.500*speed + log(mass)", FEATS)],
            "linear": [("0.500*speed + 1.00", FEATS)],
            "rf": [("", FEATS)],  # a black box writes nothing
        }
    )
    by_token = {t.token: t for t in found}
    assert by_token["pdiv"].handwriting and by_token["pdiv"].methods_with == ("gplearn",)
    assert by_token["X<n>"].handwriting
    assert not by_token["log"].handwriting and by_token["log"].methods_without == ("gplearn", "linear")
    assert "rf" not in {m for t in found for m in t.methods_with + t.methods_without}
    lines = warnings(found)
    assert any("'pdiv'" in line and "1 of 3 methods" in line for line in lines)
    assert not any(m in line for line in lines for m in ("gplearn", "pyoperon", "linear"))
    assert tells({"a": [("0.500*speed", FEATS)], "b": [("2*mass", FEATS)]}) == [
        Tell("number", "3 significant digits", ("a",), ("b",)),
        Tell("number", "integer", ("b",), ("a",)),
    ]


def test_review_create_checks_the_frozen_items():
    from srtui.reviews import FrozenItem
    from srtui.reviews.blinding import item_tells

    def item(method: str, plain: str, black_box: bool = False) -> FrozenItem:
        return FrozenItem("t", method, {"plain": plain, "black_box": black_box, "features": list(FEATS)})

    old = [item("gplearn", "pdiv(speed, mass)"), item("pyoperon", "speed/mass"), item("rf", "black-box", True)]
    lines = warnings(item_tells(old))
    assert lines and "'pdiv'" in lines[0] and "1 of 2 methods" in lines[0]
    assert not warnings(item_tells([item("gplearn", "speed/mass"), item("pyoperon", "2*speed/mass")]))
