"""The built example site in headless Chromium: charts draw every roof and point,
nothing is fetched from another host, no console errors; over http and from file://.
A default site exports charts from vega-embed's menu and has no static SVGs; one built
with static charts shows them without JavaScript.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from browser import WatchedPage, open_watched_page, wait_for_charts

from roofgen.api import build_site, check
from roofgen.charts import RooflineInput, roof_text
from roofgen.charts.kinds import CHART_KINDS, chart_kind
from roofgen.site.context import SiteContext, build_context

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "specs"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def example(
    tmp_path_factory: pytest.TempPathFactory, make_settings: Any
) -> tuple[Path, SiteContext]:
    """The example site, built, and the contexts its pages came from."""
    root = tmp_path_factory.mktemp("browser-site")
    shutil.copytree(EXAMPLES, root / "specs")
    settings = make_settings(root, name="Example cases")
    result = build_site([root / "specs"], settings, root / "site", strict=True)
    assert result.ok, [p.format() for p in result.problems]
    checked = check([root / "specs"], thresholds=settings.thresholds)
    assert checked.analysis is not None and checked.specs is not None
    ctx = build_context(checked.analysis, checked.specs.machines, name="Example cases")
    return root / "site", ctx


@pytest.fixture(scope="module")
def static_example(tmp_path_factory: pytest.TempPathFactory, make_settings: Any) -> Path:
    """The example site built with static SVG charts."""
    root = tmp_path_factory.mktemp("browser-static-site")
    shutil.copytree(EXAMPLES, root / "specs")
    settings = make_settings(root, name="Example cases", static_charts=True)
    result = build_site([root / "specs"], settings, root / "site", strict=True)
    assert result.ok, [p.format() for p in result.problems]
    assert result.chart_stats.svgs_rendered + result.chart_stats.svgs_cached > 0
    return root / "site"


def _busiest_case(ctx: SiteContext) -> Any:
    """The case page with the most roofs and points (the strongest check)."""
    return max(
        ctx.cases,
        key=lambda c: (sum(len(s.input.roofs) + len(s.input.points) for s in c.charts), c.id),
    )


def _assert_chart(watched: WatchedPage, spec_id: str, inp: RooflineInput) -> None:
    page = watched.page
    chart = page.locator(f'div.roofgen-chart[data-spec-id="{spec_id}"]')
    assert chart.get_attribute("data-roofgen-chart") == "ready"
    assert chart.locator("svg.marks").count() == 1
    labels = chart.evaluate(
        "el => [...el.querySelectorAll('svg [aria-label]')].map(e => e.getAttribute('aria-label'))"
    )
    texts = chart.evaluate(
        "el => [...el.querySelectorAll('svg g.mark-text text')].map(e => e.textContent)"
    )
    for roof in inp.roofs:
        text = roof_text(roof)
        assert labels.count(text) == 1, f"roof line {text!r}"
        assert texts.count(text) >= 1, f"roof label {text!r}"
    roof_lines = [label for label in labels if label in {roof_text(r) for r in inp.roofs}]
    assert len(roof_lines) == len(inp.roofs)
    points = chart.locator("g.mark-symbol.role-mark.launches_marks path")
    assert points.count() == len(inp.points)


def test_case_page_over_http(
    watched_page: WatchedPage, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    case = _busiest_case(ctx)
    assert case.charts and any(s.input.points for s in case.charts)
    base = serve_dir(site)
    watched_page.page.goto(f"{base}cases/{case.id}/")
    wait_for_charts(watched_page)
    for slot in case.charts:
        _assert_chart(watched_page, slot.spec_id, slot.input)
    watched_page.assert_clean()


def test_charts_export_from_the_embed_menu_and_the_site_has_no_svgs(
    watched_page: WatchedPage, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    assert not (site / "assets" / "charts").exists()
    case = _busiest_case(ctx)
    page = watched_page.page
    page.goto(f"{serve_dir(site)}cases/{case.id}/")
    wait_for_charts(watched_page)
    slots = [*case.charts, *case.section_charts]
    for slot in slots:
        chart = page.locator(f'div.roofgen-chart[data-spec-id="{slot.spec_id}"]')
        # SVG and PNG from the browser; no source views, no editor (it loads from the web)
        actions = chart.locator(".vega-actions a").all_text_contents()
        assert actions == ["Save as SVG", "Save as PNG"], actions
    assert page.locator(".roofgen-noscript:visible").count() == 0
    assert page.get_by_text("Static SVG").count() == 0
    watched_page.assert_clean()


def test_without_javascript_a_page_says_why_there_is_no_chart(
    chromium_browser: Any, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    case = _busiest_case(ctx)
    context = chromium_browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{serve_dir(site)}cases/{case.id}/")
        notes = page.locator("p.roofgen-noscript")
        assert notes.count() == len(case.charts) + len(case.section_charts)
        notes.first.wait_for(state="visible", timeout=10_000)
        assert "--static-charts" in notes.first.text_content()
        assert page.locator("img").count() == page.locator("header img, footer img").count()
    finally:
        context.close()


def test_static_charts_show_without_javascript(
    chromium_browser: Any, serve_dir: Any, static_example: Path
) -> None:
    context = chromium_browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        base = serve_dir(static_example)
        case = sorted(p.parent.name for p in static_example.glob("cases/*/index.html"))[0]
        page.goto(f"{base}cases/{case}/")
        images = page.locator("noscript img, .roofgen-chart-block img")
        images.first.wait_for(state="visible", timeout=10_000)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.roofgen-chart-block img')]"
            ".every(i => i.complete && i.naturalWidth > 0)",
            timeout=10_000,
        )
        links = page.get_by_role("link", name="Static SVG")
        assert links.count() == page.locator(".roofgen-chart-block").count() > 0
        response = page.request.get(page.url + links.first.get_attribute("href"))
        assert response.ok and response.text().startswith("<svg ")
    finally:
        context.close()


def test_machine_page_over_http(
    watched_page: WatchedPage, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    machine = ctx.machines[0]
    watched_page.page.goto(f"{serve_dir(site)}machines/{machine.id}/")
    wait_for_charts(watched_page)
    _assert_chart(watched_page, machine.chart.spec_id, machine.chart.input)
    watched_page.assert_clean()


def test_home_table_sorts(
    watched_page: WatchedPage, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    page = watched_page.page
    page.goto(serve_dir(site))
    wait_for_charts(watched_page)  # a page without charts reports ready at once
    table = page.locator(".roofgen-sortable table")
    header = table.locator("thead th", has_text="Best speedup")
    header.click()
    values = table.locator("tbody tr td:nth-child(4)").all_text_contents()
    numbers = [float(v.rstrip("x")) for v in values]
    assert numbers == sorted(numbers)
    header.click()
    values = table.locator("tbody tr td:nth-child(4)").all_text_contents()
    assert [float(v.rstrip("x")) for v in values] == sorted(numbers, reverse=True)
    assert len(values) == len(ctx.cases)
    watched_page.assert_clean()


def test_pages_draw_from_file_urls(
    watched_page: WatchedPage, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    page = watched_page.page
    page.goto((site / "index.html").as_uri())
    wait_for_charts(watched_page)
    case = _busiest_case(ctx)
    # Follow the home table's link, as a reader would: from disk a link must name a
    # file (index.html), not a folder, or the browser shows a folder listing.
    page.locator(f'.roofgen-sortable a[href="cases/{case.id}/index.html"]').first.click()
    page.wait_for_url((site / "cases" / case.id / "index.html").as_uri())
    wait_for_charts(watched_page)
    for slot in case.charts:
        _assert_chart(watched_page, slot.spec_id, slot.input)
    watched_page.assert_clean()


def _pages_with_every_kind(ctx: SiteContext) -> list[Any]:
    """Few case pages that between them hold every chart kind of the sections."""
    wanted = {chart_kind(s.input) for page in ctx.cases for s in page.section_charts}
    pages = []
    for page in sorted(ctx.cases, key=lambda p: (-len(p.section_charts), p.id)):
        kinds = {chart_kind(s.input) for s in page.section_charts}
        if kinds - {chart_kind(s.input) for p in pages for s in p.section_charts}:
            pages.append(page)
        if {chart_kind(s.input) for p in pages for s in p.section_charts} == wanted:
            break
    return pages


def test_every_chart_kind_draws(
    watched_page: WatchedPage, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    base = serve_dir(site)
    drawn = set()
    for case in _pages_with_every_kind(ctx):
        watched_page.page.goto(f"{base}cases/{case.id}/")
        wait_for_charts(watched_page)
        for slot in case.section_charts:
            chart = watched_page.page.locator(f'div.roofgen-chart[data-spec-id="{slot.spec_id}"]')
            assert chart.get_attribute("data-roofgen-chart") == "ready", slot.spec_id
            assert chart.locator("svg.marks").count() == 1
            drawn.add(chart_kind(slot.input))
    # the hierarchical roofline is tested above, the speedups on the home page below, the
    # history (drawn only in a site built inside git) in tests/test_history.py
    skipped = {"roofgen.hierarchical-roofline", "roofgen.speedups", "roofgen.history"}
    assert drawn == set(CHART_KINDS) - skipped
    watched_page.assert_clean()


def test_home_chart_has_a_mark_per_case_that_opens_its_page(
    watched_page: WatchedPage, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    assert ctx.home.chart is not None
    rows = ctx.home.chart.input.rows
    kernel = [r for r in rows if r.measure == "kernel"]
    assert len(kernel) == sum(len(c.variants) > 1 for c in ctx.cases)
    page = watched_page.page
    page.goto(serve_dir(site))
    wait_for_charts(watched_page)
    chart = page.locator('div.roofgen-chart[data-spec-id="speedups-1"]')
    assert chart.get_attribute("data-roofgen-chart") == "ready"
    marks = chart.locator("g.mark-symbol.role-mark.speedups_marks path")
    assert marks.count() == len(rows)
    labels = marks.evaluate_all("ps => ps.map(p => p.getAttribute('aria-label') || '')")
    for row in kernel:  # one mark per case and measure, described by the case's title
        assert sum(row.title in label for label in labels) >= 1, row.title
    # the chart comes before the table of every case, right under the summary
    top = page.locator("h1").bounding_box()
    chart_box = chart.bounding_box()
    table_box = page.locator(".roofgen-cases table").bounding_box()
    assert top and chart_box and table_box
    assert top["y"] < chart_box["y"] < table_box["y"]
    # a mark is a link to its case's page
    first = kernel[0]
    index = next(i for i, r in enumerate(rows) if r is first)
    marks.nth(index).click()
    page.wait_for_url(f"**/cases/{first.case}/index.html")
    watched_page.assert_clean()


def test_home_key_columns_are_in_view_at_1280_px(
    chromium_browser: Any, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, _ = example
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(serve_dir(site))
        table = page.locator(".roofgen-cases table")
        table.wait_for()
        wrap = table.evaluate(
            "t => { let e = t.parentElement; while (e && getComputedStyle(e).overflowX"
            " === 'visible') e = e.parentElement; const r = (e || document.body)"
            ".getBoundingClientRect(); return {left: r.left, right: r.right}; }"
        )
        for name in ("Case", "Binding resource", "Efficiency", "Best speedup"):
            box = table.locator("thead th", has_text=name).first.bounding_box()
            assert box, name
            assert box["x"] >= 0 and box["x"] + box["width"] <= 1280, name
            assert box["x"] + box["width"] <= wrap["right"] + 1, f"{name} scrolled out of view"
    finally:
        context.close()


def test_case_page_opens_with_its_verdict(
    watched_page: WatchedPage, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    case = _busiest_case(ctx)
    page = watched_page.page
    page.goto(f"{serve_dir(site)}cases/{case.id}/index.html")
    wait_for_charts(watched_page)
    verdict = page.locator(".roofgen-verdict").bounding_box()
    chart = page.locator(".roofgen-chart-block").first.bounding_box()
    assert verdict and chart and verdict["y"] < chart["y"]
    terms = page.locator(".roofgen-verdict dt").all_text_contents()
    assert terms == [
        "What binds", "How far from the roof", "Biggest measured win", "Top recommendation",
    ]  # fmt: skip
    # Measurement quality is a real numbered list, not "1." inside bullets
    items = page.locator("ol.roofgen-quality > li")
    for i in range(items.count()):
        assert not (items.nth(i).text_content() or "").startswith(f"{i + 1}.")
    watched_page.assert_clean()


def _search(page: Any, query: str) -> str:
    box = page.locator("input.md-search__input")
    box.click()
    box.press_sequentially(query)
    hit = page.locator(".md-search-result__item a").first
    hit.wait_for(timeout=15_000)
    return hit.get_attribute("href") or ""


def test_search_finds_a_case_over_http_and_from_disk(
    chromium_browser: Any, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, ctx = example
    case = next(c for c in ctx.cases if c.id == "vector-add")
    base = serve_dir(site)
    for start in (base + "index.html", (site / "index.html").as_uri()):
        watched = open_watched_page(chromium_browser)
        try:
            watched.page.goto(start)
            href = _search(watched.page, case.title)
            assert f"cases/{case.id}/index.html" in href, (start, href)
            watched.assert_clean()
        finally:
            watched.close()


def test_guide_code_keeps_whole_words_and_stays_in_its_box(
    watched_page: WatchedPage, serve_dir: Any, example: tuple[Path, SiteContext]
) -> None:
    site, _ = example
    page = watched_page.page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{serve_dir(site)}guide/measure/index.html")
    cells = page.locator("td code")
    assert cells.count() > 0
    lines = cells.evaluate_all("cs => cs.map(c => c.getClientRects().length)")
    assert set(lines) == {1}, "inline code broken across lines in a table"
    # code blocks wrap their long lines inside their box
    blocks = page.locator("pre > code").evaluate_all(
        "cs => cs.map(c => c.scrollWidth <= c.parentElement.clientWidth + 1)"
    )
    assert blocks and all(blocks)
    watched_page.assert_clean()
