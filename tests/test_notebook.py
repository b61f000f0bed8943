"""The example notebook runs in a real kernel and every chart it shows carries a PNG and
its Vega-Lite spec, never a script; the ``[notebook]`` extra installs what the chart
code imports."""

from __future__ import annotations

import ast
import base64
import json
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from roofgen.api.workspace import VEGA_LITE_MIME

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "roofline.ipynb"


def _outputs() -> list[dict]:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]


@pytest.mark.slow
def test_the_example_notebook_runs_and_every_chart_has_a_png_and_its_spec():
    outputs = _outputs()
    assert not [o for o in outputs if o.output_type == "error"], outputs
    charts = [o for o in outputs if "data" in o and VEGA_LITE_MIME in o["data"]]
    assert len(charts) == 2
    for out in charts:
        data = out["data"]
        png = base64.b64decode(data["image/png"])
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        spec = data[VEGA_LITE_MIME]
        assert spec["usermeta"]["chart"] == "roofgen.hierarchical-roofline"
        assert data["text/plain"].startswith("<roofgen chart: ")
        width = out["metadata"]["image/png"]["width"]
        assert width * 2 == int.from_bytes(png[16:20], "big")
    for out in outputs:
        html = out.get("data", {}).get("text/html", "")
        assert not re.search(r"<script", html, re.IGNORECASE), html[:200]
    tables = [o for o in outputs if "text/html" in o.get("data", {})]
    assert any("efficiency" in o["data"]["text/html"] for o in tables)


# Third-party modules the notebook charts import, by the file that imports them.
CHART_CODE = ("roofgen/api/workspace.py", "roofgen/charts/render.py", "roofgen/report/tables.py")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "roofgen"}


def _modules(requirements: list[str]) -> set[str]:
    """The top-level modules the distributions of ``requirements`` install."""
    dists = {
        re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements
    }
    provided = metadata.packages_distributions()
    return {
        m for m, ds in provided.items() if any(d.lower().replace("_", "-") in dists for d in ds)
    }


def test_the_notebook_extra_installs_what_the_chart_code_imports():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    core = _modules(project["dependencies"])
    notebook = _modules(project["optional-dependencies"]["notebook"])
    needed = set().union(*(_imports(ROOT / f) for f in CHART_CODE))
    assert {"altair", "vl_convert", "pandas"} <= needed
    assert needed - core - notebook == set()


RUN_NOTEBOOK = """
import json, sys
import nbclient, nbformat
nb = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[2]}}).execute()
print(json.dumps([sorted(o.get("data", {})) for c in nb.cells if c.cell_type == "code"
                  for o in c.outputs if o.output_type != "error"]))
"""


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_notebook_runs_with_the_notebook_extra_alone(tmp_path):
    """roofgen with ``[notebook]`` only (and a kernel to run it in), in a fresh venv:
    no module the charts need is missing (``vl_convert`` was)."""
    import os
    import subprocess

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = [python, "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt"),
               f"{ROOT}[notebook]", "nbclient", "ipykernel"]  # fmt: skip
    done = subprocess.run(install, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    command = [python, "-c", RUN_NOTEBOOK, str(NOTEBOOK), str(NOTEBOOK.parent)]
    run = subprocess.run(
        command, env=env, cwd=NOTEBOOK.parent, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    kinds = json.loads(run.stdout.strip().splitlines()[-1])
    charts = [k for k in kinds if VEGA_LITE_MIME in k]
    assert len(charts) == 2
    assert all(k == sorted([VEGA_LITE_MIME, "image/png", "text/plain"]) for k in charts)
