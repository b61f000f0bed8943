"""`roofgen build` and `roofgen serve`: the case-study site."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    Failure,
    common,
    count_problems,
    current_settings,
    end_progress,
    report_problems,
    say,
    shown,
    spec_paths,
    start_progress,
)


@click.command("build")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("-o", "--output", type=click.Path(file_okay=False),
              help="Folder for the site (default: the configured output, 'site').")  # fmt: skip
@click.option("--markdown-only", is_flag=True,
              help="Write the Markdown pages and assets, not the HTML site.")  # fmt: skip
@click.option("--cache-dir", type=click.Path(file_okay=False),
              help="Cache folder (default: the project's in the user's cache folder); "
                   "not used if git tracks files in it.")  # fmt: skip
@click.option("--no-cache", is_flag=True,
              help="Parse, validate and render everything afresh; use no cache.")  # fmt: skip
@click.option("--clean", is_flag=True,
              help="Run MkDocs even when no page changed since the last build (for "
                   "publishing).")  # fmt: skip
@click.option("--static-charts", is_flag=True,
              help="Also render every chart as a static SVG, shown without JavaScript "
                   "(default: [site] static_charts; charts are drawn in the browser).")  # fmt: skip
@click.option("-j", "--jobs", type=click.IntRange(min=0), default=2, show_default=True,
              help="Chart renderer processes for static charts (0: render in roofgen's "
                   "own process).")  # fmt: skip
@common
def build_cmd(paths: tuple[str, ...], output: str | None, markdown_only: bool,
              cache_dir: str | None, no_cache: bool, clean: bool, static_charts: bool,
              jobs: int, strict: bool, quiet: bool, verbose: bool) -> None:  # fmt: skip
    """Build the case-study site from the specs (default: the configured specs folder)."""
    from roofgen.api import build_site

    static = True if static_charts else None  # unset: the settings decide
    settings = current_settings({"output": output, "site.static_charts": static})
    progress = start_progress(quiet)
    try:
        result = build_site(
            spec_paths(paths, settings), settings, settings.output, markdown_only=markdown_only,
            quiet=quiet, strict=strict, cache_dir=Path(cache_dir) if cache_dir else None,
            use_cache=not no_cache, clean=clean, workers=jobs, progress=progress,
        )  # fmt: skip
    finally:
        end_progress(progress)
    report_problems(result.problems, quiet, verbose, strict)
    if not result.ok:
        where = shown(result.output)
        say(f"{count_problems(result.problems)}: site not built; {where} is unchanged", fg="red")
        raise Failure(EXIT_INVALID)
    for note in result.notes:
        if verbose or not quiet:
            say(f"note: {note}")
    if verbose:
        stats = result.chart_stats
        if settings.site.get("static_charts"):
            say(f"charts: {stats.svgs_rendered} rendered, {stats.svgs_cached} from the cache")
        else:
            say("charts: drawn in the browser (no static SVGs)")
        for step, seconds in result.timings.items():
            say(f"  {step}: {seconds:.2f} s")
        say(split_line(result.roofgen_s, result.mkdocs_s))
    if quiet:
        return
    where = shown(result.output)
    say(f"built {result.pages} pages and {result.charts} charts into {where}", fg="green")
    target = "index.md" if markdown_only else "index.html"
    click.echo(f"open {Path(where) / target}")


def split_line(roofgen_s: float, mkdocs_s: float) -> str:
    """``time: roofgen 1.20 s, MkDocs 3.40 s (74%)``: where a build's time went."""
    total = roofgen_s + mkdocs_s
    share = f" ({mkdocs_s / total:.0%})" if total > 0 else ""
    return f"time: roofgen {roofgen_s:.2f} s, MkDocs {mkdocs_s:.2f} s{share}"


@click.command("serve")
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

    settings = current_settings({"output": output})

    def report(result: Any) -> None:
        report_problems(result.problems, quiet, verbose, strict)
        if not result.ok:
            say(f"{count_problems(result.problems)}: build failed; still serving the previous site",
                fg="red")  # fmt: skip
        elif not quiet:
            say(f"built {result.pages} pages in {result.roofgen_s + result.mkdocs_s:.1f} s",
                fg="green")  # fmt: skip

    def ready(url: str) -> None:
        say(f"serving {shown(settings.output)} at {url} (Ctrl-C to stop)", fg="green")

    from roofgen.site.errors import BuildError

    try:
        first = serve(
            spec_paths(paths, settings), settings, settings.output, port=port,
            interval=interval, strict=strict, on_build=report, on_ready=ready,
        )  # fmt: skip
    except BuildError as exc:
        say(str(exc), fg="red")
        raise Failure(EXIT_INVALID) from None
    if not first.ok:
        raise Failure(EXIT_INVALID)
