"""`roofgen machines`: list, show and vendor the machines shipped with roofgen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    Failure,
    common,
    current_settings,
    say,
    shown,
    write_output,
)


@click.group("machines", invoke_without_command=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@common
@click.pass_context
def machines_cmd(ctx: click.Context, fmt: str, strict: bool, quiet: bool, verbose: bool) -> None:
    """List roofgen's machine library (or: show ID, vendor ID).

    A case names a library machine by id and pins it by version:
    `machines: [{id: a100-40gb-sxm, version: 1}]`. A machine file with the same
    id in the team's specs takes precedence over the library.
    """
    if ctx.invoked_subcommand is None:
        _list(fmt)


@machines_cmd.command("list")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@common
def list_cmd(fmt: str, strict: bool, quiet: bool, verbose: bool) -> None:
    """List the library: id, name, versions, dense BF16/FP16 peaks, device bandwidth."""
    _list(fmt)


def _list(fmt: str) -> None:
    from roofgen import machines as library
    from roofgen.machines.lookup import team_machine_files

    team = _team_files(team_machine_files)
    rows = []
    for ident in library.ids():
        entry = library.entry(ident)
        doc = library.document(ident)
        assert entry is not None
        if doc is None:
            say(f"{entry.display}: this library machine does not validate; please report it")
            raise Failure(EXIT_INVALID)
        data = doc.data
        rows.append(
            {
                "id": ident,
                "name": data["name"],
                "vendor": data.get("vendor", ""),
                "versions": library.versions(ident),
                "latest": entry.version,
                "sha256": library.content_hash(data),
                "bf16_dense_flop_per_s": _peak(data, "bf16"),
                "fp16_dense_flop_per_s": _peak(data, "fp16"),
                "device_bandwidth_b_per_s": _device_bandwidth(data),
                "overridden_by": shown(team[ident]) if ident in team else None,
            }
        )
    if fmt == "json":
        click.echo(json.dumps({"roofgen_output": 1, "machines": rows}, indent=2))
        return
    _table(rows)


def _team_files(finder: Any) -> dict[str, Path]:
    try:
        return dict(finder(list(current_settings().specs)))
    except Exception:  # no settings or unreadable specs: list the library alone
        return {}


def _table(rows: list[dict[str, Any]]) -> None:
    from roofgen.units import fmt_si

    header = ("id", "name", "versions", "BF16 dense", "FP16 dense", "device memory")
    lines = [header]
    for r in rows:
        lines.append(
            (
                r["id"] + (" *" if r["overridden_by"] else ""),
                r["name"],
                ", ".join(f"v{v}" for v in r["versions"]),
                _or_dash(r["bf16_dense_flop_per_s"], fmt_si, "FLOP/s"),
                _or_dash(r["fp16_dense_flop_per_s"], fmt_si, "FLOP/s"),
                _or_dash(r["device_bandwidth_b_per_s"], fmt_si, "B/s"),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
    shadowed = [r for r in rows if r["overridden_by"]]
    for r in shadowed:
        say(f"* {r['id']}: the specs' {r['overridden_by']} takes precedence over the library")
    say(
        "pin a library machine in a case: machines: [{id: ID, version: N}] "
        "(roofgen machines show ID prints the exact pin)"
    )


def _or_dash(value: float | None, fmt: Any, unit: str) -> str:
    return "-" if value is None else fmt(value, unit, 4)


def _peak(data: dict[str, Any], precision: str) -> float | None:
    """The highest dense ``precision`` peak over the machine's units (datasheet first)."""
    from roofgen.api import parse_quantity

    best = None
    for unit in data["compute"]:
        value = unit["peaks"].get(precision)
        if value is None:
            continue
        if isinstance(value, dict):
            value = value.get("datasheet", value.get("measured"))
        rate = parse_quantity(value, "flop_rate")
        best = rate if best is None else max(best, rate)
    return best


def _device_bandwidth(data: dict[str, Any]) -> float | None:
    from roofgen.api import parse_quantity

    for level in data["memory"]:
        if level["role"] == "device":
            value = level["bandwidth"]
            if isinstance(value, dict):
                value = value.get("datasheet", value.get("measured"))
            return parse_quantity(value, "bandwidth")
    return None


def _entry(ident: str, version: int | None) -> Any:
    from roofgen import machines as library

    entry = library.entry(ident, version)
    if entry is None:
        if ident not in library.index():
            say(
                f"no machine {ident!r} in roofgen's library; its machines: "
                f"{', '.join(library.ids())}"
            )
        else:
            shipped = ", ".join(f"v{v}" for v in library.versions(ident))
            say(f"this roofgen does not ship version {version} of {ident!r} (it ships {shipped})")
        raise Failure(EXIT_INVALID)
    return entry


@machines_cmd.command("show")
@click.argument("ident", metavar="ID")
@click.option("--version", "version", type=click.IntRange(1), help="Default: the latest.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "yaml"]),
    default="text",
    help="text: a summary; json: the data; yaml: the file itself.",
)
@common
def show_cmd(
    ident: str, version: int | None, fmt: str, strict: bool, quiet: bool, verbose: bool
) -> None:
    """Show one library machine: its pin, clocks and every roof with its source."""
    from roofgen import machines as library

    entry = _entry(ident, version)
    if fmt == "yaml":
        click.echo(entry.text(), nl=False)
        return
    doc = library.document(entry.id, entry.version)
    if doc is None:
        say(f"{entry.display}: this library machine does not validate; please report it")
        raise Failure(EXIT_INVALID)
    digest = library.content_hash(doc.data)
    if fmt == "json":
        out = {
            "roofgen_output": 1,
            "id": entry.id,
            "version": entry.version,
            "versions": library.versions(entry.id),
            "sha256": digest,
            "pin": {"id": entry.id, "version": entry.version, "sha256": digest},
            "machine": doc.data,
        }
        click.echo(json.dumps(out, indent=2))
        return
    _show_text(entry, doc.data, digest)


def _show_text(entry: Any, data: dict[str, Any], digest: str) -> None:
    from roofgen import machines as library

    shipped = ", ".join(f"v{v}" for v in library.versions(entry.id))
    click.echo(f"{entry.id}: {data['name']} (roofgen library {entry.display}; versions {shipped})")
    click.echo(f"pin:     - {library.pin_text(entry.id, entry.version)}")
    click.echo(f"         - {library.pin_text(entry.id, entry.version, digest)}")
    clocks = ", ".join(f"{k} {v}" for k, v in data["clocks"].items())
    click.echo(f"clocks:  {clocks}")
    click.echo("compute:")
    for unit in data["compute"]:
        for precision, value in unit["peaks"].items():
            click.echo(f"  {unit['id']}/{precision}: {_roof_text(value)}")
    click.echo("memory:")
    for level in data["memory"]:
        click.echo(f"  {level['id']} ({level['role']}): {_roof_text(level['bandwidth'])}")
    if data.get("links"):
        click.echo("links (per direction):")
        for link in data["links"]:
            click.echo(f"  {link['id']}: {_roof_text(link['bandwidth_per_direction'])}")
    if data.get("power"):
        click.echo(f"power:   {_roof_text(data['power']['limit'])}")


def _roof_text(value: Any) -> str:
    if not isinstance(value, dict):
        return f"{value} (datasheet)"
    parts = []
    if "datasheet" in value:
        parts.append(f"{value['datasheet']} datasheet")
    if "measured" in value:
        parts.append(f"{value['measured']} measured")
    text = ", ".join(parts)
    source = value.get("source") or value.get("measured_source")
    return f"{text}  [{' '.join(str(source).split())}]" if source else text


@machines_cmd.command("vendor")
@click.argument("ident", metavar="ID")
@click.option("--version", "version", type=click.IntRange(1), help="Default: the latest.")
@click.option("-o", "--output", help="Where to write (default: SPECS/machines/ID.yaml).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@common
def vendor_cmd(
    ident: str,
    version: int | None,
    output: str | None,
    force: bool,
    strict: bool,
    quiet: bool,
    verbose: bool,
) -> None:
    """Copy a library machine into the team's specs (then it takes precedence)."""
    from roofgen import machines as library
    from roofgen.api import schema_comment
    from roofgen.version import __version__

    entry = _entry(ident, version)
    target = Path(output) if output else _vendor_target(entry.id)
    doc = library.document(entry.id, entry.version)
    digest = library.content_hash(doc.data) if doc is not None else "?"
    lines = entry.text().splitlines(keepends=True)
    note = (
        f"# Vendored from roofgen {__version__}'s machine library: {entry.id} version "
        f"{entry.version}, content sha256 {digest}.\n"
    )
    if lines and lines[0].startswith("# yaml-language-server:"):
        lines[0] = schema_comment(target, "machine") + "\n"
    lines.insert(1 if lines else 0, note)
    write_output("".join(lines), output or shown(target), force)
    if not quiet:
        say(
            f"wrote {shown(target)} ({entry.id} version {entry.version}); the specs' copy now "
            "takes precedence over the library",
            fg="green",
        )


def _vendor_target(ident: str) -> Path:
    specs = list(current_settings().specs)
    base = specs[0] if specs else Path("specs")
    if base.is_file():
        base = base.parent
    return base / "machines" / f"{ident}.yaml"
