"""`roofgen import nsys|torch-trace`: timeline traces into a case's kernels, steps and
end-to-end time (subcommands of ``roofgen import``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    EXIT_USAGE,
    Failure,
    common,
    say,
)
from roofgen.commands.importing import (
    fail,
    machine_named,
    new_case_id,
    team_machines,
    write_imported,
)


def _usage(message: str) -> None:
    say(message)
    raise Failure(EXIT_USAGE)


def _target(output: str | None, into: str | None, variant: str | None) -> str:
    if (output is None) == (into is None):
        _usage("give exactly one of -o FILE (a new case) and --into CASE.yaml (a new variant)")
    if into is not None and not variant:
        _usage("--into needs --variant NAME: the id of the variant to add")
    variant = variant or "baseline"
    if not re.match(r"^[a-z0-9][a-z0-9._-]*$", variant):
        _usage(f"--variant {variant!r}: use lower-case letters, digits, '.', '_' and '-'")
    return variant


def _maps(kernel_map: tuple[str, ...]) -> list[Any]:
    from roofgen.importers.kernel_names import KernelMap

    try:
        return [KernelMap.parse(text) for text in kernel_map]
    except ValueError as exc:
        _usage(str(exc))
        return []


def _run(
    read: Callable[[], Any],
    machine_id: str,
    output: str | None,
    into: str | None,
    variant: str,
    case_id: str | None,
    title: str | None,
    maps: list[Any],
    force: bool,
    flags: tuple[bool, bool],
) -> None:
    from roofgen.importers import ImportFailure
    from roofgen.importers.trace_case import into_case, new_case, summary_lines

    strict, quiet = flags
    machine = machine_named(machine_id)
    try:
        trace = read()
        if into is not None:
            if not Path(into).is_file():
                fail([f"{into}: no such file"])
            result = into_case(trace, machine, Path(into), variant, team_machines(), maps)
        else:
            target = None if output in (None, "-") else Path(str(output))
            ident = new_case_id(output, case_id)
            result = new_case(trace, machine, target, ident, title, variant, maps)
    except ImportFailure as exc:
        fail(exc.messages)
        return
    for warning in result.warnings:
        if strict or not quiet:
            say(f"warning: {warning}", fg="yellow")
    if strict and result.warnings:
        say("--strict: warnings are errors; nothing was written", fg="red")
        raise Failure(EXIT_INVALID)
    where = write_imported(result.text, output, into, force)
    if quiet:
        return
    for line in summary_lines(trace):
        say(line)
    say(f"wrote {where}: {len(result.kernels)} entries on {machine.id}", fg="green")


def _inputs(file: str) -> Path:
    path = Path(file)
    if not path.is_file():
        fail([f"{file}: no such file"])
    return path


def _shared(func: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            click.argument("file"),
            click.option("--machine", "machine_id", required=True, metavar="ID",
                         help="The machine the trace ran on (specs or roofgen's library)."),
            click.option("-o", "--output", help="Write a new case here ('-': stdout)."),
            click.option("--into", metavar="CASE.yaml",
                         help="Add the trace as a new variant of this case (edited in place)."),
            click.option("--variant", help="The variant's id (default with -o: baseline)."),
            click.option("--id", "case_id", help="The new case's id (default: from -o)."),
            click.option("--title", help="The new case's title."),
            click.option("--kernel-map", "kernel_map", multiple=True, metavar="REGEX=ID",
                         help="Names matching REGEX get kernel id ID (repeatable)."),
            click.option("--device", type=click.IntRange(0), default=None,
                         help="The GPU whose kernels to read, when the trace has several."),
            click.option("--force", is_flag=True, help="Overwrite the -o file."),
        ]
    ):  # fmt: skip
        func = option(func)
    return func


def _window(text: str | None) -> tuple[int, int] | None:
    from roofgen.api import QuantityError, parse_quantity

    if text is None:
        return None
    first, sep, second = text.partition(":")
    try:
        if not sep:
            raise QuantityError("write START:END")
        ends = [parse_quantity(t if re.search(r"[a-z]", t) else f"{t} ns", "time")
                for t in (first.strip(), second.strip())]  # fmt: skip
    except QuantityError as exc:
        _usage(f"--window {text!r}: {exc} (times in the trace's clock, e.g. 1.25s:1.5s)")
        return None
    start, end = (round(v * 1e9) for v in ends)
    if end <= start:
        _usage(f"--window {text!r}: the end is not after the start")
    return start, end


@click.command("nsys")
@_shared
@click.option("--range", "range_name", metavar="NAME",
              help="Each instance of the NVTX range NAME (its whole text) is a step.")  # fmt: skip
@click.option("--window", metavar="START:END",
              help="One step: the kernels inside this window (ns, or with units).")  # fmt: skip
@common
def nsys_cmd(
    file: str,
    machine_id: str,
    output: str | None,
    into: str | None,
    variant: str | None,
    case_id: str | None,
    title: str | None,
    kernel_map: tuple[str, ...],
    device: int | None,
    force: bool,
    range_name: str | None,
    window: str | None,
    strict: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Import an Nsight Systems trace (`nsys export --type sqlite`, or the CSV of
    `nsys stats --report cuda_gpu_trace`) as a case's kernels, steps and end-to-end
    time. A step is an NVTX range (--range), a time window (--window) or the whole trace.
    """
    from roofgen.importers.nsys import Options, read_trace

    chosen = _target(output, into, variant)
    if range_name is not None and window is not None:
        _usage("give --range or --window, not both")
    options = Options(range_name=range_name, window=_window(window), device=device)
    path = _inputs(file)
    _run(
        lambda: read_trace(path, options),
        machine_id, output, into, chosen, case_id, title, _maps(kernel_map), force,
        (strict, quiet),
    )  # fmt: skip


def _max_size(text: str) -> int:
    """``--max-size``: an amount of data (``2GiB``, ``500 MB``; a plain number is bytes)."""
    from roofgen.api import QuantityError, parse_quantity

    try:
        value = parse_quantity(text if re.search(r"[A-Za-z]", text) else f"{text} B",
                               "information")  # fmt: skip
    except QuantityError as exc:
        _usage(f"--max-size {text!r}: {exc}")
        return 0
    if not 1 <= value <= 2**50:
        _usage(f"--max-size {text!r}: write a size from 1 byte to 1 PiB, e.g. 4GiB")
    return int(value)


@click.command("torch-trace")
@_shared
@click.option("--max-size", "max_size", default="1GiB", show_default=True, metavar="SIZE",
              help="The most JSON text to read (once decompressed), e.g. 4GiB.")  # fmt: skip
@common
def torch_trace_cmd(
    file: str,
    machine_id: str,
    output: str | None,
    into: str | None,
    variant: str | None,
    case_id: str | None,
    title: str | None,
    kernel_map: tuple[str, ...],
    device: int | None,
    force: bool,
    max_size: str,
    strict: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Import a torch.profiler trace (Chrome trace JSON, gzipped or not) as a case: one
    entry per op and shape, its kernels' GPU time per call, steps from ProfilerStep#N,
    FLOPs from roofgen's operator models where shapes were recorded.
    """
    from roofgen.importers.torch_trace import read_torch_trace

    chosen = _target(output, into, variant)
    limit = _max_size(max_size)
    path = _inputs(file)
    _run(
        lambda: read_torch_trace(path, device, limit),
        machine_id, output, into, chosen, case_id, title, _maps(kernel_map), force,
        (strict, quiet),
    )  # fmt: skip
