"""srtui.engine.process.fork_plan: which method folders fork, read from their imports alone."""

from __future__ import annotations

from pathlib import Path

from srtui.engine.process.fork_plan import folder_family, plan_folder, split_family


def _folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_known_libraries_and_the_folders_own_modules_fork_with_their_pre_imports(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path / "m",
        {
            "regressor.py": "import os\nfrom sklearn.linear_model import Ridge\nfrom helper import f\nest = Ridge()\n",
            "helper.py": "import numpy as np\nfrom . import inner\ndef f():\n    import scipy.optimize\n",
            "inner.py": "import pandas\n",
        },
    )
    plan = plan_folder(folder / "regressor.py", [folder])
    assert plan.safe and plan.modules == ("numpy", "pandas", "scipy.optimize", "sklearn.linear_model")
    family = folder_family(str(folder))
    assert split_family(family) == ("srtui.engine.methods.srbench_dir", list(plan.modules))


def test_unknown_libraries_shadowing_files_and_unreadable_code_are_exec_d(tmp_path: Path) -> None:
    torch = _folder(tmp_path / "a", {"regressor.py": "def fit():\n    import torch\n"})
    assert plan_folder(torch / "regressor.py", [torch]).why_not == "it imports torch, not known fork-safe"
    shadow = _folder(tmp_path / "b", {"regressor.py": "import numpy\n", "numpy.py": ""})
    assert "own numpy would shadow" in (plan_folder(shadow / "regressor.py", [shadow]).why_not or "")
    broken = _folder(tmp_path / "c", {"regressor.py": "def (:\n"})
    assert plan_folder(broken / "regressor.py", [broken]).why_not == "regressor.py cannot be read as Python"


def test_a_2021_method_file_is_read_as_its_own_source(tmp_path: Path) -> None:
    methods = _folder(tmp_path / "experiment" / "methods", {"KernelRidge.py": "from sklearn import kernel_ridge\n"})
    assert split_family(folder_family(str(methods / "KernelRidge.py")))[1] == ["sklearn", "sklearn.kernel_ridge"]


def test_a_family_never_names_a_module_outside_the_known_libraries() -> None:
    # the family travels on the server's command line: only known libraries' names are imported
    assert split_family("srtui.engine.methods.srbench_dir+numpy,os,torch.nn,sklearn.ensemble,sklearn/../x") == (
        "srtui.engine.methods.srbench_dir",
        ["numpy", "sklearn.ensemble"],
    )
