"""`roofgen schema` and `roofgen config`: the schemas for editors, the effective settings."""

from __future__ import annotations

import json
from pathlib import Path

import click

from roofgen.commands.common import (
    EXIT_USAGE,
    Failure,
    common,
    current_settings,
    say,
    write_output,
)


@click.command("schema")
@click.argument(
    "name", required=False, type=click.Choice(["machine", "case", "output", "rules", "config"])
)
@click.option(
    "--write",
    "write_dir",
    type=click.Path(file_okay=False),
    help="Write every schema into this folder.",
)
@click.option("--force", is_flag=True, help="Overwrite existing files.")
@common
def schema_cmd(name: str | None, write_dir: str | None, force: bool, strict: bool, quiet: bool,
               verbose: bool) -> None:  # fmt: skip
    """Print a schema (machine, case, output, rules, config) or write them all for editors."""
    from roofgen.api import schema_document as load_schema
    from roofgen.api import schema_names

    ALL_SCHEMAS = schema_names()

    if write_dir:
        folder = Path(write_dir)
        for kind in ALL_SCHEMAS:
            write_output(json.dumps(load_schema(kind), indent=2) + "\n",
                   str(folder / f"{kind}.schema.json"), force)  # fmt: skip
        if not quiet:
            say(f"wrote {len(ALL_SCHEMAS)} schemas to {folder}")
        return
    if name is None:
        say("name a schema (machine, case, output, rules, config) or pass --write DIR")
        raise Failure(EXIT_USAGE)
    click.echo(json.dumps(load_schema(name), indent=2))


@click.command("config")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@common
def config_cmd(fmt: str, strict: bool, quiet: bool, verbose: bool) -> None:
    """Show the effective settings and where each came from."""
    from roofgen.config import describe

    settings = current_settings()
    rows = describe(settings)
    if fmt == "json":
        doc = {"file": str(settings.file) if settings.file else None,
               "settings": [{"key": k, "value": v, "origin": o} for k, v, o in rows]}  # fmt: skip
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(f"# settings file: {settings.file or '(none found; defaults)'}")
    width = max(len(k) for k, _, _ in rows)
    for key, value, origin in rows:
        click.echo(f"{key.ljust(width)}  {value}  ({origin})")
