"""Issue 58: a method in an environment needs only its own packages and what its contract needs.

A method file whose ``model()`` returns a string, and a method folder (whose contract hands it a
DataFrame), run in a built environment that has scikit-learn, numpy, psutil and pandas, and no
sympy: the worker hands the model string back as printed, with its scalers' statistics, and the
driver composes and checks it. The environment is a stand-in named ``sklearn-0.24.1`` under a
``SRTUI_ENVS`` of the test's own (``tests/standin_env.py``: this interpreter's packages linked
into a venv), so ``--env sklearn-0.24.1`` resolves to it; the shipped spec's contract layer
(pandas) is marked as installed only once the refusal without it has been seen.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import srtui
from standin_env import link_environment

from srtui.engine.methods.environments import CONTRACT_READY, READY

#: a 2021-style method file: model(est, X) over X's numbered columns (a file gets arrays)
MODEL_FILE = """
from sklearn.linear_model import LinearRegression

est = LinearRegression()
hyper_params = [{}]


def model(est, X):
    terms = [f"{float(c)!r}*X{i}" for i, c in enumerate(est.coef_)]
    return " + ".join(terms) + f" + {float(est.intercept_)!r}"
"""
#: an SRBench folder's regressor.py: model(est, X) over the DataFrame's column names
FOLDER_REGRESSOR = """
from sklearn.linear_model import Ridge

est = Ridge(alpha=1e-6)


def model(est, X):
    terms = [f"{float(c)!r}*{name}" for name, c in zip(X.columns, est.coef_)]
    return " + ".join(terms) + f" + {float(est.intercept_)!r}"
"""


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The stand-in environment; what ``srtui`` calls need in their environment to find it."""
    envs = tmp_path_factory.mktemp("envs")
    python = link_environment(envs / "sklearn-0.24.1", ("scikit-learn", "numpy", "psutil", "pandas"))
    (envs / "sklearn-0.24.1" / READY).write_text("stand-in")
    has = subprocess.run([str(python), "-I", "-c", "import sklearn, pandas, numpy, psutil"], capture_output=True)
    assert has.returncode == 0, has.stderr
    lacks = subprocess.run([str(python), "-I", "-c", "import sympy"], capture_output=True, text=True)
    assert lacks.returncode != 0 and "No module named 'sympy'" in lacks.stderr  # nothing of the parser's
    return {"SRTUI_ENVS": str(envs)}


def _methods(tmp_path: Path) -> tuple[Path, Path]:
    file = tmp_path / "LinearFile.py"
    file.write_text(MODEL_FILE)
    folder = tmp_path / "ridgefolder"
    folder.mkdir()
    (folder / "regressor.py").write_text(FOLDER_REGRESSOR)
    return file, folder


def _contract_in(env: dict[str, str]) -> None:
    from srtui.engine.methods.env_specs import get

    spec = get("sklearn-0.24.1").environment
    assert spec.contract == ("pandas==1.5.3",)  # the shipped spec's layer (the stand-in's pandas is this one's)
    (Path(env["SRTUI_ENVS"]) / "sklearn-0.24.1" / CONTRACT_READY).write_text(spec.contract_fingerprint())


@pytest.mark.slow  # two jobs in an environment, then two checks
def test_a_model_string_file_and_a_folder_run_in_an_environment_without_sympy(
    stand_in: dict[str, str], tmp_path: Path, workspace: Path
) -> None:
    file, folder = _methods(tmp_path)
    run = ["run", "smoke", "--methods", "LinearFile,ridgefolder", "--method-dir", str(file)]
    run += ["--method-dir", str(folder), "--env", "sklearn-0.24.1", "--tasks", "smoke-linear", "--seeds", "1"]
    run += ["--srbench-scaling", "reference"]  # fitted on standardised X and y, as SRBench 2.0 ran
    refused = srtui(*run, "--workspace", str(workspace), env=stand_in)
    assert refused.returncode != 0 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "ridgefolder gets a DataFrame" in refused.stderr and "srtui env create sklearn-0.24.1" in refused.stderr
    _contract_in(stand_in)

    srtui(*run, "--workspace", str(workspace), env=stand_in, check=True)
    rows = json.loads(srtui("results", "--format", "json", "-w", str(workspace), check=True).stdout)
    assert sorted(r["method"] for r in rows) == ["LinearFile", "ridgefolder"]
    envs = stand_in["SRTUI_ENVS"]
    for row in rows:
        assert row["status"] == "ok", row
        assert row["method_notes"]["python"].startswith(envs), row["method_notes"]
        assert row["r2_test"] > 0.9 and row["fidelity_r2"] > 1 - 1e-9, row
        # the worker handed the string back as printed, over the numbered (the file) or the
        # standardised features; the driver composed it: the stored model is over the task's
        assert row["model"] != row["method_notes"]["model_as_printed"] and "X0" not in row["model"]
    [in_file] = [r for r in rows if r["method"] == "LinearFile"]
    assert in_file["method_notes"]["use_dataframe"] is False  # a 2021 file gets arrays: X0, X1, ...


@pytest.mark.slow  # two checks in an environment
def test_methods_check_runs_a_file_and_a_folder_in_an_environment(stand_in: dict[str, str], tmp_path: Path) -> None:
    _contract_in(stand_in)
    for method in _methods(tmp_path):
        out = srtui("methods", "check", str(method), "--env", "sklearn-0.24.1", "--json", env=stand_in)
        assert out.returncode == 0, (out.stdout, out.stderr)
        row = json.loads(out.stdout)
        assert row["status"] == "ok" and row["fidelity_r2"] > 1 - 1e-9 and "x0" in row["model"], row


def test_a_built_environment_without_the_contract_layer_is_extended_not_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sklearn-0.24.1 built before its contract layer existed (its marker holds the spec's
    fingerprint, which the layer does not change): `env create` installs pandas alone."""
    import sys

    from srtui.engine.methods.env_specs import get

    env = {"SRTUI_ENVS": str(tmp_path / "envs")}
    monkeypatch.setenv("SRTUI_ENVS", env["SRTUI_ENVS"])
    folder = tmp_path / "envs" / "sklearn-0.24.1"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").symlink_to(sys.executable)
    spec = get("sklearn-0.24.1").environment
    (folder / READY).write_text(spec.fingerprint())
    assert spec.ready() and spec.base_as_declared() and not spec.built_as_declared()
    # no pyvenv.cfg: not a virtual environment, so pip would install into the Python it links to
    # (seen: the base interpreter's pandas replaced); built again instead of extended
    out = srtui("env", "create", "sklearn-0.24.1", "--dry-run", env=env, check=True).stdout
    assert "venv --clear" in out and "adding what SRBench's method contracts use" not in out
    (folder / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    out = srtui("env", "create", "sklearn-0.24.1", "--dry-run", env=env, check=True).stdout
    assert "adding what SRBench's method contracts use: pandas==1.5.3" in out
    assert "pip install --disable-pip-version-check pandas==1.5.3" in out and "scikit-learn==0.24.1" not in out
    [row] = [
        r for r in json.loads(srtui("env", "list", "--json", env=env, check=True).stdout) if r["name"] == folder.name
    ]
    assert row["ready"] and row["contract"] == ["pandas==1.5.3"] and not row["contract_ready"]
    builtin = srtui("methods", "install", "sgd-sklearn024", "--dry-run", env=env, check=True).stdout
    assert "pandas==1.5.3" in builtin and "scikit-learn==0.24.1" not in builtin  # the same environment
    (folder / CONTRACT_READY).write_text(spec.contract_fingerprint())
    done = srtui("env", "create", "sklearn-0.24.1", env=env, check=True).stdout
    assert "already built from this spec" in done
    full = srtui("env", "create", "sklearn-0.24.1", "--dry-run", "--force", env=env, check=True).stdout
    assert full.index("scikit-learn==0.24.1") < full.index("pandas==1.5.3")  # a full build: the layer last
