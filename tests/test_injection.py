"""Hostile strings in every free-text field never execute and never break an output.

tests/test_site.py checks the HTML pages and the chart JSON of one hostile case;
this module adds what it leaves out: more payloads (``<svg onload>``, ``<iframe>``,
Jinja and other template syntax, Markdown that breaks tables, line and paragraph
separators), the static SVGs vl-convert writes, the search index, the JSON of
``roofgen analyze``, Vega expressions built from names, ids that look like the
site's own files, and a real browser that hovers every chart mark for tooltips.
"""

from __future__ import annotations

import html.parser
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from browser import WatchedPage, wait_for_charts

from roofgen.api import build_site
from roofgen.cli import main
from roofgen.site.build import MARKER

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"

PAYLOADS = (
    "<script>alert('script')</script>",
    "<img src=x onerror=alert('img')>",
    "<svg onload=alert('svg')>",
    "<iframe src=javascript:alert('iframe')></iframe>",
    "[link](javascript:alert('link'))",
    "{{ 7*7 }}",
    "{% raw %}x{% endraw %}",
    "{# comment #}",
    "${7*7} #{7*7}",
    "a | b",
    "`tick` ``double``",
    "</script><script>alert('end')</script>",
    "]]><!-- -->",
    "&amp; &#60;",
    "\u2028\u2029",
    "'\" \\",
)
EVIL = " ".join(PAYLOADS)
# Multi-line Markdown: a table, raw HTML blocks, a code fence, a heading.
MULTI = (
    "line one\n| a | b |\n|---|---|\n| `x` | <b>y</b> |\n\n<script>alert('multi')</script>\n\n"
    "```\n</code></pre><script>alert('fence')</script>\n```\n# heading {: onclick=alert(1)}"
)
SHOWN = "<script>alert('script')</script>"  # a payload that must appear as text
LOADED = EVIL.replace("\u2028\u2029", "\n\n")  # the loader reads U+2028/9 as line feeds


def _q(text: str) -> str:
    return json.dumps(text)


MACHINE = f"""\
roofgen: 1
kind: machine
id: evil-gpu
name: {_q("GPU " + EVIL)}
description: {_q(MULTI)}
vendor: {_q(EVIL)}
clocks: {{sm: 1000 MHz}}
compute:
  - id: vector
    name: {_q("Unit " + EVIL)}
    kind: fp32
    peaks:
      fp32: {{datasheet: 10 TFLOP/s, measured: 9 TFLOP/s, source: {_q(EVIL)},
              measured_source: {_q(EVIL)}}}
    ceilings:
      - {{id: no-fma, name: {_q("Ceiling " + EVIL)}, precision: fp32, value: 5 TFLOP/s}}
memory:
  - {{id: hbm, name: {_q("HBM " + EVIL)}, role: device, bandwidth: 1 TB/s}}
  - {{id: l2, name: {_q("L2 " + EVIL)}, role: llc, bandwidth: 4 TB/s}}
"""

CASE = f"""\
roofgen: 1
kind: case
id: evil
title: {_q("Evil " + EVIL)}
summary: {_q(EVIL)}
date: 2026-03-01
owners: [{_q(EVIL)}]
status: draft
tags: [evil]
machines: [evil-gpu]
links:
  pull_request: "javascript:alert('pr')"
  issue: "https://example.com/i?q=<script>alert('url')</script>"
narrative:
  context: {_q(MULTI)}
  hypothesis: {_q(EVIL)}
  change: {_q("<svg onload=alert('n')>" + chr(10) + "[x](javascript:alert('x'))")}
  result: {_q("{% include 'x' %} {{ config }} {{ 7*7 }}")}
  lessons: {_q("| a |" + chr(10) + "|---|" + chr(10) + "| <iframe src=x> |")}
method:
  description: {_q(MULTI)}
  gpu: {_q(EVIL)}
end_to_end:
  base: {{time: 10 ms, description: {_q(EVIL)}}}
  fused: {{time: 9 ms, description: {_q(EVIL)}}}
kernels:
  - {{id: k, name: {_q("kernel " + EVIL)}, description: {_q(MULTI)}, operator: {{kind: other}}}}
  - {{id: k2, name: {_q("</script>" + EVIL)}, operator: {{kind: other}}}}
variants:
  - id: base
    name: {_q("variant " + EVIL)}
    description: {_q(MULTI)}
    launches:
      - kernel: k
        measurement:
          time: {{median: 1 ms, q1: 0.99 ms, q3: 1.01 ms, repeats: 10, warmup: 2}}
          timing: cuda-events
          flops: {{vector: {{fp32: 1e9 FLOP}}}}
          bytes: {{hbm: 0.5 GB, l2: 0.7 GB}}
          notes: {_q(MULTI)}
  - id: fused
    name: {_q("fused " + EVIL)}
    launches:
      - kernel: k2
        measurement:
          time: {{median: 0.8 ms, q1: 0.79 ms, q3: 0.81 ms, repeats: 10, warmup: 2}}
          timing: cuda-events
          flops: {{vector: {{fp32: 1e9 FLOP}}}}
          bytes: {{hbm: 0.4 GB, l2: 0.6 GB}}
"""


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, make_settings: Any) -> Path:
    """The site built (strict) from a machine and a case with payloads everywhere."""
    root = tmp_path_factory.mktemp("hostile")
    specs = _write(root / "specs", {"machines/evil.yaml": MACHINE, "cases/evil.yaml": CASE})
    settings = make_settings(root, name="Hostile", static_charts=True)
    result = build_site([specs], settings, root / "site", cache_dir=root / "cache", strict=True)
    assert result.ok, [p.format() for p in result.problems]
    return root


class _Page(html.parser.HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self.tables: list[list[int]] = []  # cells per row, per table
        self._in: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag in ("script", "style", "title", "template"):
            self._in.append(tag)
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append(0)
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self.tables[-1][-1] += 1

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        where = self._in[-1] if self._in else ""
        (self.scripts if where == "script" else self.text).append(data)


# --------------------------------------------------------------------------- static


@pytest.mark.slow
def test_no_page_runs_or_shows_live_markup(hostile: Path) -> None:
    site = hostile / "site"
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 7
    shown = False
    for path in pages:
        raw = path.read_text(encoding="utf-8")
        page = _Page(raw)
        for tag, attrs in page.tags:
            assert not [k for k in attrs if k.startswith("on")], (path, tag, attrs)
            assert tag not in ("iframe", "object", "embed"), (path, tag)
            if tag == "svg":
                assert "onload" not in attrs, path
            for key in ("href", "src", "action", "formaction", "xlink:href"):
                value = attrs.get(key, "").strip().lower()
                assert not value.startswith(("javascript:", "vbscript:", "data:text")), (path, key)
            if tag == "img":
                assert attrs.get("src") != "x", path
        for body in page.scripts:
            assert "alert(" not in body, (path, body[:80])
        text = " ".join(page.text)
        assert "\u2028" not in raw and "\u2029" not in raw, path
        # template syntax is shown, never evaluated by Jinja or MkDocs
        assert "{% raw %}" not in raw or "{% raw %}x{% endraw %}" in text, path
        if "{{ 7*7 }}" in raw or "7*7" in text:
            assert " 49 " not in text, path
        shown = shown or SHOWN in text
        for rows in page.tables:  # '|' and newlines in cells add no cells
            assert len(set(rows[1:])) <= 1, (path, rows)
    assert shown, "the payloads should be shown as text somewhere"


@pytest.mark.slow
def test_chart_json_in_pages_is_inert_and_lossless(hostile: Path) -> None:
    raw = (hostile / "site" / "cases" / "evil" / "index.html").read_text(encoding="utf-8")
    blocks = re.findall(r'<template class="roofgen-chart-spec"[^>]*>(.*?)</template>', raw, re.S)
    assert blocks
    names: set[str] = set()
    for block in blocks:
        assert "<" not in block and ">" not in block and "&" not in block
        names |= set(_strings(json.loads(block)))
    assert any(n.startswith("Evil " + PAYLOADS[0]) for n in names)  # the title
    assert "HBM " + LOADED in names  # a memory level's name, verbatim


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.slow
def test_static_svgs_are_well_formed_and_escape_names(hostile: Path) -> None:
    svgs = sorted((hostile / "site" / "assets" / "charts").glob("*.svg"))
    assert len(svgs) >= 2
    with_payload = 0
    for svg in svgs:
        root = ET.parse(svg).getroot()  # well-formed: every '<' in a name was escaped
        for element in root.iter():
            tag = element.tag.rsplit("}", 1)[-1]
            assert tag not in ("script", "foreignObject", "iframe", "a"), (svg.name, tag)
            assert not [k for k in element.attrib if k.rsplit("}", 1)[-1].startswith("on")]
        texts = " ".join(e.text or "" for e in root.iter() if e.tag.endswith("text"))
        with_payload += "<svg onload=" in texts or "<script>" in texts
    assert with_payload, "names with '<' should appear, escaped, in some chart's text"


@pytest.mark.slow
def test_search_index_and_sitemap_parse(hostile: Path) -> None:
    site = hostile / "site"
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert index["docs"]
    script = (site / "search" / "search_index.js").read_text(encoding="utf-8")
    assert script.startswith("var __index = ")
    assert json.loads(script.removeprefix("var __index = ")) == index
    assert "\u2028" not in script and "\u2029" not in script  # not valid in older JS
    ET.parse(site / "sitemap.xml")


@pytest.mark.slow
def test_markdown_pages_keep_payloads_out_of_markup(tmp_path: Path, hostile: Path) -> None:
    status = main(["build", str(hostile / "specs"), "-q", "--markdown-only",
                   "-o", str(tmp_path / "md"), "--cache-dir", str(hostile / "cache")])  # fmt: skip
    assert status == 0
    text = (tmp_path / "md" / "cases" / "evil" / "index.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("|") and "alert(" in line:  # a row holding a payload
            assert "a | b" not in line and "<script" not in line, line
    assert "<script>alert" not in text and "<img src=x" not in text


def test_analyze_json_carries_names_as_data(tmp_path: Path, monkeypatch, capsys) -> None:
    specs = _write(tmp_path / "specs", {"machine.yaml": MACHINE, "case.yaml": CASE})
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["analyze", "--format", "json", "-q", str(specs)]) == 0
    out, _ = capsys.readouterr()
    data = json.loads(out)  # valid JSON, no NaN
    strings = _strings(data)
    assert "Evil " + LOADED in strings
    assert "\u2028" not in out and "\u2029" not in out


# --------------------------------------------------------------------------- ids


RESERVED = ("assets", "search", "404", "index", "sitemap.xml", "index.html", "a..b", "tags",
            "cases", "machines", "index.md", "404.html")  # fmt: skip
# Windows device names ("con", "nul") and a trailing dot are refused by check
# (tests/test_cli.py::test_ids_every_file_system_can_hold).


@pytest.mark.slow
def test_ids_named_like_site_files_cannot_collide(tmp_path: Path, make_settings: Any) -> None:
    """The id pattern forbids '/', and pages live under cases/ID/ and machines/ID/, so
    an id like 'assets', 'search', '404' or 'index.html' stays in its own folder."""
    machine = (MINIMAL / "machine.yaml").read_text(encoding="utf-8")
    case = (MINIMAL / "case.yaml").read_text(encoding="utf-8")
    files = {
        "machines/search.yaml": machine.replace("id: seed", "id: search"),
        "machines/assets.yaml": machine.replace("id: seed", "id: assets"),
    }
    for ident in RESERVED:
        files[f"cases/{ident}.yaml"] = (
            case.replace("id: pts", f"id: {_q(ident)}")
            .replace("title: Points", f"title: Case {ident}")
            .replace("machines: [seed]", "machines: [search]")
        )
    specs = _write(tmp_path / "specs", files)
    output = tmp_path / "out" / "site"
    settings = make_settings(tmp_path, name="Hostile")
    result = build_site([specs], settings, output, cache_dir=tmp_path / "cache", strict=True)
    assert result.ok, [p.format() for p in result.problems]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["site"]
    for ident in RESERVED:
        page = output / "cases" / ident / "index.html"
        assert f"Case {ident}" in page.read_text(encoding="utf-8"), ident
    for machine_id in ("search", "assets"):
        assert (output / "machines" / machine_id / "index.html").is_file()
    for own in ("index.html", "404.html", "sitemap.xml", "search/search_index.json", MARKER,
                "assets/javascripts/roofgen-charts.js", "tags/index.html"):  # fmt: skip
        assert (output / own).is_file(), own
    assert "Case" not in (output / "index.html").read_text(encoding="utf-8").split("<main")[0]
    json.loads((output / "search" / "search_index.json").read_text(encoding="utf-8"))
    home = (output / "index.html").read_text(encoding="utf-8")
    for ident in RESERVED:
        assert f'href="cases/{ident}/index.html"' in home, ident


# --------------------------------------------------------------------------- browser


def _hover_every_mark(watched: WatchedPage) -> list[str]:
    """Hover every chart point (at most 40): return the text of each tooltip shown, after
    checking that no element came from the names in it."""
    page = watched.page
    marks = page.locator(".roofgen-chart svg g.mark-symbol path")
    texts = []
    for i in range(min(marks.count(), 40)):
        mark = marks.nth(i)
        mark.scroll_into_view_if_needed()
        box = mark.bounding_box()
        if not box or box["width"] == 0:
            continue
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        tooltip = page.locator("#vg-tooltip-element.visible")
        if tooltip.count():
            live = tooltip.evaluate("el => el.querySelectorAll('script, img, svg, iframe').length")
            assert live == 0, tooltip.inner_html()
            texts.append(tooltip.inner_text())
    return texts


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("page_path", ["cases/evil/", "machines/evil-gpu/", ""])
def test_hostile_pages_in_a_browser_open_no_dialog(
    page_path: str, watched_page: WatchedPage, serve_dir: Any, hostile: Path
) -> None:
    dialogs: list[str] = []
    page = watched_page.page

    def on_dialog(dialog: Any) -> None:
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(serve_dir(hostile / "site") + page_path)
    wait_for_charts(watched_page)
    if page_path:  # tooltips show the names as text
        tooltips = _hover_every_mark(watched_page)
        assert any("<script>alert('script')</script>" in t for t in tooltips), tooltips
    page.wait_for_timeout(200)
    assert dialogs == []
    assert page.evaluate("() => document.querySelectorAll('iframe[src^=javascript]').length") == 0
    watched_page.assert_clean()
