"""`roofgen diff BASE HEAD`: what a change did to the kernels and the roofs.

Each side is a folder of specs or ``git:REV`` (the configured specs folders as
they were at that revision, read from git's objects by :mod:`roofgen.review.gitread`:
the working tree is not touched, and ``.gitattributes`` cannot hide a file).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import click

from roofgen.commands.ci_output import append_step_summary
from roofgen.commands.common import (
    EXIT_INVALID,
    EXIT_REGRESSION,
    Failure,
    common,
    current_settings,
    end_progress,
    json_text,
    report_problems,
    say,
    shown,
    start_progress,
    write_output,
)

_ID = r"[a-z0-9][a-z0-9._-]*"
_REMOVED = re.compile(rf"^{_ID}(/{_ID})?$")
_CONTEXT = re.compile(rf"^(settings|rules|machine:{_ID})$")
_BARE = "\0"  # what a bare --allow-removed gives (click's flag_value)


def _percent(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A limit in percent: a finite number, not negative (nan, inf, -1 would let every
    slowdown through)."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise click.BadParameter(f"{value} is not a limit: write a finite number of percent, "
                                 "0 or more (e.g. 5)", ctx, param)  # fmt: skip
    return value


def _names(pattern: re.Pattern[str], form: str) -> Any:
    """A callback checking each value of a repeatable --allow-* option against ``form``."""

    def check(ctx: click.Context, param: click.Parameter,
              values: tuple[str, ...]) -> frozenset[str]:  # fmt: skip
        for value in values:
            if value == _BARE:
                raise click.BadParameter(
                    f"name what may go: write --{str(param.name).replace('_', '-')} {form} "
                    "(repeat the option for each); a bare flag allowing everything is gone",
                    ctx, param)  # fmt: skip
            if not pattern.match(value):
                shown = value.encode("unicode_escape").decode("ascii")[:80]
                raise click.BadParameter(f"{shown!r} is not {form}", ctx, param)
        return frozenset(values)

    return check


@click.command("diff")
@click.argument("base")
@click.argument("head")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json", "text"]),
              default="markdown", help="markdown: for a pull-request comment (also added "
              "to $GITHUB_STEP_SUMMARY when that names a file).")  # fmt: skip
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@click.option("--threshold", "threshold_pct", type=float, metavar="PCT", callback=_percent,
              help="A kernel counts as faster or slower beyond PCT percent (default: "
              "--fail-on-regression's PCT, else 5).")  # fmt: skip
@click.option("--fail-on-regression", "fail_pct", type=float, metavar="PCT", callback=_percent,
              help="Exit 3 on a significant regression slower than PCT percent (a finite "
              "number, 0 or more), and on what would hide one: a removed case, variant or "
              "kernel, a slowdown beyond PCT of unknown noise or inside a widened head "
              "interval, a changed settings, rules or machine file.")  # fmt: skip
@click.option("--allow-removed", "allow_removed", multiple=True, is_flag=False,
              flag_value=_BARE, metavar="CASE[/VARIANT]",
              callback=_names(_REMOVED, "CASE or CASE/VARIANT"),
              help="With the gate: this case (with its variants and kernels) or this variant "
              "(with its kernels) may be missing at HEAD. Repeatable.")  # fmt: skip
@click.option("--allow-noise", "allow_noise", multiple=True, metavar="CASE[/VARIANT]",
              callback=_names(_REMOVED, "CASE or CASE/VARIANT"),
              help="With the gate: a slowdown here beyond PCT whose noise is unknown (no "
              "timing interval) or whose head interval widened to cover it does not fail. "
              "Repeatable.")  # fmt: skip
@click.option("--allow-context", "allow_context", multiple=True,
              metavar="settings|rules|machine:ID",
              callback=_names(_CONTEXT, "settings, rules or machine:ID"),
              help="With the gate: a change of the settings file, the rules file or the "
              "machine file ID between BASE and HEAD does not fail. Repeatable.")  # fmt: skip
@click.option("--mermaid", is_flag=True,
              help="markdown: add a Mermaid bar chart of the kernels' speedups (drawn by "
              "github.com in comments).")  # fmt: skip
@click.option("--charts", "charts_dir", type=click.Path(file_okay=False),
              help="Write static SVG charts of the changed cases here (default: beside the "
              "report when -o names a file).")  # fmt: skip
@common
def diff_cmd(base: str, head: str, fmt: str, output: str, force: bool,
             threshold_pct: float | None, fail_pct: float | None,
             allow_removed: frozenset[str], allow_noise: frozenset[str],
             allow_context: frozenset[str], mermaid: bool, charts_dir: str | None,
             strict: bool, quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Compare two sets of specs: BASE and HEAD are folders or git:REV.

    A git:REV side reads its specs where that revision's own settings put them; the
    thresholds and the rules file come from BASE's settings (the working tree's when
    BASE is a folder), never from HEAD's."""
    import tempfile

    from roofgen.files import write_file
    from roofgen.review.comment import Options, markdown
    from roofgen.review.diff import diff
    from roofgen.review.gate import Policy, failures, reasons
    from roofgen.review.report import json_doc, text
    from roofgen.review.revision import context_changes

    settings = current_settings()
    pct = threshold_pct if threshold_pct is not None else fail_pct if fail_pct is not None else 5
    threshold = pct / 100.0
    progress = start_progress(quiet, "diff")
    with contextlib.ExitStack() as stack:
        stack.callback(end_progress, progress)  # last, after the sides' folders are gone
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="roofgen-diff-")))
        base_src = _source(base, settings, scratch / "base")
        head_src = _source(head, settings, scratch / "head")
        policy = base_src.settings  # never the head's
        base_specs, base_analysis = _check(base_src, policy, progress)
        head_specs, head_analysis = _check(head_src, policy, progress)
        d = diff(base_specs, base_analysis, head_specs, head_analysis)
        context = context_changes(base_src.context, head_src.context, d.machines_changed)
        allowed = Policy((fail_pct or 0) / 100.0, allow_removed, allow_noise, allow_context)
        gate = None if fail_pct is None else tuple(reasons(d, context, allowed))
        folder = Path(charts_dir) if charts_dir else None
        if folder is None and output != "-":
            folder = Path(output).with_name(Path(output).stem + "-charts")
        svgs = _charts(d, head_specs, head_analysis, base_analysis, folder) if folder else {}
        if fmt == "markdown":
            opts = Options(threshold, settings.site.get("url"), settings.site.get("preview_url"),
                           mermaid, shown(folder) + "/" if svgs and folder else None,
                           context=context, gate=gate, limit=fail_pct)  # fmt: skip
            report = markdown(d, base_src.side, head_src.side, opts)
            append_step_summary(report)
        elif fmt == "json":
            report = json_text(json_doc(d, base_src.side, head_src.side, threshold, context,
                                        gate, fail_pct))  # fmt: skip
        else:
            report = text(d, base_src.side, head_src.side, threshold, context, gate)
        write_output(report, output, force)
        for target, svg in svgs.items():
            write_file(target, svg)
            if not quiet:
                say(f"wrote {target}")
    failed = failures(list(gate or ()))
    for r in failed:
        allow = f" (if intended, pass {r.allow})" if r.allow else ""
        say(f"the gate fails at {_shown_rev(head)}: {_shown_rev(r.subject)}: {r.what}{allow}",
            fg="red")  # fmt: skip
    if failed:
        raise Failure(EXIT_REGRESSION)


@dataclass(frozen=True)
class _Source:
    """One side before it is checked: as shown, the paths of its specs and where their
    names are shown from, its settings and its context."""

    side: Any
    paths: list[Path]
    display: Path
    settings: Any
    context: Any


def _source(spec: str, settings: Any, scratch: Path) -> _Source:
    """A folder (read with the working tree's settings), or git:REV: the specs folders
    that revision's own settings name, read from git's objects into ``scratch``."""
    from roofgen.review.comment import Side
    from roofgen.review.gitread import GitReadError, toplevel
    from roofgen.review.revision import working_context

    if spec.startswith("git:"):
        return _export(spec, settings, scratch)
    if not Path(spec).exists():
        say(f"{spec}: no such folder (give a folder of specs or git:REV)")
        raise Failure(EXIT_INVALID)
    try:
        top: Path | None = toplevel(Path.cwd())
    except GitReadError:
        top = None
    return _Source(Side(spec), [Path(spec)], Path.cwd(), settings,
                   working_context(settings, top))  # fmt: skip


def _check(src: _Source, policy: Any, progress: Any = None) -> tuple[Any, Any]:
    """The specs and analysis of one side, judged by ``policy`` (the base's settings:
    thresholds and rules file)."""
    from roofgen.api import analyse, check
    from roofgen.model import Specs

    if progress is not None:
        progress(f"checking {_shown_rev(src.side.name)}", 0, 0)
    if not src.paths:  # no specs folder at that revision
        return Specs({}, ()), analyse(Specs({}, ()), policy.thresholds)
    result = check(src.paths, thresholds=policy.thresholds, rules_file=policy.rules,
                   display_root=src.display)  # fmt: skip
    if result.failed() or result.specs is None or result.analysis is None:
        say(f"{_shown_rev(src.side.name)}: the specs are invalid:")
        report_problems(result.problems, quiet=True, verbose=False, strict=False)
        raise Failure(EXIT_INVALID)
    return result.specs, result.analysis


def _export(spec: str, settings: Any, scratch: Path) -> _Source:
    """git:REV: its settings as committed there (found from the working folder up), and
    the spec files of the folders they name, extracted under ``scratch``."""
    from roofgen.review.comment import Side
    from roofgen.review.gitread import GitReadError, export, resolve, toplevel
    from roofgen.review.revision import read_revision

    rev = spec[4:]
    try:
        top = toplevel(Path.cwd())
        commit = resolve(top, rev)
        here = PurePosixPath(Path.cwd().resolve().relative_to(top.resolve()).as_posix())
        revision = read_revision(top, commit, here, scratch / "settings",
                                 f"git:{_shown_rev(rev)}")  # fmt: skip
        paths = export(top, commit, list(revision.folders), scratch / "tree")
    except GitReadError as exc:
        say(f"git:{_shown_rev(rev)}: {exc}")
        raise Failure(EXIT_INVALID) from None
    return _Source(Side(spec, commit), paths, scratch / "tree", revision.settings,
                   revision.context)  # fmt: skip


def _shown_rev(rev: str) -> str:
    """The revision as given, safe to print (control characters escaped, shortened)."""
    text = rev.encode("unicode_escape").decode("ascii")
    return text if len(text) <= 80 else text[:77] + "..."


def _launches(analysis: Any) -> Iterator[tuple[str, str, Any, int]]:
    """(case, variant, launch result, occurrence of its kernel) for every launch."""
    for case in analysis.cases:
        for v in case.variants:
            seen: dict[str, int] = {}
            for r in v.launches:
                seen[r.kernel] = seen.get(r.kernel, 0) + 1
                yield case.case.id, v.variant, r, seen[r.kernel]


def _charts(d: Any, head_specs: Any, head: Any, base: Any, folder: Path) -> dict[Path, str]:
    """Static SVG hierarchical rooflines of the changed launches, base -> head, by the
    file each goes to: kernels and memory levels by their display names (as the roofs
    are), base points hollow and head points filled."""
    try:
        from roofgen.charts import hierarchical_chart
        from roofgen.charts.inputs import ChartPoint, RooflineInput
        from roofgen.charts.render import to_svg
        from roofgen.site.charts import machine_roofs
    except ImportError:
        say("charts need roofgen[site] (altair, vl-convert-python): none written")
        return {}
    changed = {(c.case, c.variant, c.kernel, c.occurrence) for c in d.launches
               if c.status == "changed"}  # fmt: skip
    by_case: dict[str, list[Any]] = {}
    for side, analysis in (("base", base), ("head", head)):
        for case_id, variant, r, n in _launches(analysis):
            if (case_id, variant, r.kernel, n) in changed and r.achieved_flop_per_s:
                machine = head_specs.machines.get(r.machine)
                name = d.kernel_names.get((case_id, r.kernel)) or r.kernel
                label = f"{name} ({variant})" + (f" #{n}" if n > 1 else "")
                for level, ai in r.intensity_flop_per_byte.items():
                    found = machine.level(level) if machine is not None else None
                    by_case.setdefault(case_id, []).append(ChartPoint(
                        case=case_id, kernel=label, variant=side,
                        level=found.name if found else level,
                        level_role=found.role if found else "device",
                        intensity_flop_per_byte=ai, flop_per_s=r.achieved_flop_per_s,
                        efficiency=r.efficiency, klass=r.klass, binding=r.binding))  # fmt: skip
    svgs: dict[Path, str] = {}
    for case in head.cases:
        points = by_case.get(case.case.id)
        if not points:
            continue
        machine = head_specs.machines[case.variants[0].machine]
        inp = RooflineInput(title=f"{case.case.title}: base → head", roofs=machine_roofs(machine),
                            points=tuple(points), variant_order=("base", "head"),
                            subtitle="base: hollow points; head: filled")  # fmt: skip
        svgs[folder / f"{case.case.id}.svg"] = to_svg(_hollow_base(hierarchical_chart(inp)))
    return svgs


def _hollow_base(spec: Any) -> Any:
    """``spec`` with the base's launch points drawn hollow (an outline in the level's
    colour), so base and head differ on the picture, not only in tooltips."""
    base = "datum.variant === 'base'"
    if isinstance(spec, dict):
        if spec.get("name") == "launches" and isinstance(spec.get("encoding"), dict):
            enc = spec["encoding"]
            enc["fillOpacity"] = {"condition": {"test": base, "value": 0}, "value": 1}
            enc["strokeWidth"] = {"condition": {"test": base, "value": 1.5}, "value": 0}
            if "color" in enc:
                enc["stroke"] = {k: v for k, v in enc["color"].items() if k != "legend"}
                enc["stroke"]["legend"] = None
        for value in spec.values():
            _hollow_base(value)
    elif isinstance(spec, list):
        for value in spec:
            _hollow_base(value)
    return spec
