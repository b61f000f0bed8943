"""The built site at MkDocs' floor and read at a glance: every link roofgen writes
resolves, the navigation does not grow with the cases, search indexes titles, verdicts
and narratives but not the tables, no table has an empty header row, the case page
opens with its verdict and the home page with every case's speedups."""

from __future__ import annotations

import html.parser
import json
import posixpath
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from test_site import ALPHA, BETA, EXAMPLES, TINY, build, write_specs

from roofgen.api import check
from roofgen.site.indexes import speedups_input
from roofgen.site.links import html_link
from roofgen.site.listing import listing

pytestmark = pytest.mark.slow

_NAV = re.compile(
    r'<nav class="md-nav md-nav--primary".*?<div class="md-sidebar md-sidebar--secondary"', re.S
)


class _Parsed(html.parser.HTMLParser):
    """Links, ids and table header rows of one page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.head_rows: list[list[str]] = []
        self._th: list[str] | None = None
        self._in_thead = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))
        if tag == "thead":
            self._in_thead = True
        if tag == "tr" and self._in_thead:
            self.head_rows.append([])
        if tag == "th" and self.head_rows and self._in_thead:
            self._th = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._in_thead = False
        if tag == "th" and self._th is not None:
            self.head_rows[-1].append("".join(self._th).strip())
            self._th = None

    def handle_data(self, data: str) -> None:
        if self._th is not None:
            self._th.append(data)


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pages-examples")
    shutil.copytree(EXAMPLES, root / "specs")
    build(root / "specs", root / "site")  # strict: a broken Markdown link fails it
    return root / "site"


def _cases(n: int) -> dict[str, str]:
    files = {"machines/tiny.yaml": TINY, "cases/beta.yaml": BETA}
    for i in range(n):
        text = ALPHA.replace("id: alpha", f"id: alpha-{i}").replace("Alpha fusion", f"Alpha {i}")
        files[f"cases/alpha-{i}.yaml"] = text
    return files


def _site(root: Path, n: int) -> Path:
    specs = write_specs(root / "specs", _cases(n))
    build(specs, root / "site")
    return root / "site"


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_link_in_every_page_resolves(example_site: Path) -> None:
    """Links in the HTML roofgen writes are not rewritten by MkDocs: each must name a
    file of the site (and an id of that page when it has an anchor)."""
    ids = {p: _Parsed(p.read_text(encoding="utf-8")).ids for p in _pages(example_site)}
    broken = []
    checked = 0
    for page in _pages(example_site):
        if page.name == "404.html":  # MkDocs links it from the root: served at any depth
            continue
        for href in _Parsed(page.read_text(encoding="utf-8")).links:
            url = urlsplit(href)
            if url.scheme or url.netloc or href.startswith("mailto:"):
                continue
            target = page if not url.path else page.parent / unquote(url.path)
            if url.path.endswith("/"):
                target = target / "index.html"
            target = Path(posixpath.normpath(target.as_posix()))
            checked += 1
            if not target.is_file():
                broken.append(f"{page.relative_to(example_site)}: {href}")
            elif (
                url.fragment
                and target.suffix == ".html"
                and unquote(url.fragment) not in ids.get(target, set())
            ):
                broken.append(f"{page.relative_to(example_site)}: {href} (no such id)")
    assert checked > 1000
    assert not broken, broken[:20]


def test_no_table_has_an_empty_header_row(example_site: Path) -> None:
    empty = []
    for page in _pages(example_site):
        for row in _Parsed(page.read_text(encoding="utf-8")).head_rows:
            if not any(row):
                empty.append(page.relative_to(example_site).as_posix())
    assert not empty


def test_the_navigation_of_a_case_page_does_not_grow_with_the_cases(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    small = _site(tmp_path_factory.mktemp("nav-small"), 2)
    large = _site(tmp_path_factory.mktemp("nav-large"), 12)
    sizes = []
    for site in (small, large):
        text = (site / "cases" / "alpha-0" / "index.html").read_text(encoding="utf-8")
        nav = _NAV.search(text)
        assert nav, "the primary navigation"
        assert "alpha-1/index.html" not in nav.group(0)  # no case is listed in it
        sizes.append(len(nav.group(0).encode()))
    assert sizes[0] == sizes[1]
    # the cases are reached through the list of all cases instead
    listing = (large / "all-cases" / "index.html").read_text(encoding="utf-8")
    for i in range(12):
        assert f'href="../cases/alpha-{i}/index.html"' in listing


def test_search_indexes_titles_verdicts_and_narratives_not_tables(example_site: Path) -> None:
    index = json.loads((example_site / "search" / "search_index.json").read_text("utf-8"))
    script = (example_site / "search" / "search_index.js").read_text("utf-8")
    assert json.loads(script.removeprefix("var __index = ")) == index  # file:// reads this
    checked = check([EXAMPLES])
    assert checked.analysis is not None
    docs = index["docs"]
    for c in checked.analysis.cases:
        mine = [d for d in docs if d["location"].startswith(f"cases/{c.case.id}/index.html")]
        assert any(d["title"] == c.case.title for d in mine), c.case.id
        text = " ".join(d["text"] for d in mine)
        assert "What binds" in text and "Biggest measured win" in text
        titles = {d["title"] for d in mine}
        assert "Launches" in titles  # the headings of the details stay searchable
        launches = next(d for d in mine if d["title"] == "Launches")
        assert launches["text"] == ""  # ... their tables do not
        assert "continuousWidth" not in text  # nor the charts


def test_the_verdict_card_opens_the_case_page(tmp_path: Path) -> None:
    site = _site(tmp_path, 1)
    text = (site / "cases" / "alpha-0" / "index.html").read_text(encoding="utf-8")
    h1, verdict = text.index("<h1"), text.index('class="roofgen-verdict"')
    chart, narrative = text.index('class="roofgen-chart-block"'), text.index('id="context"')
    assert h1 < verdict < chart < narrative
    card = re.search(r'<div class="roofgen-verdict".*?</div>', text, re.S)
    assert card
    words = re.sub(r"<[^>]+>", " ", card.group(0))
    # the fused variant takes 1.4 ms against 1.2 + 1.3 = 2.5 ms: 2.5 / 1.4 = 1.79x; the
    # intervals (IQR) 2.48..2.52 ms and 1.39..1.41 ms give 2.48 / 1.41 = 1.76x to
    # 2.52 / 1.39 = 1.81x, apart: significant. End to end 10 ms / 9 ms = 1.11x.
    assert "1.79x (1.76x to 1.81x) for after against before, significant" in words
    assert "1.11x end to end" in words
    # fused: 1.1 GB of HBM at 0.9 TB/s = 1.222 ms against 1.4 ms measured: 87%
    assert "HBM" in words and "87% of the roof" in words


def test_the_home_chart_reads_each_case_comparison() -> None:
    checked = check([EXAMPLES])
    assert checked.analysis is not None
    machines = checked.specs.machines
    inp, significant = speedups_input([listing(c, machines) for c in checked.analysis.cases])
    compared = [c for c in checked.analysis.cases if len(c.variants) > 1]
    kernel = [r for r in inp.rows if r.measure == "kernel"]
    assert sorted(r.case for r in kernel) == sorted(c.case.id for c in compared)
    for row in kernel:
        case = next(c for c in compared if c.case.id == row.case)
        best = max(case.comparison.variants, key=lambda v: v.speedup.value)
        assert (row.value, row.low, row.high) == (
            best.speedup.value, best.speedup.low, best.speedup.high,
        )  # fmt: skip
        assert row.href == f"cases/{row.case}/index.html"
    values = [r.value for r in kernel]
    assert values == sorted(values, reverse=True)
    assert significant == sum(r.noise == "significant" for r in kernel)


@pytest.mark.parametrize(
    ("page", "target", "directory_urls", "expected"),
    [
        ("cases/a/index.md", "machines/m/index.md", False, "../../machines/m/index.html"),
        ("cases/a/index.md", "tags/index.md#tag-x", False, "../../tags/index.html#tag-x"),
        ("index.md", "cases/a/index.md", False, "cases/a/index.html"),
        ("cases/a/index.md", "machines/m/index.md", True, "../../machines/m/"),
        ("guide/ci.md", "index.md", True, "../../"),
        ("guide/ci.md", "index.md", False, "../index.html"),
        ("guide/ci.md", "guide/measure.md", True, "../measure/"),
        ("index.md", "index.md", True, "./"),
        ("cases/a/index.md", "assets/x.svg", True, "../../assets/x.svg"),
    ],
)
def test_html_links_follow_mkdocs_urls(
    page: str, target: str, directory_urls: bool, expected: Any
) -> None:
    assert html_link(page, target, directory_urls) == expected
