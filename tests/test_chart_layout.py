"""Charts read at a glance: the example site's charts (drawn by vega-embed, at 390, 1280
and 1920 px wide windows), its static SVGs and ``roofgen chart``'s SVG of every example
kernel, measured in headless Chromium (see ``chartprobe``): no two texts overlap, no text
on a data point, every roof labelled with its value, every legend entry drawn, at least two
labelled ticks per decade on equally long decades, tick text at least 11 px, the action
menu clear of every text, no point hidden under one of another level. A failure names the
page, the chart and the texts.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from browser import serve_directory
from chartprobe import ChartReport, probe_page

from roofgen.api import check, kernel_chart, write_chart

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "specs"
WIDTHS = (390, 1280, 1920)
KINDS = (
    "overlap",
    "text-on-point",
    "small-ticks",
    "action-on-text",
    "legend-undrawn",
    "sparse-ticks",
    "unequal-decades",
    "roof-unlabelled",
    "point-hidden",
)
_READY = "() => ['ready', 'error'].includes(document.documentElement.dataset.roofgenCharts)"

# The fixtures draw every chart of the example site at three widths: minutes on a
# loaded machine, more than the suite's default limit per test.
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory, make_settings: Any) -> dict[str, Path]:
    """The example site (interactive and with static SVGs) and ``roofgen chart``'s SVGs."""
    from roofgen.api import build_site

    root = tmp_path_factory.mktemp("layout")
    shutil.copytree(EXAMPLES, root / "specs")
    out: dict[str, Path] = {}
    for name, static in (("site", False), ("static", True)):
        settings = make_settings(root, name="Example cases", static_charts=static)
        result = build_site([root / "specs"], settings, root / name, strict=True)
        assert result.ok, [p.format() for p in result.problems]
        out[name] = root / name
    checked = check([root / "specs"])
    assert checked.analysis is not None
    charts = root / "chart"
    charts.mkdir()
    for case in checked.analysis.cases:
        for kernel in (k.id for k in case.case.kernels):
            spec = kernel_chart(checked, case.case.id, kernel)
            write_chart(spec, charts / f"{case.case.id}--{kernel}.svg")
            write_chart(spec, charts / f"{case.case.id}--{kernel}.json")
    out["chart"] = charts
    return out


def _pages(site: Path) -> list[str]:
    return sorted(
        str(p.parent.relative_to(site)) + "/"
        for p in site.glob("**/index.html")
        if "roofgen-chart-spec" in p.read_text(encoding="utf-8")
    )


def _run(browser: Any, url_of: Iterator[tuple[str, str, int]]) -> list[ChartReport]:
    reports: list[ChartReport] = []
    pages: dict[int, Any] = {}
    try:
        for name, url, width in url_of:
            if width not in pages:
                pages[width] = browser.new_context(viewport={"width": width, "height": 900})
            page = pages[width].pages[0] if pages[width].pages else pages[width].new_page()
            page.goto(url)
            if not url.endswith(".svg"):
                page.wait_for_function(_READY)
            spec = None
            if url.endswith(".svg"):
                sidecar = Path(urlsplit(url).path).with_suffix(".json")
                if sidecar.is_file():
                    spec = json.loads(sidecar.read_text(encoding="utf-8"))
            reports += probe_page(page, f"{name} @ {width} px", spec=spec)
    finally:
        for context in pages.values():
            context.close()
    dump = os.environ.get("ROOFGEN_LAYOUT_DUMP")
    if dump:
        with open(dump, "a", encoding="utf-8") as out:
            for r in reports:
                for f in r.findings:
                    out.write(json.dumps([r.page, r.chart, f.kind, f.what]) + "\n")
    return reports


def _summary(reports: list[ChartReport]) -> str:
    lines = []
    for r in reports:
        for f in r.findings:
            lines.append(f"{r.page} [{r.chart}] {f}")
    return "\n  ".join(lines[:200]) + (
        f"\n  ... {len(lines) - 200} more" if len(lines) > 200 else ""
    )


@pytest.fixture(scope="module")
def site_reports(chromium_browser: Any, sites: dict[str, Path]) -> list[ChartReport]:
    pages = _pages(sites["site"])
    assert pages
    with serve_directory(sites["site"]) as base:
        return _run(chromium_browser, ((p, f"{base}{p}", w) for w in WIDTHS for p in pages))


@pytest.fixture(scope="module")
def svg_reports(chromium_browser: Any, sites: dict[str, Path]) -> list[ChartReport]:
    files = [*sorted(sites["chart"].glob("*.svg"))]
    static = sorted((sites["static"] / "assets" / "charts").glob("**/*.svg"))
    assert files and static
    urls = [(f"roofgen chart {f.name}", f.as_uri(), 1280) for f in files]
    urls += [(f"static {f.relative_to(sites['static'])}", f.as_uri(), 1280) for f in static]
    return _run(chromium_browser, iter(urls))


@pytest.mark.parametrize("kind", KINDS)
def test_site_charts_read_at_a_glance(site_reports: list[ChartReport], kind: str) -> None:
    bad = [r for r in site_reports if r.of(kind)]
    assert not bad, _summary([ChartReport(r.page, r.chart, r.of(kind)) for r in bad])


@pytest.mark.parametrize("kind", KINDS)
def test_static_and_command_charts_read_at_a_glance(
    svg_reports: list[ChartReport], kind: str
) -> None:
    bad = [r for r in svg_reports if r.of(kind)]
    assert not bad, _summary([ChartReport(r.page, r.chart, r.of(kind)) for r in bad])
