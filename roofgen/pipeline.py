"""The pipeline from spec files to checked results: load, validate, analyse, the
plausibility and hygiene findings, and (on first use) the recommendations.

:func:`check` is what `roofgen check` runs and what every later stage starts from:
the site build, ``roofgen new case``, the notebook API and the CLI all read its
:class:`CheckResult`; none of them analyses again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from roofgen.analysis.analyse import Analysis, CaseResult, analyse, case_result, machine_result
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
from roofgen.spec import build, check_cache, quantity, schema
from roofgen.spec.load import load, survey
from roofgen.spec.result_cache import ResultCache
from roofgen.spec.yamlload import Document, load_file, load_text

if TYPE_CHECKING:  # the recommendations are imported where used: `check` needs none
    from roofgen.advice import Advice, RuleSet


@dataclass(frozen=True)
class CheckResult:
    """Everything `roofgen check` learns: problems (errors, warnings, notes) and results."""

    files: tuple[str, ...]
    problems: list[Problem]
    specs: Specs | None
    analysis: Analysis | None
    findings: tuple[Finding, ...] = ()  # plausibility and hygiene findings, by case
    ruleset: RuleSet | None = None  # recommendation rules, shipped and the team's
    # With ``reuse``: the ids of the cases neither built nor analysed (not in ``specs``,
    # ``analysis`` or ``findings``; their findings are in ``problems``), and each case's
    # (document key, digest of the machines it names).
    reused: frozenset[str] = frozenset()
    case_keys: dict[str, tuple[str, str]] = field(default_factory=dict)

    @cached_property
    def advice(self) -> Advice | None:
        """Recommendations per launch and per variant, computed on first use (`check`
        itself does not need them)."""
        if self.analysis is None or self.ruleset is None:
            return None
        from roofgen.advice import advise

        return advise(self.analysis, self.ruleset)

    def failed(self, strict: bool = False) -> bool:
        bad = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
        return any(p.severity in bad for p in self.problems)


def shipped_rules() -> list[Rule]:
    text = resources.files("roofgen.rules").joinpath("plausibility.yaml").read_text("utf-8")
    doc, problems = load_text(text, "roofgen/rules/plausibility.yaml")
    assert doc is not None and not problems, problems
    return rules_from_data(doc.data)


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
    problems_only: bool = False,
    reuse: Callable[[str, str], bool] | None = None,
) -> CheckResult:
    """Load, validate and analyse the specs under ``paths``; collect every problem.

    With ``cache_dir``, files unchanged since an earlier check are not parsed and
    validated again, and units parsed before come from its unit table; the checks
    across files and the analysis always run. ``on_miss`` is called when the work
    starts, unless a recent check of byte-identical inputs (spec files, rules file,
    thresholds, and roofgen's own files) passed: a build starts its chart renderers
    then, since something changed.

    With ``problems_only`` (`roofgen check`) and ``cache_dir``, the findings of case
    files unchanged since an earlier check come from the cache too
    (:mod:`roofgen.spec.result_cache`): those cases are neither built nor analysed,
    and the result holds the problems only (no specs, no analysis). With
    ``problems_only`` the result holds no recommendation rules either (a team's rules
    file is still checked): `check` imports no recommendation engine.

    With ``reuse(document_key, machines_digest)`` (the site build's, which holds the
    pages of unchanged cases: :meth:`roofgen.site.casecache.Reuse.known`) and
    ``cache_dir``, a case whose findings are in the cache and for which ``reuse`` is
    true is neither built nor analysed either: its findings are in the problems, and
    its id in the result's ``reused``; the other cases are in the specs and the
    analysis as without it.
    """
    if cache_dir is None:
        if on_miss is not None:
            on_miss()
        return _check(paths, thresholds, rules_file, display_root)
    key = check_cache.key(paths, thresholds, rules_file, display_root)
    if on_miss is not None and not check_cache.passed_before(cache_dir, key):
        on_miss()
    return _with_cache(
        cache_dir,
        key,
        lambda: _check(
            paths, thresholds, rules_file, display_root, cache_dir, problems_only, reuse
        ),
    )


def _check(
    paths: Sequence[Path],
    thresholds: Thresholds | None,
    rules_file: Path | None,
    display_root: Path | None,
    cache_dir: Path | None = None,
    problems_only: bool = False,
    reuse: Callable[[str, str], bool] | None = None,
) -> CheckResult:
    # A result with problems only holds no recommendation rules (`check` imports no
    # recommendation engine), but a team's rules file is still checked.
    rules, ruleset, problems = _rules(rules_file, display_root, not problems_only)
    known = skip = None
    if (problems_only or reuse) and cache_dir is not None and not problems:
        known = ResultCache(cache_dir, repr((1, thresholds, rules)))
        skip = known.known if reuse is None else _both(known.known, reuse)
    loaded = load(paths, display_root=display_root, cache_dir=cache_dir, known=skip)
    problems += loaded.problems
    if loaded.specs is None or _has_error(problems):
        return CheckResult(loaded.files, sort_problems(problems), None, None)
    analysis = analyse(loaded.specs, thresholds)
    findings = plausibility_check(loaded.specs, analysis, rules)
    findings += check_cases(loaded.specs, analysis, rules)
    by_case: dict[str, list[Problem]] = {c.id: [] for c in loaded.specs.cases}
    for finding in findings:
        by_case[finding.case].append(_located(loaded.case_documents[finding.case], finding))
    for case_problems in by_case.values():
        problems += case_problems
    if known is not None:
        problems += known.remember(loaded.case_keys, loaded.skipped, by_case)
    if known is not None and problems_only:
        return CheckResult(loaded.files, sort_problems(problems), None, None)
    return CheckResult(
        loaded.files, sort_problems(problems), loaded.specs, analysis, tuple(findings), ruleset,
        loaded.skipped, loaded.case_keys,
    )  # fmt: skip


def _both(
    known: Callable[[str, str], bool], reuse: Callable[[str, str], bool]
) -> Callable[[str, str], bool]:
    """A case is skipped when its findings are known and the caller can do without it."""
    return lambda document_key, machines: (
        known(document_key, machines) and reuse(document_key, machines)
    )


def check_each(
    paths: Sequence[Path],
    each: Callable[[CaseResult, Advice], None],
    *,
    thresholds: Thresholds | None = None,
    rules_file: Path | None = None,
    display_root: Path | None = None,
    cache_dir: Path | None = None,
) -> CheckResult:
    """:func:`check` one case at a time, with each case's recommendations: the
    machines are loaded first, then each case is read, checked, built, analysed and
    handed to ``each`` (in the order of their ids, as :func:`check`'s analysis holds
    them) and let go, so that the memory held is that of the machines and one case.
    The result holds the problems (the same as :func:`check`'s), and an analysis of the
    machines only (its ``cases`` empty); when it failed (an error), ``each`` may have
    been called for some cases before the error was found.
    """
    if cache_dir is None:
        return _check_each(paths, each, thresholds, rules_file, display_root, None)
    return _with_cache(
        cache_dir,
        check_cache.key(paths, thresholds, rules_file, display_root),
        lambda: _check_each(paths, each, thresholds, rules_file, display_root, cache_dir),
    )


def _check_each(
    paths: Sequence[Path],
    each: Callable[[CaseResult, Advice], None],
    thresholds: Thresholds | None,
    rules_file: Path | None,
    display_root: Path | None,
    cache_dir: Path | None,
) -> CheckResult:
    from roofgen.advice import advise

    t = thresholds or Thresholds()
    rules, ruleset, problems = _rules(rules_file, display_root, True)
    assert ruleset is not None
    with quantity.parsed_once():
        surveyed = survey(paths, display_root=display_root, cache_dir=cache_dir)
        problems += surveyed.problems
        failed = _has_error(problems)
        machines = {} if failed else surveyed.build_machines()
        results = tuple(machine_result(m) for _, m in sorted(machines.items()))
        by_id = {r.machine.id: r for r in results}
        found_later: list[Problem] = []  # the findings: reported only if nothing failed
        for ident in sorted(surveyed.cases):
            doc, found = surveyed.case_document(ident)
            problems += found
            failed = failed or doc is None or _has_error(found)
            if failed or doc is None:
                continue  # the other cases are still checked, not analysed
            case = build.case(doc.data, doc.file)
            analysis = Analysis(t, results, (case_result(case, by_id, t),))
            specs = Specs(machines, (case,))
            findings = plausibility_check(specs, analysis, rules)
            findings += check_cases(specs, analysis, rules)
            found_later += [_located(doc, f) for f in findings]
            each(analysis.cases[0], advise(analysis, ruleset))
    if not failed:
        problems += found_later
    return CheckResult(
        surveyed.files, sort_problems(problems), None, Analysis(t, results, ()), (), ruleset
    )


def _with_cache(cache_dir: Path, key: str, run: Callable[[], CheckResult]) -> CheckResult:
    """``run()``, a check with ``cache_dir``: with the cache's unit table, and recorded
    under ``key`` (:mod:`roofgen.spec.check_cache`) when it passed."""
    with _unit_table(cache_dir):
        result = run()
    if not result.failed():
        check_cache.remember(cache_dir, key)
    return result


@contextlib.contextmanager
def _unit_table(cache_dir: Path) -> Iterator[None]:
    """Units parsed by an earlier check from the cache's unit table; the table written
    back, with the units parsed since, when the check returns."""
    units = Path(cache_dir) / f"units-{check_cache.roofgen_digest()[:16]}.json"
    held = quantity.read_unit_table(units)
    yield
    quantity.write_unit_table(units, held)


def _rules(
    rules_file: Path | None, display_root: Path | None, recommendations: bool
) -> tuple[list[Rule], RuleSet | None, list[Problem]]:
    """The plausibility rules and (with ``recommendations``) the recommendation rules:
    the shipped ones, merged with a team's ``rules_file`` (checked either way); and the
    problems of that file."""
    problems: list[Problem] = []
    rules = shipped_rules()
    ruleset = None
    if recommendations:
        from roofgen.advice.load import shipped_ruleset

        ruleset = shipped_ruleset()
    if rules_file is not None:
        team, found = _team_document(rules_file, display_root)
        problems += found
        if team is not None:
            from roofgen.advice.load import shipped_ruleset, team_ruleset

            rules = merge_rules(rules, rules_from_data(team.data))
            ruleset, found = team_ruleset(ruleset or shipped_ruleset(), team)
            problems += found
    return rules, ruleset, problems


def _located(doc: Document, finding: Finding) -> Problem:
    """A plausibility or hygiene finding as a problem located in its case file."""
    severity = Severity.WARNING if finding.severity == "warning" else Severity.NOTE
    return doc.problem(finding.path, finding.message, severity=severity, code=finding.rule)


def _has_error(problems: list[Problem]) -> bool:
    return any(p.severity is Severity.ERROR for p in problems)
