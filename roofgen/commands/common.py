"""What every verb shares: exit statuses, messages, the common options, settings,
checking the specs and writing output. Only the CLI layer (``roofgen.cli`` and the
verb modules here) prints or exits.

Exit statuses, the same for every verb: 0 ok, 1 invalid input, 2 usage error,
3 regression found, 4 internal error, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import wraps
from pathlib import Path
from typing import Any

import click

from roofgen.version import SPEC_FORMAT_VERSION, __version__

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_REGRESSION, EXIT_INTERNAL, EXIT_INTERRUPTED = (
    0, 1, 2, 3, 4, 130,
)  # fmt: skip


class Failure(Exception):
    """A handled failure: the message was printed; exit with ``status``."""

    def __init__(self, status: int):
        self.status = status


def is_terminal(stream: Any) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def use_colour(stream: Any) -> bool:
    """Colour on ``stream``: never with ``NO_COLOR`` (no-color.org); always with
    ``FORCE_COLOR`` (force-color.org; ``0`` or ``false`` turn it off), CI included, as CI
    logs that show colour ask for it that way; else only on a terminal, and not in CI."""
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR", "")
    if force:
        return force.strip().lower() not in ("0", "false")
    if os.environ.get("CI"):
        return False
    return is_terminal(stream)


def say(message: str, *, err: bool = True, fg: str | None = None) -> None:
    stream = sys.stderr if err else sys.stdout
    colour = bool(fg) and use_colour(stream)
    if colour and fg:
        message = click.style(message, fg=fg)
    # click strips styles when the stream is not a terminal: FORCE_COLOR keeps them.
    click.echo(message, err=err, color=colour or None)


def versions() -> dict[str, str]:
    """Versions of roofgen and of everything that decides output bytes."""
    from importlib import metadata

    out = {"roofgen": __version__, "spec format": str(SPEC_FORMAT_VERSION)}
    for dist in ("mkdocs", "mkdocs-material", "altair", "vl-convert-python"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    try:
        import vl_convert as vlc

        out["vega"] = vlc.get_vega_version()
        out["vega-lite"] = ", ".join(vlc.get_vegalite_versions()[-1:])
        out["vega-embed"] = vlc.get_vega_embed_version()
    except ImportError:
        pass
    return out


def common(func: Callable[..., Any]) -> Callable[..., Any]:
    """--strict, -q/--quiet, -v/--verbose: the same meaning in every verb."""

    @click.option("--strict", is_flag=True, help="Treat warnings as errors.")
    @click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
    @click.option("-v", "--verbose", is_flag=True, help="Print notes too.")
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper


def current_settings(overrides: dict[str, Any] | None = None) -> Any:
    from roofgen.config import load_settings

    return load_settings(Path.cwd(), overrides)


def spec_paths(given: Sequence[str], settings: Any) -> list[Path]:
    return [Path(p) for p in given] if given else list(settings.specs)


def report_problems(problems: list[Any], quiet: bool, verbose: bool, strict: bool) -> None:
    from roofgen.problems import Severity

    for p in problems:
        if p.severity is Severity.NOTE and not verbose:
            continue
        if p.severity is Severity.WARNING and quiet and not strict:
            continue
        colour = {"error": "red", "warning": "yellow"}.get(p.severity.value)
        say(p.format(), fg=colour)


def write_output(text: str | Iterable[str], output: str, force: bool) -> None:
    """``text`` (or its chunks) to stdout ('-') or to the file ``output`` (through
    :func:`roofgen.files.write_file`: inside the project, or the folder the user
    named; raises WriteRefused, which the CLI reports)."""
    from roofgen.files import write_file

    if output == "-":
        for chunk in [text] if isinstance(text, str) else text:
            click.echo(chunk, nl=False)
        return
    target = Path(output)
    if os.path.lexists(target) and not force:
        say(f"{target}: exists; pass --force to overwrite it")
        raise Failure(EXIT_INVALID)
    write_file(target, text)


def run_check(
    paths: tuple[str, ...],
    strict: bool,
    quiet: bool,
    verbose: bool,
    verb: str = "check",
    problems_only: bool = False,
    each: Callable[..., None] | None = None,
) -> Any:
    """The check of ``paths`` (default: the configured specs), its problems reported,
    with a progress line off a terminal (``verb`` names the step). Files unchanged since
    an earlier check come from the project's cache, as a build's do (the user's cache
    folder, owner-only, out of the repository); set ``ROOFGEN_NO_CACHE=1`` to check
    without it. ``problems_only``: the verb reads only the problems (`check`), so the
    findings of unchanged case files come from the cache too and the result holds no
    analysis. ``each``: the cases are checked and analysed one at a time and handed to
    it (:func:`roofgen.api.check_each`), the result holds no case."""
    from roofgen.api import check, check_each, project_cache

    settings = current_settings()
    progress = start_progress(quiet, verb)
    if progress is not None:
        progress("checking specs", 0, 0)
    options: dict[str, Any] = {
        "thresholds": settings.thresholds,
        "rules_file": settings.rules,
        "display_root": Path.cwd(),
        "cache_dir": None if os.environ.get("ROOFGEN_NO_CACHE") else project_cache(settings),
    }
    try:
        if each is not None:
            result = check_each(spec_paths(paths, settings), each, **options)
        else:
            result = check(spec_paths(paths, settings), problems_only=problems_only, **options)
    finally:
        end_progress(progress)
    report_problems(result.problems, quiet, verbose, strict)
    return result


def count_problems(problems: list[Any]) -> str:
    from collections import Counter

    c = Counter(p.severity.value for p in problems)
    return f"{c['error']} error(s), {c['warning']} warning(s), {c['note']} note(s)"


def start_progress(quiet: bool, verb: str = "build") -> Callable[[str, int, int], None] | None:
    """Progress of a long step: on a terminal, one line redrawn in place (not in CI, not
    with NO_COLOR); elsewhere (a CI log), a line every :data:`PROGRESS_EVERY_S` seconds
    while the step runs (``build: rendering charts 340/1000, 41 s``), so that a long build
    is not minutes of silence. None with ``-q``."""
    if quiet:
        return None
    if not is_terminal(sys.stderr):
        from roofgen.commands.progress import Ticker

        return Ticker(verb, PROGRESS_EVERY_S, sys.stderr).start()
    if os.environ.get("NO_COLOR") or os.environ.get("CI"):
        return None

    def show(step: str, done: int, total: int) -> None:
        count = f" {done}/{total}" if total else ""
        sys.stderr.write(f"\r\033[K{step}{count}...")
        sys.stderr.flush()

    return show


#: Seconds between progress lines when stderr is not a terminal.
PROGRESS_EVERY_S = 10.0


def end_progress(progress: Callable[[str, int, int], None] | None) -> None:
    if progress is None:
        return
    stop = getattr(progress, "stop", None)
    if stop is not None:
        stop()
        return
    sys.stderr.write("\r\033[K")
    sys.stderr.flush()


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def json_text(doc: Any) -> str:
    """``doc`` as indented, strict JSON text: a value that is not a finite number (an
    overflow from extreme input) is written as null, never ``Infinity``."""
    from roofgen.api import json_text as strict

    return strict(doc, indent=2)


def indented(indent: bool | None, output: str) -> int | None:
    """The JSON indent for ``--indent/--no-indent``: by default indented only for a
    reader, that is on stdout when it is a terminal; compact into a file or a pipe."""
    if indent is None:
        indent = output == "-" and bool(getattr(sys.stdout, "isatty", lambda: False)())
    return 2 if indent else None
