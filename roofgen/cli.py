"""The command line: the ``roofgen`` group, its verbs, and the exit status.

Each verb lives in a module of ``roofgen.commands`` (options -> one library call ->
output and an exit status); what they share is :mod:`roofgen.commands.common`.
Exit statuses, the same for every verb: 0 ok, 1 invalid input, 2 usage error,
3 regression found, 4 internal error, 130 interrupted.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from roofgen.commands import VERBS
from roofgen.commands.common import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Failure,
    say,
    versions,
)
from roofgen.version import __version__


def _print_version(ctx: click.Context, _param: Any, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    for name, version in versions().items():
        click.echo(f"{name} {version}")
    ctx.exit(0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
    help="Print roofgen's version, the spec format version and the rendering stack's versions.",
)  # fmt: skip
def cli() -> None:
    """roofgen: roofline analysis and case-study sites from YAML performance cases."""


for _verb in VERBS:
    cli.add_command(_verb)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return the exit status (never raises)."""
    from roofgen.problems import SpecError

    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="roofgen",
                 standalone_mode=False)  # fmt: skip
    except Failure as exc:
        return exc.status
    except SpecError as exc:
        for p in exc.problems:
            say(p.format(), fg="red")
        return EXIT_INVALID
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except click.exceptions.Abort:
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        return _not_written(exc)
    except Exception:
        return _internal_error()
    return EXIT_OK


#: Errors of the disk, not of roofgen, whichever step met them.
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)


def _not_written(exc: OSError) -> int:
    """A file the writer refused (a link out of the project, a folder, a full disk), or
    a full disk met outside it (a folder made): exit status 1, the file named. Any
    other error of the operating system is roofgen's."""
    from roofgen.files import WriteRefused, refusal

    if isinstance(exc, WriteRefused):
        say(str(exc), fg="red")
    elif exc.errno in _DISK_ERRORS and exc.filename:
        say(f"{exc.filename}: not written: {refusal(exc)}", fg="red")
    else:
        return _internal_error()
    return EXIT_INVALID


def _internal_error() -> int:
    import tempfile  # imported here: every run would pay for them (with shutil, random)
    import traceback

    fd, path = tempfile.mkstemp(prefix="roofgen-crash-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(f"roofgen {__version__}\n{sys.argv!r}\n\n")
        traceback.print_exc(file=f)
    say(f"roofgen hit an internal error; please report it with the details in {path}", fg="red")
    return EXIT_INTERNAL


def entry() -> None:
    sys.exit(main())
