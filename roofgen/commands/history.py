"""`roofgen history [CASE[/KERNEL[/VARIANT]]]`: time, efficiency and binding resource
of each launch at every commit that changed its case."""

from __future__ import annotations

import os
from pathlib import Path

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    EXIT_USAGE,
    Failure,
    common,
    current_settings,
    say,
    write_output,
)

CHART_FORMATS = (".svg", ".png", ".html", ".json")


@click.command("history")
@click.argument("selector", required=False, metavar="[CASE[/KERNEL[/VARIANT]]]")
@click.option("--since", metavar="REV", help="Only the commits after this revision.")
@click.option("-n", "last", type=click.IntRange(min=1), metavar="N",
              help="Only the last N commits that changed a selected case.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text")
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--chart", "chart", metavar="FILE",
              help="Also draw the history: .svg, .png, .html or .json.")  # fmt: skip
@click.option("--force", is_flag=True, help="Overwrite the output files.")
@click.option("--no-cache", is_flag=True, help="Analyse every commit again.")
@common
def history_cmd(selector: str | None, since: str | None, last: int | None, fmt: str,
                output: str, chart: str | None, force: bool, no_cache: bool, strict: bool,
                quiet: bool, verbose: bool) -> None:  # fmt: skip
    """List, commit by commit (oldest first, following the first parent), the time,
    efficiency and binding resource of every launch of the cases each commit changed.

    Reads git's history of the configured specs folders; a case that does not pass
    the check at a commit is reported for that commit. Older spec formats are
    migrated in memory.
    """
    from roofgen.api.history import GitReadError, history
    from roofgen.review import history_report as report

    if since is not None and last is not None:
        say("--since and -n: give one of them")
        raise Failure(EXIT_USAGE)
    if chart is not None:
        if Path(chart).suffix.lower() not in CHART_FORMATS:
            say(
                f"--chart {chart}: the suffix chooses the format: one of {', '.join(CHART_FORMATS)}"
            )
            raise Failure(EXIT_USAGE)
        if os.path.lexists(chart) and not force:
            say(f"{chart}: exists; pass --force to overwrite it")
            raise Failure(EXIT_INVALID)
    try:
        found = history(
            current_settings(), selector=selector, since=since, last=last, use_cache=not no_cache
        )
    except ValueError as exc:
        say(str(exc))
        raise Failure(EXIT_USAGE) from None
    except GitReadError as exc:
        say(f"history: {exc}", fg="red")
        raise Failure(EXIT_INVALID) from None
    for note in found.notes if not quiet else ():
        say(f"note: {note}", fg="yellow")
    if fmt == "json":
        text = report.history_json_text(found)
    elif fmt == "csv":
        text = report.history_csv(found)
    else:
        text = report.history_text(found)
    write_output(text, output, force)
    if chart is not None:
        from roofgen.api import write_chart
        from roofgen.charts.kinds import build_chart

        case = selector.split("/")[0] if selector else None
        title = f"{selector}: history" if selector else "History over commits"
        write_chart(build_chart(report.history_chart_input(found, title, case)), Path(chart))
        if not quiet:
            say(f"wrote {chart}", fg="green")
