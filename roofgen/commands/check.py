"""`roofgen check` and `roofgen analyze`: validate the specs, and analyse them."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    Failure,
    common,
    count_problems,
    indented,
    json_text,
    run_check,
    say,
    write_output,
)


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github", "gitlab"]),
              default="text", help="github: workflow commands (annotations) and the job "
              "summary; gitlab: a Code Quality report (JSON).")  # fmt: skip
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@common
def check_cmd(paths: tuple[str, ...], fmt: str, output: str, force: bool, strict: bool,
              quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Validate spec files (default: the configured specs folder)."""
    result = run_check(paths, strict, quiet, verbose, problems_only=True)
    failed = result.failed(strict)
    if fmt == "json":
        doc = {
            "roofgen_output": 1,
            "ok": not failed,
            "files": list(result.files),
            "problems": [p.to_json() for p in result.problems],
        }
        write_output(json_text(doc), output, force)
    elif fmt in ("github", "gitlab"):
        from roofgen.commands.ci_output import write_ci_report

        write_ci_report(fmt, result, output, force, verbose, strict)
    if fmt != "json" and not quiet:
        counts = count_problems(result.problems)
        say(f"{len(result.files)} file(s) checked: {counts}", fg="red" if failed else "green")
    if failed:
        raise Failure(EXIT_INVALID)


@click.command("analyze")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              help="csv: one row per variant and launch; nested keys joined with '/'.")  # fmt: skip
@click.option("--indent/--no-indent", default=None,
              help="json: indented, or compact. Default: indented on a terminal, compact "
                   "into a file or a pipe.")  # fmt: skip
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@common
def analyze_cmd(paths: tuple[str, ...], fmt: str, indent: bool | None, output: str, force: bool,
                strict: bool, quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Analyse the specs: bounds, binding roof, efficiency, headroom per launch and variant."""
    from roofgen.api import analysis_csv, analysis_json_spool, analysis_text

    # JSON: case by case, each case's object encoded as the case is analysed and held
    # compressed until the check has passed: neither every case's results nor the whole
    # text are ever held at once.
    spool = analysis_json_spool(indented(indent, output)) if fmt == "json" else None
    each = spool.add if spool is not None else None
    result = run_check(paths, strict, quiet, verbose, "analyze", each=each)
    if result.failed(strict) or result.analysis is None:
        raise Failure(EXIT_INVALID)
    text: str | Iterable[str]
    if spool is not None:
        text = chain(spool.chunks(result.analysis, result.problems), ["\n"])
    elif fmt == "csv":
        text = analysis_csv(result)
    else:
        text = analysis_text(result)
    write_output(text, output, force)
