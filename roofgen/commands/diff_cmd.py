"""`roofgen diff BASE HEAD`: what a change did to the kernels and the roofs.

Each side is a folder of specs or ``git:REV`` (the configured specs folders as
they were at that revision, read from git's objects by :mod:`roofgen.review.gitread`:
the working tree is not touched, and ``.gitattributes`` cannot hide a file). The work
is :func:`roofgen.api.diff`'s; this verb parses options, writes the report and charts
and turns the gate's verdict into the exit status.
"""

from __future__ import annotations

import math
import re
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
    from roofgen import api
    from roofgen.files import write_file

    settings = current_settings()
    folder = Path(charts_dir) if charts_dir else None
    if folder is None and output != "-":
        folder = Path(output).with_name(Path(output).stem + "-charts")
    progress = start_progress(quiet, "diff")
    try:
        try:
            found = api.diff(base, head, settings, threshold_pct=threshold_pct,
                             fail_pct=fail_pct, allow_removed=allow_removed,
                             allow_noise=allow_noise, allow_context=allow_context,
                             charts=folder, progress=progress)  # fmt: skip
        except api.SideError as exc:
            say(str(exc))
            report_problems(list(exc.problems), quiet=True, verbose=False, strict=False)
            raise Failure(EXIT_INVALID) from None
        if found.charts_unavailable:
            say("charts need roofgen[site] (altair, vl-convert-python): none written")
        link = shown(folder) + "/" if found.charts and folder else None
        report = found.report(fmt, site_url=settings.site.get("url"),
                              preview_url=settings.site.get("preview_url"), mermaid=mermaid,
                              charts_link=link)  # fmt: skip
        if fmt == "markdown":
            append_step_summary(report)
        write_output(report, output, force)
        for target, svg in found.charts.items():
            write_file(target, svg)
            if not quiet:
                say(f"wrote {target}")
    finally:
        end_progress(progress)
    failed = found.failures()
    for line in failed:
        say(line, fg="red")
    if failed:
        raise Failure(EXIT_REGRESSION)
