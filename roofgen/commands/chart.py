"""`roofgen chart`: one kernel's hierarchical roofline as a file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    EXIT_USAGE,
    Failure,
    common,
    run_check,
    say,
)

CHART_FORMATS = (".svg", ".png", ".html", ".json")


@click.command("chart")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--kernel", "selector", required=True, metavar="CASE/KERNEL[/VARIANT]",
              help="The kernel to draw: its case, its id and optionally one variant.")  # fmt: skip
@click.option("-o", "--output", required=True,
              help="Output file: .svg, .png, .html or .json.")  # fmt: skip
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@common
def chart_cmd(paths: tuple[str, ...], selector: str, output: str, force: bool, strict: bool,
              quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Write the hierarchical roofline of one kernel (all its variants, or one)."""
    parts = selector.split("/")
    suffix = Path(output).suffix.lower()
    if len(parts) not in (2, 3) or not all(parts):
        say(f"--kernel {selector!r}: write CASE/KERNEL or CASE/KERNEL/VARIANT")
        raise Failure(EXIT_USAGE)
    if suffix not in CHART_FORMATS:
        say(f"{output}: the suffix chooses the format: one of {', '.join(CHART_FORMATS)}")
        raise Failure(EXIT_USAGE)
    if os.path.lexists(output) and not force:
        say(f"{output}: exists; pass --force to overwrite it")
        raise Failure(EXIT_INVALID)
    result = run_check(paths, strict, quiet, verbose)
    if result.failed(strict) or result.analysis is None or result.specs is None:
        raise Failure(EXIT_INVALID)
    spec = _kernel_chart(result, *parts)
    _write_chart(spec, Path(output), suffix)
    if not quiet:
        say(f"wrote {output}", fg="green")


def _kernel_chart(result: Any, case_id: str, kernel: str, variant: str | None = None) -> Any:
    from roofgen.api import kernel_chart

    try:
        return kernel_chart(result, case_id, kernel, variant)
    except ValueError as exc:
        say(str(exc))
        raise Failure(EXIT_INVALID) from None


def _write_chart(spec: Any, target: Path, suffix: str) -> None:
    from roofgen.api import write_chart

    write_chart(spec, target)
