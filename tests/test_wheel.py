"""The built wheel works on its own: entry point, packaged schemas, located messages.

How the wheel gets its dependencies without the network: the fresh venv is made
without ``--system-site-packages`` (so nothing from the checkout or an editable
install can stand in for the wheel), roofgen is installed into it with
``pip install --no-deps --no-index``, and a ``.pth`` file in the venv lists the
running interpreter's site-packages, where PyYAML, jsonschema, Pint and click
already are. A ``.pth`` line only appends a folder to ``sys.path``; the ``.pth``
files inside that folder (an editable install's hook among them) are not run,
and the venv's own site-packages comes first, so ``import roofgen`` is the
wheel's: the test asserts it.

Building needs hatchling. With hatchling installed in this environment the
wheel is built offline (``--no-isolation``); otherwise ``python -m build`` makes
an isolated build environment and installs hatchling from the package index.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
MINIMAL = REPO / "tests" / "cases" / "valid" / "minimal"


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 240):
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("build") is None:
        pytest.skip("the 'build' package is not installed (pip install -e '.[test]')")
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out)]
    if importlib.util.find_spec("hatchling") is not None:
        cmd.append("--no-isolation")  # offline
    result = _run(cmd, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    wheels = list(out.glob("roofgen-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("venv") / "v"
    result = _run([sys.executable, "-m", "venv", str(root)], cwd=root.parent)
    assert result.returncode == 0, result.stderr
    python = _bin(root, "python")
    result = _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
        cwd=root.parent,
        env=_env(),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        cwd=root.parent,
    ).stdout.strip()
    ours = dict.fromkeys(
        [
            *site.getsitepackages(),
            sysconfig.get_paths()["purelib"],
            sysconfig.get_paths()["platlib"],
        ]
    )
    (Path(purelib) / "zz_running_interpreter.pth").write_text(
        "".join(f"{p}\n" for p in ours if Path(p).is_dir()), encoding="utf-8"
    )
    return root


def _bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PYTHONNOUSERSITE="1", NO_COLOR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A copy of the minimal valid specs in a folder outside the checkout."""
    work = tmp_path / "specs"
    shutil.copytree(MINIMAL, work)
    assert REPO not in work.resolve().parents
    return work


def test_imports_the_wheel_not_the_checkout(venv: Path, workdir: Path) -> None:
    code = (
        "import roofgen, roofgen.datafiles as r\n"
        "print(roofgen.__file__)\nprint(r.schema_path('case'))"
    )
    result = _run([str(_bin(venv, "python")), "-c", code], cwd=workdir, env=_env())
    assert result.returncode == 0, result.stderr
    module, schema = result.stdout.splitlines()
    assert Path(module).resolve().is_relative_to(venv.resolve())
    assert Path(schema).resolve().is_relative_to(venv.resolve())
    assert Path(schema).parent.parent.name == "_data"


def test_check_passes_on_valid_specs(venv: Path, workdir: Path) -> None:
    result = _run([str(_bin(venv, "roofgen")), "check", "."], cwd=workdir, env=_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 file(s) checked: 0 error(s)" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_schema_is_packaged(venv: Path, workdir: Path) -> None:
    result = _run([str(_bin(venv, "roofgen")), "schema", "case"], cwd=workdir, env=_env())
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert printed == json.loads((REPO / "schemas" / "case.schema.json").read_text("utf-8"))
    assert printed["$id"].endswith("/case.schema.json")


def test_broken_specs_give_a_located_message(venv: Path, workdir: Path) -> None:
    machine = workdir / "machine.yaml"
    text = machine.read_text(encoding="utf-8")
    machine.write_text(text.replace("bandwidth: 1.5 TB/s", "bandwidth: 2.1 GHz"), "utf-8")
    result = _run([str(_bin(venv, "roofgen")), "check", "."], cwd=workdir, env=_env())
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "bandwidth:" in t)
    assert (
        f"machine.yaml:{line}:16: memory[0].bandwidth: '2.1 GHz' is a frequency, "
        "not a bandwidth; write e.g. '1.555 TB/s'"
    ) in result.stderr.splitlines()


def test_the_compiled_validators_are_packaged(venv: Path, workdir: Path) -> None:
    """The fast path's generated modules are in the wheel and taken by its check."""
    code = (
        "from roofgen.spec import fastpath\n"
        "print(all(fastpath.compiled(k) is not None for k in fastpath.KINDS))"
    )
    result = _run([str(_bin(venv, "python")), "-c", code], cwd=workdir, env=_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
