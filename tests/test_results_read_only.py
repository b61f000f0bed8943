"""Every roofline kind is computed once, in the analysis; the site only reads results.

* No module under ``roofgen/site/`` imports anything from ``roofgen.analysis`` but classes
  (result types, for annotations and ``result.get(Kind)``), and none calls one.
* A kind is computed on first use and kept on the result: ``roofgen check`` pays for no
  kind nobody reads, a kind read twice is the same object, and kept kinds survive the
  pickle of the check cache.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
from pathlib import Path

import pytest

from roofgen.analysis.analyse import Analysis, LaunchResult
from roofgen.analysis.energy import EnergyResult, StepEnergy
from roofgen.analysis.kinds import LAUNCH_KINDS, VARIANT_KINDS
from roofgen.analysis.precision import PrecisionResult
from roofgen.analysis.runtime import RuntimeResult
from roofgen.api import check

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "roofgen" / "site"
SPECS = ROOT / "specs"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(tree: ast.AST, module: str, is_package: bool) -> tuple[list[str], set[str]]:
    """What ``tree`` takes from roofgen.analysis that is not a class; the names it binds."""
    problems = []
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("roofgen.analysis"):
                    problems.append(f"line {node.lineno}: imports the module {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            source_module = _absolute(node, module, is_package)
            for alias in node.names:
                full = f"{source_module}.{alias.name}"
                if not (source_module.startswith("roofgen.analysis") or full == "roofgen.analysis"):
                    continue
                obj = getattr(importlib.import_module(source_module), alias.name, None)
                if not inspect.isclass(obj):
                    problems.append(f"line {node.lineno}: imports {full}, not a class")
                imported.add(alias.asname or alias.name)
    return problems, imported


def _calls(tree: ast.AST, imported: set[str]) -> list[str]:
    """Every call of a name in ``imported``, or of an attribute of one."""
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in imported:
                problems.append(f"line {node.lineno}: calls {ast.unparse(node.func)}")
    return problems


def analysis_uses(source: str, module: str, is_package: bool = False) -> list[str]:
    """What ``source`` (the module ``module``) takes from ``roofgen.analysis`` that is not
    a class, and every call of a name it imported from there (constructors and class
    methods included: building a result is computing it)."""
    tree = ast.parse(source)
    problems, imported = _imports(tree, module, is_package)
    return problems + _calls(tree, imported)


SITE_MODULES = sorted(SITE.rglob("*.py"))


@pytest.mark.parametrize("path", SITE_MODULES, ids=lambda p: str(p.relative_to(SITE)))
def test_site_module_only_reads_results(path: Path) -> None:
    module = _module_name(path)
    problems = analysis_uses(path.read_text("utf-8"), module, path.name == "__init__.py")
    assert problems == [], f"{module} computes instead of reading results: {problems}"


def test_the_read_only_check_catches_what_it_forbids() -> None:
    source = (
        "from roofgen.analysis.analyse import LaunchResult\n"
        "from roofgen.analysis.bounds import launch_bounds\n"
        "from roofgen.analysis.energy import EnergyResult as E\n"
        "import roofgen.analysis.compare\n"
        "from ..analysis import prepare\n"
        "def f(r: LaunchResult):\n"
        "    r.get(E)\n"  # reading a kind: allowed
        "    E.of(r.inputs)\n"  # computing it here: forbidden
        "    LaunchResult(**{})\n"
    )
    found = analysis_uses(source, "roofgen.site.x")
    assert found == [
        "line 2: imports roofgen.analysis.bounds.launch_bounds, not a class",
        "line 4: imports the module roofgen.analysis.compare",
        "line 5: imports roofgen.analysis.prepare, not a class",
        "line 8: calls E.of",
        "line 9: calls LaunchResult",
    ]


# ------------------------------------------------------------------ lazy, kept, pickled


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    result = check([SPECS])
    assert result.analysis is not None
    return result.analysis


def _launches(analysis: Analysis) -> list[LaunchResult]:
    return [r for c in analysis.cases for v in c.variants for r in v.launches]


def _kept(holder: object) -> dict[type, object]:
    kept: dict[type, object] = vars(holder).get("_kinds", {})
    return kept


def test_check_computes_no_kind_nobody_read() -> None:
    result = check([SPECS])
    assert result.analysis is not None
    launches = _launches(result.analysis)
    # The verdicts read the energy (power-limited) and the runtime floor (launch-bound):
    # nothing else is computed until someone asks.
    for r in launches:
        assert set(_kept(r.inputs)) <= {EnergyResult}
    for c in result.analysis.cases:
        for v in c.variants:
            assert set(_kept(v.inputs)) == {RuntimeResult}
        assert "comparison" not in vars(c)


def test_a_kind_is_computed_once_and_kept(analysis: Analysis) -> None:
    r = next(x for x in _launches(analysis) if x.case == "gemm-large")
    first = r.get(PrecisionResult)
    assert r.get(PrecisionResult) is first
    assert _kept(r.inputs)[PrecisionResult] is first
    step = analysis.cases[0].variants[0]
    energy = step.get(StepEnergy)
    # the step's energy reads its launches' energies: the same objects the launches keep
    assert all(_kept(x.inputs)[EnergyResult] is x.get(EnergyResult) for x in step.launches)
    assert step.get(StepEnergy) is energy


def test_kept_kinds_and_the_inputs_survive_the_check_cache_pickle(analysis: Analysis) -> None:
    for r in _launches(analysis):
        for _, kind in LAUNCH_KINDS:
            r.get(kind)
    back = pickle.loads(pickle.dumps(analysis, protocol=pickle.HIGHEST_PROTOCOL))
    for before, after in zip(_launches(analysis), _launches(back), strict=True):
        assert after.get(PrecisionResult) == before.get(PrecisionResult)
    for case in back.cases:
        for v in case.variants:
            for _, kind in VARIANT_KINDS:  # computed after the pickle: the inputs came along
                assert v.get(kind) is not None
        assert case.comparison.case == case.case.id
