"""The Content-Security-Policy of the built site, in headless Chromium, over http and
from file://: an inline script written into a built page is blocked and reported, while
the charts draw (Vega's interpreter, no eval), search answers (the file:// iframe worker
too), the theme's palette script runs, navigation works, and no script of roofgen's or
the theme's is refused."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from browser import WatchedPage, open_watched_page, wait_for_charts

from roofgen.api import build_site
from roofgen.site import csp

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
INJECTED = "<script>window.pwned=1</script>"
_POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Recorded before any script of the page runs (Playwright injects it, the policy does
# not apply to it): every violation the page reports.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push([e.effectiveDirective, e.blockedURI, e.sample || ""]);
});
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, make_settings: Any) -> Path:
    """A small site; its case page gets an inline script written in after the build."""
    root = tmp_path_factory.mktemp("csp-site")
    shutil.copytree(MINIMAL, root / "specs")
    settings = make_settings(root, name="CSP test")
    result = build_site([root / "specs"], settings, root / "site", strict=True)
    assert result.ok, [p.format() for p in result.problems]
    page = root / "site" / "cases" / "pts" / "index.html"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("</article>", INJECTED + "</article>", 1), encoding="utf-8")
    return root / "site"


def _policy(page: Path) -> str:
    match = _POLICY.search(page.read_text(encoding="utf-8"))
    assert match, page
    return html.unescape(match.group(1))


def _open(browser: Any) -> WatchedPage:
    watched = open_watched_page(browser)
    watched.page.add_init_script(RECORD_VIOLATIONS)
    return watched


def _starts(site: Path, base: str) -> dict[str, str]:
    return {"http": base, "file": site.as_uri() + "/"}


def test_every_page_has_one_policy_before_any_script(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 5
    policies = {_policy(p) for p in pages}
    assert len(policies) == 1, "one site-wide policy"
    (policy,) = policies
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'none'"
    assert directives["form-action"] == "'self'"
    sources = directives["script-src"].split()
    assert sources[0] == "'self'"
    assert all(re.fullmatch(r"'sha256-[A-Za-z0-9+/]{43}='", s) for s in sources[1:])
    assert "unsafe" not in policy and "style-src" not in policy
    for page in pages:
        text = page.read_text(encoding="utf-8")
        head = text[: text.index("</head>")]
        assert head.index("Content-Security-Policy") < head.index("<script"), page


def test_the_policy_allows_the_theme_scripts_and_not_the_injected_one(site: Path) -> None:
    """Hashes computed by hand from the pages' scripts: every theme script is allowed; the
    written-in one is not (it was never hashed, though it sits in a built page)."""
    import base64
    import hashlib

    def digest(script: str) -> str:
        raw = hashlib.sha256(script.encode("utf-8")).digest()
        return f"'sha256-{base64.b64encode(raw).decode()}'"

    allowed = set(_policy(site / "index.html").split(";")[0].split()[1:])
    case = (site / "cases" / "pts" / "index.html").read_text(encoding="utf-8")
    scripts = csp.inline_scripts(case)
    assert "window.pwned=1" in scripts
    for script in scripts:
        assert (digest(script) in allowed) == (script != "window.pwned=1"), script[:60]


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_injected_script_is_blocked_and_charts_still_draw(
    chromium_browser: Any, serve_dir: Any, site: Path, scheme: str
) -> None:
    start = _starts(site, serve_dir(site))[scheme]
    watched = _open(chromium_browser)
    try:
        page = watched.page
        page.goto(start + "cases/pts/index.html")
        wait_for_charts(watched)
        assert page.locator("div.roofgen-chart[data-roofgen-chart=ready]").count() >= 1
        assert page.evaluate("() => window.pwned") is None
        violations = page.evaluate("() => window.__violations")
        assert violations == [["script-src-elem", "inline", ""]], violations
        # the one console error is the browser's report of that script; nothing else
        assert len(watched.console_errors) == 1, watched.console_errors
        assert "Content Security Policy" in watched.console_errors[0]
        assert not watched.page_errors and not watched.blocked_requests
    finally:
        watched.close()


def _search(page: Any, query: str) -> str:
    box = page.locator("input.md-search__input")
    box.click()
    box.press_sequentially(query)
    hit = page.locator(".md-search-result__item a").first
    hit.wait_for(timeout=15_000)
    return hit.get_attribute("href") or ""


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_search_palette_and_navigation_work_under_the_policy(
    chromium_browser: Any, serve_dir: Any, site: Path, scheme: str
) -> None:
    start = _starts(site, serve_dir(site))[scheme]
    watched = _open(chromium_browser)
    try:
        page = watched.page
        page.goto(start + "index.html")
        wait_for_charts(watched)
        # search: Material's worker (over file://, roofgen's iframe worker)
        assert "cases/pts/index.html" in _search(page, "Points")
        # palette: the theme's inline palette script applies a stored choice on load
        page.evaluate('() => __md_set("__palette", {color: {scheme: "slate"}})')
        page.reload()
        page.wait_for_function("() => document.body.dataset.mdColorScheme === 'slate'")
        # navigation: a link of the navigation opens its page, whose charts draw
        page.locator('a.md-nav__link[href="method/index.html"]').first.click()
        page.wait_for_url("**/method/index.html")
        wait_for_charts(watched)
        assert page.evaluate("() => window.__violations") == []
        watched.assert_clean()
    finally:
        watched.close()
