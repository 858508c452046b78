"""Convert PMLB's ground-truth metadata (prose YAML) into the formula catalogue srtui ships.

Run by hand when PMLB changes: ``python -m srtui.tasks.tools.pmlb_metadata PMLB_METADATA_DIR``
(needs PyYAML). It writes ``tasks/data/groundtruth.json``; at run time srtui reads only that JSON,
and every formula there is checked through srtui.engine.expression by the tests.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "data" / "groundtruth.json"
SOURCE = "EpistasisLab/pmlb@7c1f4bdc00136dc2e55c87fa6b8ba6e8af6d1a68 datasets/NAME/metadata.yaml"
#: numpy-style names in the prose -> the Python dialect of srtui.engine.expression
RENAMES = {
    r"\bcot\((\w+)\)": r"(1/tan(\1))",
    r"\barcsin\(": "asin(",
    r"\barccos\(": "acos(",
    r"\barctan\(": "atan(",
    r"\bln\(": "log(",
}
RANGE = re.compile(r"^\s*(\w+)\s+in\s+\[\s*([-\d.eE+]+)\s*,\s*([-\d.eE+]+)\s*\]\s*$")
EQUATION = re.compile(r"^\s*(\w+)'?\s*=\s*(.+?)\s*$")


def _groups(pattern: re.Pattern[str], line: str) -> tuple[str, ...]:
    found = pattern.match(line)
    if found is None:
        raise ValueError(f"not an equation line: {line!r}")
    return found.groups()


def _python(formula: str) -> str:
    for pattern, repl in RENAMES.items():
        formula = re.sub(pattern, repl, formula)
    return re.sub(r"\s+", " ", formula).strip()


def convert(meta: dict[str, Any]) -> dict[str, object]:
    name = meta["dataset"]
    features = [str(f["name"]) for f in meta["features"]]
    bad = [f for f in features if not f.isidentifier() or keyword.iskeyword(f)]
    if bad:
        raise ValueError(f"{name}: feature names {bad} are not Python identifiers")
    lines = [ln for ln in meta["description"].splitlines() if ln.strip()]
    ranges = {m[1]: [float(m[2]), float(m[3])] for ln in lines if (m := RANGE.match(ln))}
    if name.startswith("feynman_"):
        eq = next(ln for ln in lines if "=" in ln and not RANGE.match(ln))
        target, formula = _groups(EQUATION, eq)
        if sorted(ranges) != sorted(features):
            raise ValueError(f"{name}: ranges {sorted(ranges)} do not match features {features}")
        return {
            "name": name,
            "family": "feynman",
            "features": features,
            "target": target,
            "formula": _python(formula),
            "ranges": ranges,
        }
    eq = next(ln for ln in lines if re.match(r"^\s*[xy]'\s*=", ln))
    state, formula = _groups(EQUATION, eq.replace("'", "", 1))
    return {
        "name": name,
        "family": "strogatz",
        "features": features,
        "target": f"d{state}_dt",
        "formula": _python(formula),
        "state": state,
        "system": name.removeprefix("strogatz_").rstrip("12"),
    }


def main(argv: list[str]) -> None:
    import yaml

    folder = Path(argv[0])
    problems = []
    for path in sorted(folder.glob("*.yaml")):
        if path.stem.startswith(("feynman_", "strogatz_")):
            problems.append(convert(yaml.safe_load(path.read_text())))
    OUT.write_text(json.dumps({"source": SOURCE, "problems": problems}, indent=1) + "\n")
    print(f"wrote {len(problems)} problems to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
