"""`roofgen import ncu|ert`: profiler and benchmark output into spec files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    EXIT_USAGE,
    Failure,
    common,
    say,
    shown,
    write_output,
)
from roofgen.commands.importing import (
    fail,
    machine_named,
    new_case_id,
    team_machines,
    write_imported,
)


@click.group("import")
def import_cmd() -> None:
    """Import a tool's output into spec files: Nsight Compute (ncu), Nsight Systems
    (nsys), torch.profiler traces (torch-trace) or ERT results (ert)."""


def _warn(warnings: list[str], quiet: bool, strict: bool) -> None:
    for warning in warnings:
        if strict or not quiet:
            say(f"warning: {warning}", fg="yellow")
    if strict and warnings:
        say("--strict: warnings are errors; nothing was written", fg="red")
        raise Failure(EXIT_INVALID)


def _inputs(files: tuple[str, ...]) -> list[Path]:
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        fail([f"{f}: no such file" for f in missing])
    return [Path(f) for f in files]


@import_cmd.command("ncu")
@click.argument("files", nargs=-1, required=True)
@click.option(
    "--machine",
    "machine_id",
    required=True,
    metavar="ID",
    help="The machine the profile ran on: a machine in the specs or roofgen's library.",
)
@click.option("-o", "--output", help="Write a new case here ('-': stdout).")
@click.option(
    "--into",
    "into",
    metavar="CASE.yaml",
    help="Add the profile as a new variant of this case (edited in place).",
)
@click.option("--variant", help="The variant's id (default with -o: baseline).")
@click.option(
    "--kernel-map",
    "kernel_map",
    multiple=True,
    metavar="REGEX=ID",
    help="Kernels whose name matches REGEX get kernel id ID (repeatable; first wins).",
)
@click.option("--only-mapped", is_flag=True, help="Import only kernels a --kernel-map names.")
@click.option(
    "--timing",
    metavar="FILE",
    help="Kernel times from nsys (cuda_gpu_trace or cuda_gpu_kern_sum CSV), another "
    "Nsight Compute CSV of the same kernels, or a CSV of CUDA-event times, instead of "
    "the replay's; joined on kernel name, and grid and block where the file gives them.",
)
@click.option("--id", "case_id", help="The new case's id (default: from the output file name).")
@click.option("--title", help="The new case's title.")
@click.option(
    "--clock-control",
    type=click.Choice(["base", "none"]),
    default=None,
    help="The ncu --clock-control the profile was taken with (default: base, Nsight "
    "Compute's own default).",
)
@click.option(
    "--cache-control",
    type=click.Choice(["all", "none"]),
    default="all",
    show_default=True,
    help="The ncu --cache-control the profile was taken with.",
)
@click.option(
    "--partial",
    is_flag=True,
    help="Import kernels that lack FLOP or byte metrics (those roofs stay unknown).",
)
@click.option("--force", is_flag=True, help="Overwrite the -o file.")
@common
def ncu_cmd(
    files: tuple[str, ...],
    machine_id: str,
    output: str | None,
    into: str | None,
    variant: str | None,
    kernel_map: tuple[str, ...],
    only_mapped: bool,
    timing: str | None,
    case_id: str | None,
    title: str | None,
    clock_control: str | None,
    cache_control: str,
    partial: bool,
    force: bool,
    strict: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Import Nsight Compute CSV exports (or .ncu-rep reports) as a case or a variant.

    Reads the long form (`ncu --csv`), the raw page (`--page raw`) and the
    per-kernel summary (`--print-summary per-kernel`); several files of one run
    are merged launch by launch. Every figure written names its metric.
    """
    from roofgen.importers import ImportFailure
    from roofgen.importers.kernel_names import KernelMap
    from roofgen.importers.ncu_case import Options

    if (output is None) == (into is None):
        say("give exactly one of -o FILE (a new case) and --into CASE.yaml (a new variant)")
        raise Failure(EXIT_USAGE)
    if into is not None and not variant:
        say("--into needs --variant NAME: the id of the variant to add")
        raise Failure(EXIT_USAGE)
    variant = variant or "baseline"
    if not re.match(r"^[a-z0-9][a-z0-9._-]*$", variant):
        say(f"--variant {variant!r}: use lower-case letters, digits, '.', '_' and '-'")
        raise Failure(EXIT_USAGE)
    try:
        maps = [KernelMap.parse(text) for text in kernel_map]
    except ValueError as exc:
        say(str(exc))
        raise Failure(EXIT_USAGE) from None
    paths = _inputs(files)
    machine = machine_named(machine_id)
    options = Options(
        variant=variant,
        clock_control=clock_control or "base",
        clock_control_given=clock_control is not None,
        cache_control=cache_control,
        partial=partial,
        kernel_map=maps,
        files=[p.name for p in paths],
    )
    try:
        if timing is not None:
            from roofgen.importers.timing import read_timing

            options.timing = read_timing(_inputs((timing,))[0])
        result = _run_ncu(paths, machine, output, into, options, case_id, title, only_mapped)
    except ImportFailure as exc:
        fail(exc.messages)
        return
    _warn(result.warnings, quiet, strict)
    _finish_ncu(result, machine, output, into, force, quiet)


def _run_ncu(
    paths: list[Path],
    machine: Any,
    output: str | None,
    into: str | None,
    options: Any,
    case_id: str | None,
    title: str | None,
    only_mapped: bool,
) -> Any:
    from roofgen.importers import ncu

    if into is not None:
        target = Path(into)
        if not target.is_file():
            fail([f"{into}: no such file"])
        return ncu.into_case(paths, machine, target, options, only_mapped, team_machines())
    target_path = None if output in (None, "-") else Path(str(output))
    return ncu.new_case(
        paths, machine, target_path, options, new_case_id(output, case_id), title, only_mapped
    )


def _finish_ncu(
    result: Any, machine: Any, output: str | None, into: str | None, force: bool, quiet: bool
) -> None:
    from roofgen.importers import ncu

    where = write_imported(result.text, output, into, force)
    if quiet:
        return
    kernels = ", ".join(dict.fromkeys(result.kernels))
    say(f"wrote {where}: {len(result.kernels)} launch(es) of {kernels} on {machine.id}", fg="green")
    case = re.search(r"^id: *([a-z0-9][a-z0-9._-]*) *(?:#.*)?$", result.text, re.MULTILINE)
    if output != "-" and result.kernels and case:
        say(f"next: roofgen check && roofgen explain {case.group(1)}/{result.kernels[0]}")
    hint = ncu.pin_hint(machine)
    if hint:
        say(f"machine {machine.id} is roofgen's library machine, pinned as {hint}")


@import_cmd.command("ert")
@click.argument("file")
@click.option("-o", "--output", required=True, help="The machine file to write ('-': stdout).")
@click.option("--id", "ident", required=True, help="The machine's id, e.g. p100-kingspeak.")
@click.option("--name", required=True, help="The machine's full name, e.g. 'NVIDIA Tesla P100'.")
@click.option(
    "--sm-clock",
    required=True,
    help="The SM clock ERT ran at, e.g. '1329 MHz' (ERT does not record it).",
)
@click.option(
    "--gpu/--cpu", "gpu", default=None, help="Where ERT ran (default: the ERT config's ERT_GPU)."
)
@click.option(
    "--precision",
    type=click.Choice(["FP64", "FP32", "FP16"], case_sensitive=False),
    help="Precision of an unnamed 'GFLOPs' result (default: the config's).",
)
@click.option(
    "--machine-version",
    "machine_version",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="The version written into the machine file.",
)
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@common
def ert_cmd(
    file: str,
    output: str,
    ident: str,
    name: str,
    sm_clock: str,
    gpu: bool | None,
    precision: str | None,
    machine_version: int,
    force: bool,
    strict: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Import an Empirical Roofline Toolkit roofline.json as a machine with measured roofs."""
    from roofgen.api import QuantityError, parse_quantity
    from roofgen.importers import ImportFailure, ert

    if not re.match(r"^[a-z0-9][a-z0-9._-]*$", ident):
        say(f"--id {ident!r}: use lower-case letters, digits, '.', '_' and '-'")
        raise Failure(EXIT_USAGE)
    try:
        if not parse_quantity(sm_clock, "frequency") > 0:
            raise QuantityError("a clock is above zero")
    except QuantityError as exc:
        say(f"--sm-clock {sm_clock!r}: {exc}")
        raise Failure(EXIT_USAGE) from None
    path = _inputs((file,))[0]
    target = None if output == "-" else Path(output)
    try:
        run = ert.read_ert(path)
        imported = ert.build_machine(
            run,
            path,
            ident=ident,
            name=name,
            sm_clock=sm_clock,
            gpu=gpu,
            precision=precision,
            version=machine_version,
            target=target,
        )
    except ImportFailure as exc:
        fail(exc.messages)
        return
    problems = ert.validate(imported.text)
    if problems:
        fail(["the machine file roofgen built does not check; please report:", *problems])
    _warn(imported.warnings, quiet, strict)
    write_output(imported.text, output, force)
    if not quiet and output != "-":
        say(f"wrote {shown(Path(output))}: machine {ident} with measured roofs", fg="green")


def _add_trace_commands() -> None:
    from roofgen.commands.import_traces import nsys_cmd, torch_trace_cmd

    import_cmd.add_command(nsys_cmd)
    import_cmd.add_command(torch_trace_cmd)


_add_trace_commands()
