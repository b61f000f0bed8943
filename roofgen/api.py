"""The library's entry points: check, analyse. The CLI calls only these."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from roofgen.analysis.analyse import Analysis, analyse
from roofgen.analysis.bounds import Thresholds
from roofgen.analysis.plausibility import (
    Rule,
    merge_rules,
    rules_from_data,
)
from roofgen.analysis.plausibility import (
    check as plausibility_check,
)
from roofgen.model import Specs
from roofgen.problems import Problem, Severity, sort_problems
from roofgen.spec import check_cache, schema
from roofgen.spec.load import load
from roofgen.spec.yamlload import load_file, load_text


@dataclass(frozen=True)
class CheckResult:
    """Everything `roofgen check` learns: problems (errors, warnings, notes) and results."""

    files: tuple[str, ...]
    problems: list[Problem]
    specs: Specs | None
    analysis: Analysis | None

    def failed(self, strict: bool = False) -> bool:
        bad = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
        return any(p.severity in bad for p in self.problems)


def shipped_rules() -> list[Rule]:
    text = resources.files("roofgen.rules").joinpath("plausibility.yaml").read_text("utf-8")
    doc, problems = load_text(text, "roofgen/rules/plausibility.yaml")
    assert doc is not None and not problems, problems
    return rules_from_data(doc.data)


def team_rules(path: Path) -> tuple[list[Rule], list[Problem]]:
    doc, problems = load_file(path)
    if doc is None:
        return [], problems
    problems = schema.validate(doc, "rules")
    if problems:
        return [], problems
    return rules_from_data(doc.data), []


def check(
    paths: Sequence[Path],
    *,
    thresholds: Thresholds | None = None,
    rules_file: Path | None = None,
    display_root: Path | None = None,
    cache_dir: Path | None = None,
) -> CheckResult:
    """Load, validate and analyse the specs under ``paths``; collect every problem.

    With ``cache_dir``, a result for byte-identical inputs (spec files, rules file,
    thresholds, and roofgen's own files) is read back instead of recomputed.
    """
    if cache_dir is None:
        return _check(paths, thresholds, rules_file, display_root)
    key = check_cache.key(paths, thresholds, rules_file, display_root)
    cached = check_cache.read(cache_dir, key)
    if isinstance(cached, CheckResult):
        return cached
    result = _check(paths, thresholds, rules_file, display_root)
    if not result.failed():
        check_cache.write(cache_dir, key, result)
    return result


def _check(
    paths: Sequence[Path],
    thresholds: Thresholds | None,
    rules_file: Path | None,
    display_root: Path | None,
) -> CheckResult:
    loaded = load(paths, display_root=display_root)
    problems = list(loaded.problems)
    rules = shipped_rules()
    if rules_file is not None:
        extra, found = team_rules(rules_file)
        problems += found
        rules = merge_rules(rules, extra)
    if loaded.specs is None or any(p.severity is Severity.ERROR for p in problems):
        return CheckResult(loaded.files, sort_problems(problems), None, None)
    analysis = analyse(loaded.specs, thresholds)
    for finding in plausibility_check(loaded.specs, analysis, rules):
        doc = loaded.case_documents[finding.case]
        severity = Severity.WARNING if finding.severity == "warning" else Severity.NOTE
        problems.append(
            doc.problem(finding.path, finding.message, severity=severity, code=finding.rule)
        )
    return CheckResult(loaded.files, sort_problems(problems), loaded.specs, analysis)
