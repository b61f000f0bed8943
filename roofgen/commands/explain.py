"""`roofgen explain CASE/KERNEL[/VARIANT]`: one kernel's analysis in words and numbers."""

from __future__ import annotations

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    EXIT_USAGE,
    Failure,
    common,
    json_text,
    run_check,
    say,
    write_output,
)


@click.command("explain")
@click.argument("selector", metavar="CASE/KERNEL[/VARIANT]")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@common
def explain_cmd(selector: str, paths: tuple[str, ...], fmt: str, output: str, force: bool,
                strict: bool, quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Explain one kernel's launches: what binds, how far from the roof, the runner-up,
    the time every resource needs, what is unknown and what to try.

    Without VARIANT, every variant that launches the kernel, with the speedup
    between them. PATHs default to the configured specs folder.
    """
    from roofgen.api import (
        ExplainError,
        explain_kernel,
        explanation_json,
        explanation_text,
        parse_selector,
    )

    try:
        case_id, kernel, variant = parse_selector(selector)
    except ValueError as exc:
        say(str(exc))
        raise Failure(EXIT_USAGE) from None
    result = run_check(paths, strict, quiet, verbose)
    if result.failed(strict) or result.analysis is None or result.specs is None:
        raise Failure(EXIT_INVALID)
    try:
        e = explain_kernel(result, case_id, kernel, variant)
    except ExplainError as exc:
        say(str(exc), fg="red")
        raise Failure(EXIT_INVALID) from None
    if fmt == "json":
        doc = explanation_json(e) | {"problems": [p.to_json() for p in result.problems]}
        text = json_text(doc)
    else:
        text = explanation_text(e)
    write_output(text, output, force)
