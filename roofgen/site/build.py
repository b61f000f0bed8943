"""Build the case-study site: specs -> analysis -> pages and charts -> MkDocs -> output.

Pages draw their charts in the browser (vega-embed, with its menu to export SVG or
PNG). Static SVGs, for ``<noscript>`` and a link under each chart, are rendered only
when the settings ask for them (``[site] static_charts``, ``roofgen build
--static-charts``): they cost most of a cold build.

:func:`build_site` is the whole pipeline, step by step. Nothing is written to
``output`` unless every step succeeded: the site is built in a temporary folder
beside it and swapped in with two renames, so an interrupted or failed build leaves
the previous site whole (:mod:`roofgen.site.output`). The team's own files come from
:mod:`roofgen.site.extras`, the HTML from MkDocs through :mod:`roofgen.site.mkdocs_run`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from roofgen.config import Settings
from roofgen.datafiles import data_dir
from roofgen.files import write_file
from roofgen.problems import Problem, Severity
from roofgen.site import lastbuild
from roofgen.site.cachedir import Cache
from roofgen.site.cachedir import choose as choose_cache
from roofgen.site.casecache import Reuse, open_cache
from roofgen.site.charts import Chart, ChartStats, ChartStore
from roofgen.site.context import ChartSlot, SiteContext, build_context
from roofgen.site.errors import BuildError
from roofgen.site.extras import Extras, site_extras
from roofgen.site.mkdocs_run import run_mkdocs, source_date_epoch
from roofgen.site.output import MARKER, MARKER_TEXT, OutputRefused, Target, guard, staging, swap
from roofgen.site.pages import RenderedChart, render_mkdocs_yml, render_pages
from roofgen.site.renderers import Renderers
from roofgen.site.sections.history import site_history, with_history

if TYPE_CHECKING:
    from roofgen.pipeline import CheckResult

__all__ = [
    "MARKER", "BuildResult", "ProgressFn", "build_site", "open_reuse", "refused", "run_mkdocs",
]  # fmt: skip

CHARTS_DIR = "assets/charts"
OWN_ASSETS = {
    "assets/stylesheets/roofgen.css": "roofgen.css",
    "assets/javascripts/roofgen-tables.js": "roofgen-tables.js",
}
OWN_ASSETS_CSS = [p for p in OWN_ASSETS if p.endswith(".css")]
OWN_ASSETS_JS = [p for p in OWN_ASSETS if p.endswith(".js")]

#: ``progress(step, done, total)``: a step's name and, where it counts, how far it is.
ProgressFn = Callable[[str, int, int], None]


@dataclass
class BuildResult:
    """What a build did: ``ok``, the problems, and where the time went."""

    ok: bool
    output: Path
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pages: int = 0
    charts: int = 0
    reused_pages: int = 0  # case pages taken from an earlier build (roofgen.site.casecache)
    chart_stats: ChartStats = field(default_factory=ChartStats)
    timings: dict[str, float] = field(default_factory=dict)  # step -> seconds

    @property
    def roofgen_s(self) -> float:
        """Seconds spent in roofgen itself (everything but MkDocs' own build)."""
        return sum(s for step, s in self.timings.items() if step != "mkdocs")

    @property
    def mkdocs_s(self) -> float:
        return self.timings.get("mkdocs", 0.0)


def build_site(
    checked: CheckResult,
    settings: Settings,
    output: Path,
    markdown_only: bool = False,
    quiet: bool = False,
    strict: bool = False,
    *,
    cache: Cache | None = None,
    clean: bool = False,
    renderers: Renderers | None = None,
    progress: ProgressFn | None = None,
    timings: dict[str, float] | None = None,
    sources: str | None = None,
    reuse: Reuse | None = None,
    target: Target | None = None,
) -> BuildResult:
    """Build the site of the checked specs ``checked`` into ``output``.

    The caller ran the check (:func:`roofgen.api.build_site` does, starting the chart
    ``renderers`` of a build with static charts as soon as the check knows that a spec
    changed, so that they are warm when the charts are known; see
    :mod:`roofgen.site.renderers`; without them SVGs are rendered in this process).
    Static SVGs are rendered only when ``settings.site["static_charts"]`` is true.
    ``markdown_only``
    writes the Markdown pages and their assets (the MkDocs docs folder) instead of the
    HTML site. ``strict`` fails on warnings, both roofgen's (spec warnings) and MkDocs'
    (broken links). ``quiet`` only keeps notes out of the result. Charts are cached in
    ``cache`` (default: the project's folder in the user's cache, see
    :mod:`roofgen.site.cachedir`). ``timings`` holds the seconds of steps the caller
    already took (the check). MkDocs does not run when its input is that of the last
    build into ``output`` and the output holds what that build wrote
    (:mod:`roofgen.site.lastbuild`), unless ``clean``. ``sources``, the digest of the
    build's own inputs (:mod:`roofgen.site.unchanged`), is recorded with the site, so
    that a build of the same inputs can keep it without a check. ``reuse``: the pages
    of earlier builds, that the check was given (:func:`open_reuse`), so that it
    analysed only the cases whose pages are not stored. ``target``: ``output`` as
    :func:`roofgen.site.output.guard` accepted it (the caller's guard, before it read
    anything); without it the guard runs here.
    """
    accepted = target or checked_output(settings, output)
    if isinstance(accepted, OutputRefused):
        return refused(output, accepted, timings)
    output = accepted.path
    result = BuildResult(ok=False, output=output, timings=dict(timings or {}))
    clock = StepClock(result.timings)
    tell = progress or (lambda step, done, total: None)
    if cache is None:
        cache = choose_cache(settings, output, None, use_cache=True)
    result.notes += cache.notes

    # 1. The check's problems: on any error, report them and write nothing.
    result.problems = list(checked.problems)
    if checked.failed(strict) or checked.specs is None or checked.analysis is None:
        return result
    try:
        extras = site_extras(settings)
    except BuildError as exc:
        result.problems.append(Problem(str(output), 0, 0, "", str(exc)))
        return result

    # 2. Page contexts from the analysis; the pages (and the listings) of unchanged
    # cases from the cache.
    tell("preparing pages", 0, 0)
    site = settings.site
    static = bool(site.get("static_charts"))
    with clock("context"):
        if reuse is None:
            reuse = open_reuse(settings, cache.folder, clean=clean)
        reuse.settle(checked)
        listings = reuse.listings(checked)
        ctx = build_context(
            checked.analysis,
            checked.specs.machines,
            name=str(site.get("name") or "Performance case studies"),
            description=str(site.get("description", "")),
            extra_nav=extras.nav,
            findings=checked.findings,
            advice=reuse.advice(checked.analysis, checked.ruleset)
            if reuse.hits
            else checked.advice,
            reused=reuse.hits.keys(),
            listings=listings,
        )
        ctx = with_history(ctx, reuse.history)

    # 3. Charts: Vega-Lite specs, and SVGs if asked for, from the cache where unchanged.
    store = ChartStore(cache.folder, renderers if renderers and renderers.count else None)
    with clock("charts"):
        charts = {slot.key: store.chart(slot.input) for slot in ctx.charts}
        pending = store.start(list(charts.values()) if static else [])

    # 4. Markdown pages, while the renderers work.
    tell("writing pages", 0, 0)
    with clock("pages"):
        rendered = _chart_blocks(ctx, charts, static)
        listed = reuse.kept([ctx.home, *ctx.machines, *ctx.indexes])
        pages = render_pages(ctx, rendered, made=listed.keys())
        pages.update(reuse.pages)
        pages.update(listed)
    with clock("charts"):
        svgs = pending.finish(lambda done, total: tell("rendering charts", done, total))
    if renderers is not None:
        renderers.close()  # before MkDocs: a renderer holds some 200 MB
    result.chart_stats = store.stats
    result.pages = len(pages) + len(extras.pages)
    result.charts = len(rendered) + reuse.charts
    result.reused_pages = len(reuse.hits)
    with clock("write"):
        reuse.store(ctx.cases, pages, listings)

    # 5. The MkDocs project in a temporary folder beside the output, 6. MkDocs,
    # 7. the new tree swapped in for the old one.
    # A failed write (a full disk, a read-only folder) is reported like any problem;
    # the staging folder is removed and the previous site stays whole.
    try:
        with staging(output) as stage:
            docs = stage / "docs"
            with clock("write"):
                js, polyfills = _write_docs(docs, pages, svgs, extras, cache.vega)
            # Written: let go of the pages and charts before MkDocs holds its own copy.
            del charts, rendered, pages, svgs
            inputs, warnings = None, []  # no HTML: nothing to remember
            report: lastbuild.Kept | None = None
            if markdown_only:
                tree = docs
            else:
                with clock("write"):
                    config = stage / "mkdocs.yml"
                    write_file(
                        config,
                        render_mkdocs_yml(
                            ctx,
                            site,
                            docs_dir="docs",
                            extra_css=[*OWN_ASSETS_CSS, *extras.css],
                            extra_javascript=js,
                            polyfills=polyfills,
                            logo=extras.logo,
                        ),
                        root=stage,
                    )
                epoch = source_date_epoch(ctx.newest_date)
                inputs = lastbuild.inputs_digest(stage, strict=strict, epoch=epoch)
                report = lastbuild.Kept(checked.problems, [], result.pages, result.charts)
                if not clean and _kept(result, cache, inputs, strict, sources, report):
                    return _built(result, site, markdown_only, quiet)
                tell("building HTML with MkDocs", 0, 0)
                tree = stage / "site"
                with clock("mkdocs"):
                    warnings = run_mkdocs(
                        config, tree, strict=strict, epoch=epoch, use_cache=cache.vega
                    )
                result.problems += _mkdocs_problems(warnings, strict)
                if warnings and strict:
                    return result
                with clock("write"):
                    _offline_search_index(tree)
            write_file(tree / MARKER, MARKER_TEXT, root=tree)
            with clock("swap"):
                swap(tree, accepted)
            with clock("write"):
                lastbuild.remember(cache.folder, output, inputs, warnings, sources, report)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        result.problems.append(
            Problem(str(output), 0, 0, "", f"cannot write the site: {reason}{where}")
        )
        return result
    except BuildError as exc:  # MkDocs stopped, or the output changed meanwhile
        file, setting = (
            (exc.file, exc.setting) if isinstance(exc, OutputRefused) else ("mkdocs", "")
        )
        result.problems.append(Problem(file, 0, 0, setting, str(exc)))
        return result
    return _built(result, site, markdown_only, quiet)


def checked_output(settings: Settings, output: Path) -> Target | OutputRefused:
    """``output`` as :func:`roofgen.site.output.guard` accepts it, or why it refused."""
    try:
        return guard(settings, output)
    except OutputRefused as exc:
        return exc


def refused(output: Path, exc: OutputRefused, timings: dict[str, float] | None) -> BuildResult:
    """The result of a build whose output the guard refused: nothing read or written."""
    result = BuildResult(ok=False, output=Path(output).absolute(), timings=dict(timings or {}))
    result.problems.append(Problem(exc.file, 0, 0, exc.setting, str(exc)))
    return result


def open_reuse(settings: Settings, folder: Path | None, *, clean: bool = False) -> Reuse:
    """The case pages of earlier builds that a build can reuse (none in a build with
    static charts or without a cache; ``clean``: none read, every page stored), with
    the site's history, which each case page holds."""
    static = bool(settings.site.get("static_charts"))
    cache = open_cache(folder, settings, static=static, fresh=clean)
    return Reuse(cache, site_history(settings, folder))


def _built(
    result: BuildResult, site: dict[str, object], markdown_only: bool, quiet: bool
) -> BuildResult:
    """``result``, a site built (or kept), with the notes every build gives."""
    if not markdown_only and not site.get("url") and not quiet:
        result.notes.append(
            "site.url is not set, so the sitemap is empty; set it in the settings file "
            "to publish one"
        )
    result.ok = True
    return result


def _kept(
    result: BuildResult,
    cache: Cache,
    inputs: str,
    strict: bool,
    sources: str | None,
    report: lastbuild.Kept,
) -> bool:
    """Whether the site in the output is what MkDocs would write from ``inputs`` (then
    the result says so, with that build's MkDocs warnings, and the record learns the
    build's ``sources``)."""
    kept = lastbuild.keep(cache.folder, result.output, inputs)
    if kept is None:
        return False
    if sources is not None:
        lastbuild.remember(cache.folder, result.output, inputs, kept, sources, report)
    result.problems += _mkdocs_problems(kept, strict)
    result.notes.append(
        "no page changed since the last build: the site was kept as it is "
        "(--clean builds it afresh)"
    )
    return True


def _mkdocs_problems(warnings: list[str], strict: bool) -> list[Problem]:
    severity = Severity.ERROR if strict else Severity.WARNING
    return [Problem("mkdocs", 0, 0, "", message, severity=severity) for message in warnings]


class StepClock:
    """Times each step. roofgen's own steps run with the cyclic garbage collector
    paused: they allocate many small, acyclic objects (freed by reference counting),
    and collections that walk the large live analysis cost up to a third of their time.
    MkDocs runs as it normally does."""

    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings

    @contextlib.contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        pause = step != "mkdocs" and gc.isenabled()
        if pause:
            gc.disable()
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[step] = self.timings.get(step, 0.0) + time.perf_counter() - start
            if pause:
                gc.enable()


# --------------------------------------------------------------------------- charts


#: Shown where a chart would be, to a reader without JavaScript, in a site without SVGs.
NOSCRIPT_NOTE = "Charts need JavaScript (or a site built with roofgen build --static-charts)."


def _chart_blocks(
    ctx: SiteContext, charts: dict[str, Chart], static: bool
) -> dict[str, RenderedChart]:
    """Each chart's HTML block; with ``static``, its SVG's docs path for the fallback
    image and the link under it."""
    from roofgen.site.assets import chart_html_block

    home: tuple[ChartSlot, ...] = (ctx.home.chart,) if ctx.home.chart else ()
    pages = [(ctx.home.path, home)]
    pages += [(p.path, (*p.charts, *p.section_charts)) for p in ctx.cases]
    pages += [(m.path, (m.chart, *m.section_charts)) for m in ctx.machines]
    out: dict[str, RenderedChart] = {}
    for page_path, slots in pages:
        for slot in slots:
            chart = charts[slot.key]
            if not static:
                block = chart_html_block(slot.spec_id, chart.spec, None, noscript=NOSCRIPT_NOTE)
                out[slot.key] = RenderedChart(block, None)
                continue
            svg = f"{CHARTS_DIR}/{chart.digest}.svg"
            relative = os.path.relpath(svg, os.path.dirname(page_path) or ".").replace(os.sep, "/")
            out[slot.key] = RenderedChart(chart_html_block(slot.spec_id, chart.spec, relative), svg)
    return out


# --------------------------------------------------------------------------- files


def _write(root: Path, relative: str, text: str) -> None:
    """A file of the staging folder, never through a link out of ``root``."""
    write_file(root / relative, text, root=root)


def _write_docs(
    docs: Path,
    pages: dict[str, str],
    svgs: dict[str, Path | str],
    extras: Extras,
    vega_cache: bool,
) -> tuple[list[str], list[str]]:
    """Pages, charts and scripts under ``docs``; returns (scripts, polyfills) to load."""
    from roofgen.site.assets import write_iframe_worker, write_vega_bundle

    for path, text in pages.items():
        _write(docs, path, text)
    if svgs:
        (docs / CHARTS_DIR).mkdir(parents=True, exist_ok=True)
    for digest, svg in svgs.items():
        svg_file = docs / CHARTS_DIR / f"{digest}.svg"
        if isinstance(svg, Path):
            shutil.copyfile(svg, svg_file)
        else:
            _write(docs, f"{CHARTS_DIR}/{digest}.svg", svg)
    for asset, name in OWN_ASSETS.items():
        _write(docs, asset, (data_dir("templates") / "assets" / name).read_text("utf-8"))
    for extra, src in extras.files.items():
        (docs / extra).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, docs / extra)
    scripts = write_vega_bundle(docs, use_cache=vega_cache)
    polyfills = [write_iframe_worker(docs)]
    return [*scripts, *OWN_ASSETS_JS], polyfills


def _offline_search_index(site: Path) -> None:
    """``search/search_index.js``: what Material's search loads on ``file://`` pages."""
    index = site / "search" / "search_index.json"
    if index.is_file():
        text = index.read_text(encoding="utf-8")
        _write(site, "search/search_index.js", f"var __index = {text}")
