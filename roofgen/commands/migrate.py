"""`roofgen migrate`: move spec files to the current format version, comments kept."""

from __future__ import annotations

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
    spec_paths,
)


@click.command("migrate")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Only report the files that need migrating (exit status 1 if any); write nothing.",
)
@common
def migrate_cmd(
    paths: tuple[str, ...], check_only: bool, strict: bool, quiet: bool, verbose: bool
) -> None:
    """Move spec files to the current format version (default: the configured specs).

    Each file is edited round-trip: comments, key order, quoting and indentation
    stay as they are; only the lines the format change touches change.
    """
    from roofgen.api import discover

    files, problems = discover(spec_paths(paths, current_settings()), Path.cwd())
    for problem in problems:
        say(problem.format(), fg="red")
    outcomes = [_migrate_file(path, check_only, quiet, verbose) for path in files]
    pending = outcomes.count("pending")
    if not quiet:
        verb = "need migrating" if check_only else "migrated"
        say(f"{len(files)} file(s) looked at, {pending} {verb}")
        if pending and not check_only:
            say("next: roofgen check")
    if problems or "failed" in outcomes or (check_only and pending):
        raise Failure(EXIT_INVALID)


def _migrate_file(path: Path, check_only: bool, quiet: bool, verbose: bool) -> str:
    """Migrate one file: 'current', 'pending' (needs, or got, a migration) or 'failed'."""
    from roofgen.api import (
        CURRENT,
        MigrationError,
        lf_text,
        migrate_text,
        read_file,
        write_edited,
    )
    from roofgen.files import WriteRefused

    raw, problems = read_file(path, shown(path))  # a pipe, a device, a loop: refused
    if raw is None:
        for problem in problems:
            say(problem.format(), fg="red")
        return "failed"
    try:
        text = lf_text(raw)
    except UnicodeDecodeError:
        say(f"{shown(path)}: not UTF-8 text; nothing done", fg="red")
        return "failed"
    try:
        result = migrate_text(text)
    except MigrationError as exc:
        say(f"{shown(path)}: {exc}", fg="red")
        return "failed"
    if not result.changed:
        if verbose:
            say(f"{shown(path)}: format version {CURRENT}, up to date")
        return "current"
    if check_only:
        say(f"{shown(path)}: {_pending(result)}", fg="yellow")
        return "pending"
    try:
        write_edited(path, result.text, raw)
    except WriteRefused as exc:
        say(str(exc), fg="red")
        return "failed"
    if not quiet:
        moved = f"version {result.before} -> {result.after}"
        if result.before == result.after:
            moved = f"version {result.after}, keys renamed"
        say(f"migrated {shown(path)}: {moved}", fg="green")
        for note in result.notes:
            say(f"  {note}")
    return "pending"


def _pending(result: Any) -> str:
    if result.before == result.after:
        return "renamed keys; `roofgen migrate` renames them: " + "; ".join(result.notes)
    return f"format version {result.before}; `roofgen migrate` moves it to version {result.after}"
