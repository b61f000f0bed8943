"""`roofgen new case`: a new case file, every field commented, or filled from a profile."""

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
    current_settings,
    say,
    shown,
    write_output,
)

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@click.group("new")
def new_cmd() -> None:
    """Start a new spec file (case) from the schema, ready to fill in."""


def _check_id(option: str, value: str) -> None:
    if not _ID.match(value):
        say(f"{option} {value!r}: use lower-case letters, digits, '.', '_' and '-', "
            "starting with a letter or digit")  # fmt: skip
        raise Failure(EXIT_USAGE)


def default_case_path(case_id: str) -> Path:
    """``SPECS/cases/ID.yaml`` under the first configured specs folder."""
    specs = list(current_settings().specs)
    base = specs[0] if specs else Path("specs")
    if base.is_file():
        base = base.parent
    return base / "cases" / f"{case_id}.yaml"


@new_cmd.command("case")
@click.argument("case_id", metavar="ID")
@click.option("--machine", "machine_id", required=True, metavar="MACHINE",
              help="The machine it ran on: a machine in the specs or in roofgen's library "
              "(`roofgen machines`).")  # fmt: skip
@click.option("--from-ncu", "from_ncu", multiple=True, metavar="FILE.csv",
              help="Fill the case from Nsight Compute CSV exports (repeatable) instead of "
              "writing placeholders.")  # fmt: skip
@click.option("--kernel", help="The kernel's id (default: the case's id).")
@click.option("--operator", "operator", metavar="KIND",
              help="The operator kind the template is of (its shape, dtypes and FLOPs); "
              "default: the kind the kernel's or the case's id names (softmax-v2: softmax), "
              "else gemm.")  # fmt: skip
@click.option("--variant", default="baseline", show_default=True, help="The variant's id.")
@click.option("--title", help="The case's title.")
@click.option("-o", "--output", help="Where to write ('-': stdout; default: SPECS/cases/ID.yaml).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@common
def case_cmd(case_id: str, machine_id: str, from_ncu: tuple[str, ...], kernel: str | None,
             operator: str | None, variant: str, title: str | None, output: str | None,
             force: bool, strict: bool, quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Write a new case file with every field of the case schema, each commented.

    The template is of one operator kind (--operator, else the one the kernel's or
    the case's id names). Values only a measurement gives (the time, the bytes) are
    written TODO, which `roofgen check` refuses until they are measured; examples
    are marked # TODO; optional fields are commented out in place. With --from-ncu,
    the case is filled from the profile instead (as `roofgen import ncu` does).
    """
    _check_id("ID", case_id)
    _check_id("--variant", variant)
    if kernel is not None:
        _check_id("--kernel", kernel)
    if operator is not None:
        _check_operator(operator)
    if from_ncu and (kernel is not None or operator is not None):
        say("--kernel and --operator describe the template's kernel; a profile names its "
            "own kernels (rename them with `roofgen import ncu --kernel-map`)")  # fmt: skip
        raise Failure(EXIT_USAGE)
    target = Path(output) if output and output != "-" else default_case_path(case_id)
    if output != "-" and target.exists() and not force:
        say(f"{shown(target)}: exists; pass --force to overwrite it")
        raise Failure(EXIT_INVALID)
    machine = _machine(machine_id)
    if from_ncu:
        text, kernels = _from_ncu(from_ncu, machine, target, case_id, variant, title, quiet,
                                  strict)  # fmt: skip
        kernel = kernels[0] if kernels else None
    else:
        kind = operator or _guess(kernel, case_id, quiet)
        text = _template(machine, target, case_id, kernel or case_id, kind, variant, title)
    write_output(text, output or shown(target), force)
    if quiet or output == "-":
        return
    say(f"wrote {shown(target)}: case {case_id} on {machine.id}", fg="green")
    selector = f"{case_id}/{kernel or case_id}"
    say("next: measure each value written TODO (`roofgen check` lists them; roofgen's "
        "site: Guide > How to measure), then" if not from_ncu else "next:")  # fmt: skip
    say(f"  roofgen check && roofgen explain {selector}")


def _check_operator(kind: str) -> None:
    from roofgen.scaffold.operators import OPERATORS

    if kind not in OPERATORS:
        say(f"--operator {kind!r}: no template of that kind; one of: {', '.join(OPERATORS)}")
        raise Failure(EXIT_USAGE)


def _guess(kernel: str | None, case_id: str, quiet: bool) -> str:
    from roofgen.scaffold.operators import guess_operator

    ids = [kernel, case_id] if kernel is not None else [case_id]
    kind = guess_operator(*ids)
    if kind is None:
        if not quiet:
            say(f"no operator kind in {' or '.join(map(repr, ids))}: writing a gemm template "
                "(pass --operator KIND for another)")  # fmt: skip
        return "gemm"
    return kind


def _machine(ident: str) -> Any:
    from roofgen.machines.lookup import find_machine

    machine, problems = find_machine(ident, list(current_settings().specs))
    if machine is None:
        for p in problems:
            say(p.format() if p.file else p.message, fg="red")
        raise Failure(EXIT_INVALID)
    return machine


def _pin(machine: Any) -> Any:
    if machine.version is not None:
        return {"id": machine.id, "version": machine.version}
    return machine.id


def _template(machine: Any, target: Path, case_id: str, kernel: str, operator: str,
              variant: str, title: str | None) -> str:  # fmt: skip
    from roofgen.scaffold.case import CaseTemplate, checked_case

    template = CaseTemplate(
        case_id=case_id, machine_id=machine.id, machine=machine.data, pin=_pin(machine),
        kernel=kernel, variant=variant, title=title, operator=operator,
    )  # fmt: skip
    machine_file = None if machine.from_library else Path(machine.origin)
    text, problems = checked_case(template, target, machine_file)
    if any(p.severity.value == "error" for p in problems):
        say("the case roofgen generated does not check; nothing was written. Please report "
            "this:", fg="red")  # fmt: skip
        for p in problems:
            say(p.format(), fg="red")
        raise Failure(EXIT_INVALID)
    return text


def _from_ncu(files: tuple[str, ...], machine: Any, target: Path, case_id: str, variant: str,
              title: str | None, quiet: bool, strict: bool) -> tuple[str, list[str]]:  # fmt: skip
    from roofgen.importers import ImportFailure, ncu
    from roofgen.importers.ncu_case import Options

    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        for f in missing:
            say(f"{f}: no such file", fg="red")
        raise Failure(EXIT_INVALID)
    paths = [Path(f) for f in files]
    options = Options(variant=variant, files=[p.name for p in paths])
    try:
        result = ncu.new_case(paths, machine, target, options, case_id, title)
    except ImportFailure as exc:
        for message in exc.messages:
            say(message, fg="red")
        raise Failure(EXIT_INVALID) from None
    for warning in result.warnings:
        if strict or not quiet:
            say(f"warning: {warning}", fg="yellow")
    if strict and result.warnings:
        say("--strict: warnings are errors; nothing was written", fg="red")
        raise Failure(EXIT_INVALID)
    return str(result.text), list(result.kernels)
