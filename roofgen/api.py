"""The library's entry points: check, analyse, charts, explain, build. The CLI calls
only these; the notebook API (:mod:`roofgen.workspace`) builds on them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from roofgen.advice import Advice, RuleSet, advise
from roofgen.advice.load import shipped_ruleset, team_ruleset
from roofgen.analysis.analyse import Analysis, analyse
from roofgen.analysis.bounds import Thresholds
from roofgen.analysis.hygiene import check_cases
from roofgen.analysis.plausibility import (
    Finding,
    Rule,
    merge_rules,
    rules_from_data,
)
from roofgen.analysis.plausibility import (
    check as plausibility_check,
)
from roofgen.model import Specs
from roofgen.problems import Problem, Severity, sort_problems
from roofgen.spec import check_cache, quantity, schema
from roofgen.spec.load import load
from roofgen.spec.yamlload import Document, load_file, load_text


@dataclass(frozen=True)
class CheckResult:
    """Everything `roofgen check` learns: problems (errors, warnings, notes) and results."""

    files: tuple[str, ...]
    problems: list[Problem]
    specs: Specs | None
    analysis: Analysis | None
    findings: tuple[Finding, ...] = ()  # plausibility and hygiene findings, by case
    ruleset: RuleSet | None = None  # recommendation rules, shipped and the team's

    @cached_property
    def advice(self) -> Advice | None:
        """Recommendations per launch and per variant, computed on first use (`check`
        itself does not need them)."""
        if self.analysis is None or self.ruleset is None:
            return None
        return advise(self.analysis, self.ruleset)

    def failed(self, strict: bool = False) -> bool:
        bad = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
        return any(p.severity in bad for p in self.problems)


def shipped_rules() -> list[Rule]:
    text = resources.files("roofgen.rules").joinpath("plausibility.yaml").read_text("utf-8")
    doc, problems = load_text(text, "roofgen/rules/plausibility.yaml")
    assert doc is not None and not problems, problems
    return rules_from_data(doc.data)


def team_rules(path: Path) -> tuple[list[Rule], list[Problem]]:
    doc, problems = _team_document(path)
    return (rules_from_data(doc.data), []) if doc is not None else ([], problems)


def _team_document(
    path: Path, display_root: Path | None = None
) -> tuple[Document | None, list[Problem]]:
    """A team's rules file, validated: plausibility rules and recommendation rules."""
    shown = None
    if display_root is not None:
        try:
            shown = str(path.resolve().relative_to(display_root.resolve()))
        except ValueError:
            shown = None
    doc, problems = load_file(path, shown)
    if doc is None:
        return None, problems
    problems = schema.validate(doc, "rules")
    return (None, problems) if problems else (doc, [])


def check(
    paths: Sequence[Path],
    *,
    thresholds: Thresholds | None = None,
    rules_file: Path | None = None,
    display_root: Path | None = None,
    cache_dir: Path | None = None,
    on_miss: Callable[[], object] | None = None,
) -> CheckResult:
    """Load, validate and analyse the specs under ``paths``; collect every problem.

    With ``cache_dir``, a result for byte-identical inputs (spec files, rules file,
    thresholds, and roofgen's own files) is read back instead of recomputed.
    ``on_miss`` is called when the work starts, that is when no cached result serves
    (a build starts its chart renderers then: something changed).
    """
    if cache_dir is None:
        if on_miss is not None:
            on_miss()
        return _check(paths, thresholds, rules_file, display_root)
    key = check_cache.key(paths, thresholds, rules_file, display_root)
    cached = check_cache.read(cache_dir, key)
    if isinstance(cached, CheckResult):
        return cached
    if on_miss is not None:
        on_miss()
    # A miss: unchanged files still come from the per-file document cache, and units
    # parsed before from the unit table.
    units = Path(cache_dir) / f"units-{check_cache.roofgen_digest()[:16]}.json"
    held = quantity.read_unit_table(units)
    result = _check(paths, thresholds, rules_file, display_root, cache_dir)
    quantity.write_unit_table(units, held)
    if not result.failed():
        _ = result.advice  # computed now, so that the stored result holds it for builds
        check_cache.write(cache_dir, key, result)
    return result


def _check(
    paths: Sequence[Path],
    thresholds: Thresholds | None,
    rules_file: Path | None,
    display_root: Path | None,
    cache_dir: Path | None = None,
) -> CheckResult:
    loaded = load(paths, display_root=display_root, cache_dir=cache_dir)
    problems = list(loaded.problems)
    rules = shipped_rules()
    ruleset = shipped_ruleset()
    if rules_file is not None:
        team, found = _team_document(rules_file, display_root)
        problems += found
        if team is not None:
            rules = merge_rules(rules, rules_from_data(team.data))
            ruleset, found = team_ruleset(ruleset, team)
            problems += found
    if loaded.specs is None or any(p.severity is Severity.ERROR for p in problems):
        return CheckResult(loaded.files, sort_problems(problems), None, None)
    analysis = analyse(loaded.specs, thresholds)
    findings = plausibility_check(loaded.specs, analysis, rules)
    findings += check_cases(loaded.specs, analysis, rules)
    for finding in findings:
        doc = loaded.case_documents[finding.case]
        severity = Severity.WARNING if finding.severity == "warning" else Severity.NOTE
        problems.append(
            doc.problem(finding.path, finding.message, severity=severity, code=finding.rule)
        )
    return CheckResult(
        loaded.files, sort_problems(problems), loaded.specs, analysis, tuple(findings), ruleset
    )


# -- The rest of the CLI's entry points (the CLI imports only this module) -----------


def analysis_document(result: CheckResult) -> dict[str, Any]:
    """`roofgen analyze --format json`: the versioned analysis JSON."""
    from roofgen.report import analysis_json

    assert result.analysis is not None
    return analysis_json(result.analysis, result.problems, result.advice)


def analysis_text(result: CheckResult) -> str:
    """`roofgen analyze`: the analysis as text for a terminal."""
    from roofgen.report import analysis_text as text

    assert result.analysis is not None
    return text(result.analysis)


def analysis_csv(result: CheckResult) -> str:
    """`roofgen analyze --format csv`: one row per variant and launch, flattened by the
    rule of :mod:`roofgen.tables` (the same columns as ``Results.to_dataframe()``)."""
    from roofgen.tables import analysis_rows, rows_csv

    return rows_csv(analysis_rows(analysis_document(result)))


def kernel_chart(
    result: CheckResult, case_id: str, kernel: str, variant: str | None = None
) -> dict[str, Any]:
    """The Vega-Lite spec of one kernel's hierarchical roofline (all its variants, or
    one). Raises ValueError naming what exists when the case, kernel or variant does not."""
    from roofgen.charts import hierarchical_chart
    from roofgen.site.charts import kernel_chart_input
    from roofgen.site.context import resource_names

    assert result.analysis is not None and result.specs is not None
    case = next((c for c in result.analysis.cases if c.case.id == case_id), None)
    if case is None:
        known = ", ".join(c.case.id for c in result.analysis.cases)
        raise ValueError(f"no case {case_id!r} (cases: {known})")
    machines = result.specs.machines
    names: dict[str, str] = {}
    for v in case.variants:
        names |= resource_names(machines[v.machine])
    return hierarchical_chart(kernel_chart_input(case, machines, kernel, variant, names))


def write_chart(spec: dict[str, Any], target: Path) -> None:
    """Write a chart spec as .svg, .png, .html or .json (by the suffix), atomically."""
    import json

    from roofgen.charts import to_html, to_png, to_svg

    suffix = target.suffix.lower()
    if suffix == ".svg":
        data = to_svg(spec).encode("utf-8")
    elif suffix == ".png":
        data = to_png(spec)
    elif suffix == ".html":
        data = to_html(spec).encode("utf-8")
    else:
        data = (json.dumps(spec, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)


def explain_kernel(
    result: CheckResult,
    case_id: str,
    kernel: str,
    variant: str | None = None,
    *,
    rules_file: Path | None = None,
) -> Any:
    """`roofgen explain`: one kernel's launches explained (raises ExplainError)."""
    from roofgen.explain import explain

    assert result.analysis is not None and result.specs is not None
    return explain(result.analysis, result.specs, case_id, kernel, variant, rules_file=rules_file)


def build_site(*args: Any, **kwargs: Any) -> Any:
    """`roofgen build`: see :func:`roofgen.site.build.build_site`."""
    from roofgen.site.build import build_site as build

    return build(*args, **kwargs)


def schema_names() -> tuple[str, ...]:
    return tuple(schema.ALL_SCHEMAS)


def schema_document(name: str) -> dict[str, Any]:
    """`roofgen schema NAME`: one of the JSON Schemas."""
    return schema.load_schema(name)


def serve(*args: Any, **kwargs: Any) -> Any:
    """`roofgen serve`: see :func:`roofgen.site.serve.serve`."""
    from roofgen.site.serve import serve as run

    return run(*args, **kwargs)


# Names the commands use, imported from here on first use (PEP 562), so that the
# CLI has one way into the library and `import roofgen.api` stays light.
_REEXPORTS = {
    "ExplainError": "roofgen.explain",
    "parse_selector": "roofgen.explain",
    "explanation_json": "roofgen.explain",
    "explanation_text": "roofgen.explain",
    "discover": "roofgen.spec.load",
    "QuantityError": "roofgen.spec.quantity",
    "parse_quantity": "roofgen.spec.quantity",
    "CURRENT": "roofgen.spec.migrate",
    "MigrationError": "roofgen.spec.migrate",
    "migrate_text": "roofgen.spec.migrate",
    "read_version": "roofgen.spec.migrate",
}


def __getattr__(name: str) -> Any:
    module = _REEXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'roofgen.api' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)
