"""`roofgen diff BASE HEAD`: what a change did to the kernels and the roofs.

Each side is a folder of specs or ``git:REV`` (the configured specs folders as
they were at that revision, read from git's objects by :mod:`roofgen.review.gitread`:
the working tree is not touched, and ``.gitattributes`` cannot hide a file).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
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


@click.command("diff")
@click.argument("base")
@click.argument("head")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json", "text"]),
              default="markdown", help="markdown: for a pull-request comment (also added "
              "to $GITHUB_STEP_SUMMARY when that names a file).")  # fmt: skip
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@click.option("--threshold", "threshold_pct", type=click.FloatRange(min=0), metavar="PCT",
              help="A kernel counts as faster or slower beyond PCT percent (default: "
              "--fail-on-regression's PCT, else 5).")  # fmt: skip
@click.option("--fail-on-regression", "fail_pct", type=float, metavar="PCT",
              help="Exit 3 on a significant regression slower than PCT percent.")  # fmt: skip
@click.option("--allow-removed", is_flag=True,
              help="With --fail-on-regression: a case missing at HEAD does not fail.")  # fmt: skip
@click.option("--mermaid", is_flag=True,
              help="markdown: add a Mermaid bar chart of the kernels' speedups (drawn by "
              "github.com in comments).")  # fmt: skip
@click.option("--charts", "charts_dir", type=click.Path(file_okay=False),
              help="Write static SVG charts of the changed cases here (default: beside the "
              "report when -o names a file).")  # fmt: skip
@common
def diff_cmd(base: str, head: str, fmt: str, output: str, force: bool,
             threshold_pct: float | None, fail_pct: float | None, allow_removed: bool,
             mermaid: bool, charts_dir: str | None, strict: bool, quiet: bool,
             verbose: bool) -> None:  # fmt: skip
    """Compare two sets of specs: BASE and HEAD are folders or git:REV."""
    from roofgen.files import write_file
    from roofgen.review.comment import Options, markdown
    from roofgen.review.diff import diff
    from roofgen.review.report import json_doc, text

    settings = current_settings()
    pct = threshold_pct if threshold_pct is not None else fail_pct if fail_pct is not None else 5
    threshold = max(pct, 0.0) / 100.0
    progress = start_progress(quiet, "diff")
    with contextlib.ExitStack() as stack:
        stack.callback(end_progress, progress)  # last, after the sides' folders are gone
        base_side, base_specs, base_analysis = stack.enter_context(_side(base, settings, progress))
        head_side, head_specs, head_analysis = stack.enter_context(_side(head, settings, progress))
        d = diff(base_specs, base_analysis, head_specs, head_analysis)
        folder = Path(charts_dir) if charts_dir else None
        if folder is None and output != "-":
            folder = Path(output).with_name(Path(output).stem + "-charts")
        svgs = _charts(d, head_specs, head_analysis, base_analysis, folder) if folder else {}
        if fmt == "markdown":
            opts = Options(threshold, settings.site.get("url"), settings.site.get("preview_url"),
                           mermaid, shown(folder) + "/" if svgs and folder else None)  # fmt: skip
            report = markdown(d, base_side, head_side, opts)
            append_step_summary(report)
        elif fmt == "json":
            report = json_text(json_doc(d, base_side, head_side, threshold))
        else:
            report = text(d, base_side, head_side, threshold)
        write_output(report, output, force)
        for target, svg in svgs.items():
            write_file(target, svg)
            if not quiet:
                say(f"wrote {target}")
    if fail_pct is not None and d.cases_removed and not allow_removed:
        say(f"case(s) missing at {_shown_rev(head)}: {', '.join(d.cases_removed)}; a removed "
            "case is not compared, so it fails the gate: pass --allow-removed if the "
            "removal is intended", fg="red")  # fmt: skip
        raise Failure(EXIT_REGRESSION)
    if fail_pct is not None and d.regressions(fail_pct / 100.0):
        worst = max(d.regressions(fail_pct / 100.0), key=lambda c: c.slowdown())
        say(f"regression beyond {fail_pct:g}%: {worst.case}/{worst.kernel or '*'}/"
            f"{worst.variant} is {worst.slowdown():.0%} slower", fg="red")  # fmt: skip
        raise Failure(EXIT_REGRESSION)


@contextlib.contextmanager
def _side(spec: str, settings: Any, progress: Any = None) -> Iterator[tuple[Any, Any, Any]]:
    """Load one side: a folder, or git:REV exported to a temporary folder; its
    :class:`~roofgen.review.comment.Side` (with the commit), specs and analysis."""
    import tempfile

    from roofgen.api import analyse, check
    from roofgen.model import Specs
    from roofgen.review.comment import Side

    if progress is not None:
        progress(f"checking {_shown_rev(spec)}", 0, 0)
    with contextlib.ExitStack() as stack:
        if spec.startswith("git:"):
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="roofgen-diff-")))
            commit, paths = _export(spec[4:], settings, root)
            side = Side(spec, commit)
            display = root
        else:
            paths = [Path(spec)]
            side = Side(spec)
            display = Path.cwd()
            if not paths[0].exists():
                say(f"{spec}: no such folder (give a folder of specs or git:REV)")
                raise Failure(EXIT_INVALID)
        if not paths:  # the specs folder did not exist at that revision
            yield side, Specs({}, ()), analyse(Specs({}, ()), settings.thresholds)
            return
        result = check(paths, thresholds=settings.thresholds, rules_file=settings.rules,
                       display_root=display)  # fmt: skip
        if result.failed() or result.specs is None or result.analysis is None:
            say(f"{spec}: the specs are invalid:")
            report_problems(result.problems, quiet=True, verbose=False, strict=False)
            raise Failure(EXIT_INVALID)
        yield side, result.specs, result.analysis


def _export(rev: str, settings: Any, dest: Path) -> tuple[str, list[Path]]:
    """Extract the configured specs folders as of ``rev`` into ``dest``: the commit,
    and the folders that exist there."""
    from roofgen.review.gitread import GitReadError, export, resolve, toplevel

    try:
        top = toplevel(settings.root)
        folders = []
        for spec in settings.specs:
            try:
                folders.append(Path(spec).resolve().relative_to(top.resolve()).as_posix())
            except ValueError:
                raise GitReadError(f"the specs folder {spec} is outside the repository") from None
        commit = resolve(top, rev)
        return commit, export(top, commit, folders, dest)
    except GitReadError as exc:
        say(f"git:{_shown_rev(rev)}: {exc}")
        raise Failure(EXIT_INVALID) from None


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
