"""`roofgen fit energy`: a machine's energy coefficients fitted from measured launches."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    Failure,
    common,
    json_text,
    run_check,
    say,
    write_output,
)

if TYPE_CHECKING:
    from roofgen.api.energyfit import EnergyFitReport


@click.group("fit")
def fit_cmd() -> None:
    """Fit a machine's coefficients to measurements."""


@fit_cmd.command("energy")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--machine", "machine_id", required=True, help="The machine whose launches to fit.")
@click.option(
    "--fit-on",
    "fit_on",
    multiple=True,
    metavar="CASE",
    help="A case of designed launches to fit (repeatable); sweeps' points are always "
    "fitted; the other launches validate the fit.",
)
@click.option("--operands", default="", help="The operand data the launches ran on, recorded.")
@click.option("--write", "write", is_flag=True, help="Write the fit into the machine file.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@common
def energy_cmd(paths: tuple[str, ...], machine_id: str, fit_on: tuple[str, ...], operands: str,
               write: bool, fmt: str, output: str, force: bool, strict: bool, quiet: bool,
               verbose: bool) -> None:  # fmt: skip
    """Fit energy per FLOP (per unit and precision), per byte (per memory level) and
    constant power under load (Choi et al., IPDPS 2013) to the launches with measured
    energy (or average power), FLOPs and bytes that ran on MACHINE.

    Runs of at least a second each are needed (power sampling misses short kernels).
    The fit refuses coefficients the launches cannot determine and says what to
    measure. With --write, the coefficients and their provenance go into the machine
    file. PATHs default to the configured specs folder.
    """
    try:
        import scipy  # noqa: F401  (the fit's solver)
    except ImportError:
        say(
            "roofgen fit energy needs scipy: install roofgen with its 'fit' extra from your "
            "team's source of roofgen (roofgen[fit] @ URL)",
            fg="red",
        )
        raise Failure(EXIT_INVALID) from None
    from roofgen.api.energyfit import FitRefused, fit_machine_energy
    from roofgen.report.energyfit import fit_json, fit_text

    result = run_check(paths, strict, quiet, verbose)
    if result.failed(strict) or result.specs is None:
        raise Failure(EXIT_INVALID)
    if machine_id not in result.specs.machines:
        known = ", ".join(sorted(result.specs.machines)) or "none"
        say(f"unknown machine {machine_id!r}; the checked specs use: {known}", fg="red")
        raise Failure(EXIT_INVALID)
    unknown = sorted(set(fit_on) - {c.id for c in result.specs.cases})
    if unknown:
        say(f"--fit-on: unknown case(s) {', '.join(map(repr, unknown))}", fg="red")
        raise Failure(EXIT_INVALID)
    try:
        report = fit_machine_energy(result, machine_id, fit_on=fit_on, operands=operands)
    except FitRefused as exc:
        for note in exc.notes:
            say(f"note: {note}")
        say(f"not fitted: {exc.reason}.", fg="red")
        say(f"  {exc.remedy}.")
        raise Failure(EXIT_INVALID) from None
    args = (report.fit, report.machine.id, report.cases, report.skipped, report.operands)
    text = json_text(fit_json(*args)) if fmt == "json" else fit_text(*args)
    write_output(text, output, force)
    if write:
        _write(report, quiet)


def _write(report: EnergyFitReport, quiet: bool) -> None:
    from roofgen.api.energyfit import FitWriteError, left_out, write_fit

    for why in left_out(report.fit):
        say(f"not written: {why}", fg="yellow")
    try:
        file, changes = write_fit(report)
    except FitWriteError as exc:
        say(str(exc), fg="red")
        raise Failure(EXIT_INVALID) from None
    if not quiet:
        say(f"wrote {file}: {', '.join(changes)}", fg="green")
