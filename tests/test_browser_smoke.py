"""Offline chart assets: HTML embedding, the cached Vega bundle, and real-browser checks.

The browser tests open pages in headless Chromium (see ``tests/browser.py``),
over http://127.0.0.1 and from file://, with every off-host request blocked,
and check that Vega drew the expected SVG marks without console errors.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import altair as alt
import pytest
import vl_convert
import yaml
from browser import WatchedPage, open_watched_page, wait_for_charts

from roofgen.site import assets

TRICKY_TITLE = 'Kernels </script><!-- & <b>"bold"</b> \u2028 done'
POINTS = [{"intensity": 2.0**i, "gflops": 10.0 * (i + 1)} for i in range(5)]
ROOF = [{"intensity": x, "gflops": min(100.0, 25.0 * x)} for x in (0.5, 4.0, 64.0)]
RIDGES = [{"intensity": 4.0}, {"intensity": 16.0}]


def points_spec() -> dict[str, Any]:
    chart = (
        alt.Chart(alt.Data(values=POINTS))
        .mark_point()
        .encode(
            x=alt.X("intensity:Q").scale(type="log"),
            y=alt.Y("gflops:Q").scale(type="log"),
        )
        .properties(title=TRICKY_TITLE, width=240, height=160)
    )
    return chart.to_dict()


def roofline_spec() -> dict[str, Any]:
    roof = (
        alt.Chart(alt.Data(values=ROOF))
        .mark_line()
        .encode(x=alt.X("intensity:Q").scale(type="log"), y="gflops:Q")
    )
    ridges = alt.Chart(alt.Data(values=RIDGES)).mark_rule().encode(x="intensity:Q")
    return alt.layer(roof, ridges).properties(title="Roofline", width=240, height=160).to_dict()


@dataclass(frozen=True)
class ChartAssets:
    root: Path  # folder holding assets/javascripts/...
    cache_dir: Path
    scripts: list[str]


@pytest.fixture(scope="session")
def chart_assets(tmp_path_factory: pytest.TempPathFactory) -> ChartAssets:
    cache_dir = tmp_path_factory.mktemp("bundle-cache")
    root = tmp_path_factory.mktemp("chart-assets")
    scripts = assets.write_vega_bundle(root, cache_dir=cache_dir)
    assets.write_iframe_worker(root)
    return ChartAssets(root=root, cache_dir=cache_dir, scripts=scripts)


def write_page(folder: Path, chart_assets: ChartAssets, body: str) -> Path:
    """index.html in ``folder`` that loads the chart scripts, with ``body`` in it."""
    for rel in chart_assets.scripts:
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((chart_assets.root / rel).read_bytes())
    tags = "\n".join(f'<script src="{rel}"></script>' for rel in chart_assets.scripts)
    page = folder / "index.html"
    page.write_text(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<link rel="icon" href="data:,"><title>roofgen smoke</title></head>\n'
        f"<body>\n<h1>Charts</h1>\n{body}\n{tags}\n</body></html>\n",
        encoding="utf-8",
    )
    return page


@pytest.fixture(scope="session")
def smoke_site(chart_assets: ChartAssets, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("smoke-site")
    (folder / "points.svg").write_text(vl_convert.vegalite_to_svg(points_spec()), encoding="utf-8")
    body = "\n".join(
        [
            assets.chart_html_block("chart-points", points_spec(), "points.svg"),
            "<p>between the charts</p>",
            assets.chart_html_block("chart-roofline", roofline_spec(), None),
        ]
    )
    write_page(folder, chart_assets, body)
    return folder


# --------------------------------------------------------------------------- no browser


def test_chart_html_block_is_inert_and_round_trips() -> None:
    spec = points_spec()
    block = assets.chart_html_block("chart-points", spec, "img/a b&c.svg")
    match = re.search(
        r'<template class="roofgen-chart-spec" id="chart-points"[^>]*>(.*?)</template>', block
    )
    assert match, block
    payload = match.group(1)
    for raw in ("<", ">", "&", "\u2028"):
        assert raw not in payload
    assert json.loads(payload) == spec
    assert '<div class="roofgen-chart" data-spec-id="chart-points"></div>' in block
    assert 'src="img/a b&amp;c.svg"' in block
    assert f'alt="{html.escape(TRICKY_TITLE, quote=True)}"' in block
    assert "\n\n" not in block and block.startswith("<div") and block.endswith("</div>\n")
    assert "<noscript>" not in assets.chart_html_block("chart-points", spec, None)


@pytest.mark.parametrize("bad", ["", "1chart", 'a"b', "a b", "a<b", "ch\u00e4rt"])
def test_chart_html_block_rejects_bad_ids(bad: str) -> None:
    with pytest.raises(ValueError):
        assets.chart_html_block(bad, {"mark": "point"}, None)


def test_chart_html_block_rejects_nan() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        assets.chart_html_block("c", {"data": {"values": [{"x": float("nan")}]}}, None)


def test_bundled_vega_lite_matches_altair() -> None:
    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    assert assets.vega_lite_version() == major_minor
    assert assets.vega_versions()["vega-lite-schema"] == alt.SCHEMA_VERSION


def test_vega_bundle_is_cached_per_version(
    chart_assets: ChartAssets, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cached = list(chart_assets.cache_dir.iterdir())
    assert len(cached) == 1
    name = cached[0].name
    assert assets.vega_versions()["vl-convert"] in name
    assert f"-vl{assets.vega_lite_version()}-" in name

    def no_bundling(*args: object, **kwargs: object) -> str:
        raise AssertionError("bundle rebuilt despite a cache hit")

    monkeypatch.setattr(vl_convert, "javascript_bundle", no_bundling)
    text = assets.vega_bundle_js(chart_assets.cache_dir)
    assert text == (chart_assets.root / assets.VEGA_BUNDLE_PATH).read_text(encoding="utf-8")
    assert text.startswith("/*") and "window.vegaEmbed" in text
    # the Vega-Lite library inside is the release line Altair writes specs for
    vl_major_minor = re.escape(assets.vega_lite_version())
    assert re.search(rf'"{vl_major_minor}\.\d+"', text), "Vega-Lite version not found in bundle"
    assert f'"{vl_convert.get_vega_version()}"' in text
    # classic script: no module syntax at the top level of the wrapper
    assert not re.search(r"^\s*(import|export)\s", text, re.MULTILINE)
    with pytest.raises(AssertionError, match="rebuilt"):
        assets.vega_bundle_js(tmp_path / "empty-cache")


# --------------------------------------------------------------------------- browser


def assert_smoke_charts(watched: WatchedPage) -> None:
    page = watched.page
    wait_for_charts(watched)

    points = page.locator('div.roofgen-chart[data-spec-id="chart-points"]')
    roof = page.locator('div.roofgen-chart[data-spec-id="chart-roofline"]')
    for chart in (points, roof):
        assert chart.get_attribute("data-roofgen-chart") == "ready"
        assert chart.locator("svg.marks").count() == 1
        actions = chart.locator(".vega-actions a").all_text_contents()
        assert actions == ["Save as SVG", "Save as PNG"], actions

    assert points.locator("g.mark-symbol.role-mark path").count() == len(POINTS)
    assert points.locator("g.role-title-text text").text_content() == TRICKY_TITLE
    assert roof.locator("g.mark-line.role-mark path").count() == 1
    assert roof.locator("g.mark-rule.role-mark line").count() == len(RIDGES)
    assert roof.locator("g.role-title-text text").text_content() == "Roofline"

    # the bundle's own top-level names stay inside its wrapper function
    leaked = page.evaluate(
        "() => ['__default', 'mod12', 'vegaLiteVersion'].filter(n => n in window)"
    )
    assert leaked == []
    watched.assert_clean()
    assert watched.console_warnings == []


@pytest.mark.browser
def test_charts_render_over_http(
    watched_page: WatchedPage, serve_dir: Any, smoke_site: Path
) -> None:
    base = serve_dir(smoke_site)
    watched_page.page.goto(base + "index.html")
    assert_smoke_charts(watched_page)


@pytest.mark.browser
def test_charts_render_from_file_url(watched_page: WatchedPage, smoke_site: Path) -> None:
    watched_page.page.goto((smoke_site / "index.html").as_uri())
    assert_smoke_charts(watched_page)


@pytest.mark.browser
def test_noscript_fallback_shows_static_svg(
    chromium_browser: Any, serve_dir: Any, smoke_site: Path
) -> None:
    context = chromium_browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(serve_dir(smoke_site) + "index.html")
        image = page.locator("#chart-points-block noscript img, #chart-points-block img").first
        image.wait_for(state="visible", timeout=10_000)
        page.wait_for_function(
            "() => [...document.images].some(i => i.complete && i.naturalWidth > 0)",
            timeout=10_000,
        )
        assert page.locator("svg.marks").count() == 0
    finally:
        context.close()


@pytest.mark.browser
def test_chart_errors_are_reported(
    watched_page: WatchedPage, tmp_path: Path, chart_assets: ChartAssets
) -> None:
    body = '<div class="roofgen-chart" data-spec-id="chart-missing"></div>'
    page = write_page(tmp_path, chart_assets, body)
    watched_page.page.goto(page.as_uri())
    with pytest.raises(AssertionError, match="chart-missing"):
        wait_for_charts(watched_page, timeout_ms=10_000)
    assert any("chart-missing" in text for text in watched_page.console_errors)
    assert watched_page.page.get_attribute("div.roofgen-chart", "role") == "alert"


@pytest.mark.browser
def test_page_without_charts_is_ready(
    watched_page: WatchedPage, tmp_path: Path, chart_assets: ChartAssets
) -> None:
    page = write_page(tmp_path, chart_assets, "<p>no charts here</p>")
    watched_page.page.goto(page.as_uri())
    wait_for_charts(watched_page, timeout_ms=10_000)
    watched_page.assert_clean()


# --------------------------------------------------------------------------- material


def build_material_site(folder: Path, site_url: str) -> Path:
    """Two-page Material site with charts, offline search and instant navigation."""
    docs = folder / "docs"
    docs.mkdir()
    scripts = assets.write_vega_bundle(docs, cache_dir=folder / "cache")
    polyfill = assets.write_iframe_worker(docs)
    (docs / "index.md").write_text(
        "# Home\n\nRooflines for a few kernels.\n\n"
        + assets.chart_html_block("chart-points", points_spec(), None)
        + "\n[Second page](second.md)\n",
        encoding="utf-8",
    )
    (docs / "second.md").write_text(
        "# Second\n\nThe zanzibarian kernel is memory bound.\n\n"
        + assets.chart_html_block("chart-roofline", roofline_spec(), None)
        + "\n",
        encoding="utf-8",
    )
    config = {
        "site_name": "smoke",
        "site_url": site_url,
        "theme": {"name": "material", "font": False, "features": ["navigation.instant"]},
        "plugins": ["search", "offline"],
        "extra": {"polyfills": [polyfill]},
        "extra_javascript": scripts,
    }
    (folder / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--quiet", "--strict"],
        cwd=folder,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    site = folder / "site"
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert "continuousWidth" not in json.dumps(index), "chart JSON leaked into the search index"
    return site


@pytest.mark.browser
@pytest.mark.slow
def test_material_site_offline_search_and_instant_navigation(
    chromium_browser: Any, serve_dir: Any, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    base = serve_dir(site)  # served before the build so site_url can name the port
    site = build_material_site(tmp_path, base)

    # file://: charts draw, and search runs in the iframe worker without network
    watched = open_watched_page(chromium_browser)
    try:
        page = watched.page
        page.goto((site / "index.html").as_uri())
        wait_for_charts(watched)
        assert page.evaluate("() => window.Worker === window.IFrameWorker")
        query = page.locator("input.md-search__input")
        query.click()
        query.press_sequentially("zanzibarian")
        hit = page.locator(".md-search-result__item a").first
        hit.wait_for(timeout=10_000)
        assert (hit.get_attribute("href") or "").endswith("second.html")
        watched.assert_clean()
    finally:
        watched.close()

    # http: instant navigation swaps the page; the boot script draws the new charts
    watched = open_watched_page(chromium_browser)
    try:
        page = watched.page
        page.goto(base + "index.html")
        wait_for_charts(watched)
        assert page.locator("g.mark-symbol.role-mark path").count() == len(POINTS)
        # Material intercepts link clicks only once it has loaded sitemap.xml
        page.wait_for_load_state("networkidle")
        page.evaluate(
            "() => { window.roofgenSamePage = true;"
            " delete document.documentElement.dataset.roofgenCharts; }"
        )
        page.click("text=Second page")
        page.wait_for_url("**/second.html")
        wait_for_charts(watched)
        assert page.evaluate("() => window.roofgenSamePage") is True, "not an instant navigation"
        assert page.locator("g.mark-rule.role-mark line").count() == len(RIDGES)
        assert page.locator("g.mark-symbol.role-mark path").count() == 0
        watched.assert_clean()
    finally:
        watched.close()
