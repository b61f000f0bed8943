"""The shape of the code: layers that only point down, no import cycles, every
package placed in a layer, and modules a reader can hold in their head.

The contracts live in pyproject.toml (``[tool.importlinter]``); ARCHITECTURE.md
explains them.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "roofgen"
MAX_LINES = 500

# A ratchet: modules still over MAX_LINES, each with its reason and the most lines it
# may have. An entry may only shrink or go; a module not listed may not pass 500.
OVER_LIMIT: dict[str, tuple[int, str]] = {}


def _contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def test_import_contracts_hold() -> None:
    """import-linter's layer, leaf and acyclic contracts, imports inside functions
    included (``if TYPE_CHECKING`` imports excluded)."""
    code = (
        "import sys\n"
        "from importlinter.cli import lint_imports\n"
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout, run.stdout


def _top_level_names() -> set[str]:
    names = {f"roofgen.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    names |= {f"roofgen.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    return names


def test_every_package_and_module_has_a_layer() -> None:
    """A new package or top-level module must be placed, or the layers say nothing of it."""
    placed: set[str] = set()
    for contract in _contracts():
        if contract["type"] == "layers":
            for layer in contract["layers"]:
                placed |= {name.strip() for name in layer.split("|")}
        if contract["type"] == "forbidden":
            placed |= set(contract["source_modules"])
    missing = sorted(_top_level_names() - placed - {"roofgen.rules"})
    assert not missing, f"place these in pyproject.toml's layers: {missing}"


def test_charts_contract_names_every_other_package() -> None:
    """The charts leaf forbids every other part of roofgen, so a new one is covered too."""
    (charts,) = [c for c in _contracts() if c.get("source_modules") == ["roofgen.charts"]]
    allowed = {"roofgen.charts", "roofgen.rules", "roofgen.units"}
    assert set(charts["forbidden_modules"]) == _top_level_names() - allowed


def _lines(path: Path) -> int:
    return len(path.read_text("utf-8").splitlines())


def test_modules_stay_small() -> None:
    sizes = {str(p.relative_to(ROOT)): _lines(p) for p in PACKAGE.rglob("*.py")}
    over = {
        name: n
        for name, n in sizes.items()
        if n > MAX_LINES and n > OVER_LIMIT.get(name, (MAX_LINES, ""))[0]
    }
    assert not over, f"modules over {MAX_LINES} lines (split them along their seams): {over}"
    stale = {name: n for name, (n, _) in OVER_LIMIT.items() if sizes.get(name, 0) <= MAX_LINES}
    assert not stale, f"these modules are back under {MAX_LINES} lines: drop them from OVER_LIMIT"
