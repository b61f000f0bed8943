"""The command line: options -> one library call -> output and an exit status.

Exit statuses, the same for every verb: 0 ok, 1 invalid input, 2 usage error,
3 regression found, 4 internal error, 130 interrupted.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import Any

import click

from roofgen import SPEC_FORMAT_VERSION, __version__

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_REGRESSION, EXIT_INTERNAL, EXIT_INTERRUPTED = (
    0, 1, 2, 3, 4, 130,
)  # fmt: skip


class Failure(Exception):
    """A handled failure: the message was printed; exit with ``status``."""

    def __init__(self, status: int):
        self.status = status


def _use_colour(stream: Any) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("CI"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def say(message: str, *, err: bool = True, fg: str | None = None) -> None:
    stream = sys.stderr if err else sys.stdout
    if fg and _use_colour(stream):
        message = click.style(message, fg=fg)
    click.echo(message, err=err)


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


def _print_version(ctx: click.Context, _param: Any, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    for name, version in versions().items():
        click.echo(f"{name} {version}")
    ctx.exit(0)


def common(func: Callable[..., Any]) -> Callable[..., Any]:
    """--strict, -q/--quiet, -v/--verbose: the same meaning in every verb."""

    @click.option("--strict", is_flag=True, help="Treat warnings as errors.")
    @click.option("-q", "--quiet", is_flag=True, help="Print only errors.")
    @click.option("-v", "--verbose", is_flag=True, help="Print notes too.")
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
    help="Print roofgen's version, the spec format version and the rendering stack's versions.",
)  # fmt: skip
def cli() -> None:
    """roofgen: roofline analysis and case-study sites from YAML performance cases."""


def _settings(overrides: dict[str, Any] | None = None) -> Any:
    from roofgen.config import load_settings

    return load_settings(Path.cwd(), overrides)


def _paths(given: Sequence[str], settings: Any) -> list[Path]:
    return [Path(p) for p in given] if given else list(settings.specs)


def _report_problems(problems: list[Any], quiet: bool, verbose: bool, strict: bool) -> None:
    from roofgen.problems import Severity

    for p in problems:
        if p.severity is Severity.NOTE and not verbose:
            continue
        if p.severity is Severity.WARNING and quiet and not strict:
            continue
        colour = {"error": "red", "warning": "yellow"}.get(p.severity.value)
        say(p.format(), fg=colour)


def _write(text: str, output: str, force: bool) -> None:
    if output == "-":
        click.echo(text, nl=False)
        return
    target = Path(output)
    if target.exists() and not force:
        say(f"{target}: exists; pass --force to overwrite it")
        raise Failure(EXIT_INVALID)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)


def _run_check(paths: tuple[str, ...], strict: bool, quiet: bool, verbose: bool) -> Any:
    from roofgen.api import check

    settings = _settings()
    result = check(
        _paths(paths, settings),
        thresholds=settings.thresholds,
        rules_file=settings.rules,
        display_root=Path.cwd(),
    )
    _report_problems(result.problems, quiet, verbose, strict)
    return result


@cli.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@common
def check_cmd(paths: tuple[str, ...], fmt: str, output: str, force: bool, strict: bool,
              quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Validate spec files (default: the configured specs folder)."""
    result = _run_check(paths, strict, quiet, verbose)
    failed = result.failed(strict)
    if fmt == "json":
        doc = {
            "roofgen_output": 1,
            "ok": not failed,
            "files": list(result.files),
            "problems": [p.to_json() for p in result.problems],
        }
        _write(json.dumps(doc, indent=2) + "\n", output, force)
    elif not quiet:
        counts = _counts(result.problems)
        say(f"{len(result.files)} file(s) checked: {counts}", fg="red" if failed else "green")
    if failed:
        raise Failure(EXIT_INVALID)


def _counts(problems: list[Any]) -> str:
    from collections import Counter

    c = Counter(p.severity.value for p in problems)
    return f"{c['error']} error(s), {c['warning']} warning(s), {c['note']} note(s)"


@cli.command("analyze")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              help="csv: one row per variant and launch; nested keys joined with '/'.")  # fmt: skip
@click.option("-o", "--output", default="-", help="Where the report goes ('-': stdout).")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@common
def analyze_cmd(paths: tuple[str, ...], fmt: str, output: str, force: bool, strict: bool,
                quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Analyse the specs: bounds, binding roof, efficiency, headroom per launch and variant."""
    from roofgen.api import analysis_csv, analysis_document, analysis_text

    result = _run_check(paths, strict, quiet, verbose)
    if result.failed(strict) or result.analysis is None:
        raise Failure(EXIT_INVALID)
    if fmt == "json":
        text = json.dumps(analysis_document(result), indent=2) + "\n"
    elif fmt == "csv":
        text = analysis_csv(result)
    else:
        text = analysis_text(result)
    _write(text, output, force)


@cli.command("schema")
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
            _write(json.dumps(load_schema(kind), indent=2) + "\n",
                   str(folder / f"{kind}.schema.json"), force)  # fmt: skip
        if not quiet:
            say(f"wrote {len(ALL_SCHEMAS)} schemas to {folder}")
        return
    if name is None:
        say("name a schema (machine, case, output, rules, config) or pass --write DIR")
        raise Failure(EXIT_USAGE)
    click.echo(json.dumps(load_schema(name), indent=2))


@cli.command("config")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@common
def config_cmd(fmt: str, strict: bool, quiet: bool, verbose: bool) -> None:
    """Show the effective settings and where each came from."""
    from roofgen.config import describe

    settings = _settings()
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
    except Exception:
        return _internal_error()
    return EXIT_OK


def _internal_error() -> int:
    fd, path = tempfile.mkstemp(prefix="roofgen-crash-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(f"roofgen {__version__}\n{sys.argv!r}\n\n")
        traceback.print_exc(file=f)
    say(f"roofgen hit an internal error; please report it with the details in {path}", fg="red")
    return EXIT_INTERNAL


def entry() -> None:
    sys.exit(main())


def _progress(quiet: bool) -> Callable[[str, int, int], None] | None:
    """A one-line progress display on a terminal (not in CI, with NO_COLOR or -q)."""
    if quiet or not _use_colour(sys.stderr):
        return None

    def show(step: str, done: int, total: int) -> None:
        count = f" {done}/{total}" if total else ""
        sys.stderr.write(f"\r\033[K{step}{count}...")
        sys.stderr.flush()

    return show


def _end_progress(progress: Callable[[str, int, int], None] | None) -> None:
    if progress is not None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


@cli.command("build")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Folder for the site (default: the configured output, 'site').")  # fmt: skip
@click.option("--markdown-only", is_flag=True,
              help="Write the Markdown pages and assets, not the HTML site.")  # fmt: skip
@click.option("--cache-dir", type=click.Path(file_okay=False),
              help="Chart cache (default: .roofgen-cache beside the settings file).")  # fmt: skip
@click.option("--no-cache", is_flag=True, help="Render every chart afresh; cache nothing.")
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=2, show_default=True,
              help="Chart renderer processes (0: render in roofgen's own process).")  # fmt: skip
@common
def build_cmd(paths: tuple[str, ...], output: str | None, markdown_only: bool,
              cache_dir: str | None, no_cache: bool, jobs: int, strict: bool, quiet: bool,
              verbose: bool) -> None:  # fmt: skip
    """Build the case-study site from the specs (default: the configured specs folder)."""
    from roofgen.api import build_site

    settings = _settings({"output": output})
    progress = _progress(quiet)
    try:
        result = build_site(
            _paths(paths, settings), settings, settings.output, markdown_only=markdown_only,
            quiet=quiet, strict=strict, cache_dir=Path(cache_dir) if cache_dir else None,
            use_cache=not no_cache, workers=jobs, progress=progress,
        )  # fmt: skip
    finally:
        _end_progress(progress)
    _report_problems(result.problems, quiet, verbose, strict)
    if not result.ok:
        say(f"{_counts(result.problems)}: site not built; {_shown(result.output)} is unchanged",
            fg="red")  # fmt: skip
        raise Failure(EXIT_INVALID)
    for note in result.notes:
        if verbose or not quiet:
            say(f"note: {note}")
    if verbose:
        stats = result.chart_stats
        say(f"charts: {stats.svgs_rendered} rendered, {stats.svgs_cached} from the cache")
        for step, seconds in result.timings.items():
            say(f"  {step}: {seconds:.2f} s")
    if quiet:
        return
    where = _shown(result.output)
    say(f"built {result.pages} pages and {result.charts} charts into {where}", fg="green")
    target = "index.md" if markdown_only else "index.html"
    click.echo(f"open {Path(where) / target}")


@cli.command("serve")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Folder for the site (default: the configured output, 'site').")  # fmt: skip
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")  # fmt: skip
@click.option("--interval", type=click.FloatRange(0.1), default=1.0, show_default=True,
              help="Seconds between checks for changed specs and templates.")  # fmt: skip
@common
def serve_cmd(paths: tuple[str, ...], output: str | None, port: int, interval: float,
              strict: bool, quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Build the site, serve it on 127.0.0.1 and rebuild when specs or templates change."""
    from roofgen.api import serve

    settings = _settings({"output": output})

    def report(result: Any) -> None:
        _report_problems(result.problems, quiet, verbose, strict)
        if not result.ok:
            say(f"{_counts(result.problems)}: build failed; still serving the previous site",
                fg="red")  # fmt: skip
        elif not quiet:
            say(f"built {result.pages} pages in {result.roofgen_s + result.mkdocs_s:.1f} s",
                fg="green")  # fmt: skip

    def ready(url: str) -> None:
        say(f"serving {_shown(settings.output)} at {url} (Ctrl-C to stop)", fg="green")

    first = serve(_paths(paths, settings), settings, settings.output, port=port,
                  interval=interval, strict=strict, on_build=report, on_ready=ready)  # fmt: skip
    if not first.ok:
        raise Failure(EXIT_INVALID)


CHART_FORMATS = (".svg", ".png", ".html", ".json")


@cli.command("chart")
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
    if Path(output).exists() and not force:
        say(f"{output}: exists; pass --force to overwrite it")
        raise Failure(EXIT_INVALID)
    result = _run_check(paths, strict, quiet, verbose)
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


# Verbs defined in modules of their own register themselves on `cli` when imported.
import roofgen.commands  # noqa: E402,F401
