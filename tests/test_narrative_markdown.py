"""A spec's Markdown fields never become markup the page did not write.

Each field is rendered on its own (``roofgen/site/narrative.py``), sanitised by nh3
and placed in the page as one raw HTML block. The payloads (and a fuzz of backtick,
bracket, HTML and entity fragments) go through the real path: the narrative block,
then the page's own Python-Markdown with the extensions of the generated mkdocs.yml;
the assertions are on the parsed HTML. A real build of a project whose every Markdown
field holds a payload is then checked for its search index and opened in Chromium.
"""

from __future__ import annotations

import html.parser
import json
import re
from pathlib import Path
from typing import Any

import markdown
import pytest
from browser import WatchedPage
from hypothesis import given, settings
from hypothesis import strategies as st

from roofgen.api import build_site
from roofgen.site.escape import md_text
from roofgen.site.narrative import narrative_html
from roofgen.site.rawhtml import RawHtmlExtension

# The Markdown extensions of the generated mkdocs.yml (roofgen/site/pages.py).
EXTENSIONS: list[Any] = ["tables", "attr_list", "md_in_html", "admonition", "toc"]
CONFIGS = {"toc": {"permalink": True}}

# What a narrative may hold, written out here rather than read from roofgen.
ALLOWED_TAGS = frozenset(
    {
        *("p", "br", "em", "strong", "code", "pre", "blockquote", "hr", "del", "sub", "sup"),
        *("ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "a"),
    }
)
VOID = frozenset({"br", "hr"})
WRAPPER = ("div", {"class": "roofgen-narrative"})
# A link target as a browser reads it: C0 controls and spaces stripped at both ends,
# tabs and line feeds removed anywhere; only these may remain.
_BROWSER_STRIP = re.compile(r"^[\x00-\x20]+|[\x00-\x20]+$")
_LINKABLE = re.compile(r"(?:https?://[^/\\]|mailto:[^/\\])", re.IGNORECASE)

ISSUE = "one ` FLOP\nfor every `<img src=x onerror=window.pwned=1>` twelve bytes"
PAYLOADS = (
    ISSUE,
    "a ` b\nc `<script>window.pwned=2</script>` d",
    "<script>window.pwned=3</script>",
    "<img src=x onerror=window.pwned=4>",
    "<svg onload=window.pwned=5>",
    "<iframe src=javascript:parent.pwned=6></iframe>",
    "[js](javascript:window.pwned=7) [data](data:text/html,<script>parent.pwned=8</script>)"
    " [vb](vbscript:msgbox(1))",
    "[far](//evil.example/x) [back](\\\\evil/x) [mixed](/\\evil/x) [rel](../x) [anchor](#verdict)",
    "[ent](&#x6A;avascript:window.pwned=9) &lt;script&gt;window.pwned=10&lt;/script&gt;",
    "[tab](java\tscript:window.pwned=11) [nl](java&#10;script:window.pwned=11)",
    '<template id="roofline-1"><div>fake chart</div></template>',
    '<p id="verdict" class="roofgen-chart" style="color:red" data-x="1">attrs</p>',
    "text {: #verdict .roofgen-chart onclick=window.pwned=12}\n# heading {: onclick=x }",
    "![pic](https://evil.example/p.png) ![pic2](x onerror=window.pwned=13)",
    '<div markdown="1">*md in html*</div>',
    "```\n</code></pre><script>window.pwned=14</script>\n```",
    "    <script>window.pwned=15</script>",
    "[ref]\n\n[ref]: javascript:window.pwned=16",
    '<a href="javascript:window.pwned=17">x</a>',
    "<form action=https://evil.example><button>go</button></form>",
    "<!-- c --><style>body{display:none}</style>",
    "<https://ok.example/auto> <javascript:window.pwned=18>",
    '[x](<javascript:window.pwned=19>) [y](  javascript:window.pwned=20  "t")',
    "| a | b |\n|---|---|\n| <img src=x onerror=window.pwned=21> | `c` |",
    '<math><mi xlink:href="javascript:window.pwned=22">x</mi></math>',
    "<!-- roofgen:search-off --> hidden? <!-- roofgen:search-on -->",
    '!!! note "<script>window.pwned=23</script>"\n    body',
)


class _Parsed(html.parser.HTMLParser):
    """Every element of an HTML text with its attributes (entities decoded), its depth
    inside narrative blocks, and the text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str], bool]] = []  # tag, attrs, in narrative
        self.narratives = 0
        self.text: list[str] = []
        self._stack: list[str] = []
        self._narrative_at: int | None = None
        self.feed(text)
        self.close()
        assert self._stack == [], self._stack

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        inside = self._narrative_at is not None
        if not inside and (tag, values) == WRAPPER:
            self._narrative_at = len(self._stack)
            self.narratives += 1
        else:
            self.elements.append((tag, values, inside))
        if tag not in VOID:
            self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self._stack and self._stack[-1] == tag, (tag, self._stack)
        self._stack.pop()
        if self._narrative_at == len(self._stack):
            self._narrative_at = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        raise AssertionError(f"a comment survived: {data!r}")


def assert_inert_element(tag: str, attrs: dict[str, str]) -> None:
    """The allow-list: the tag, its attributes and a link's target."""
    assert tag in ALLOWED_TAGS, (tag, attrs)
    allowed = {"a": {"href", "rel"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
    assert set(attrs) <= allowed.get(tag, set()), (tag, attrs)
    if "href" in attrs:
        target = re.sub(r"[\t\n\r]", "", _BROWSER_STRIP.sub("", attrs["href"]))
        assert _LINKABLE.match(target), attrs
    if tag == "a":
        assert attrs.get("rel") == "noopener noreferrer", attrs
    if "start" in attrs:
        assert attrs["start"].isdigit(), attrs
    if "align" in attrs:
        assert attrs["align"] in ("left", "right", "center"), attrs


def page_markdown(fields: list[str]) -> str:
    """A page as the templates write one: a heading, then each field's block."""
    parts = [f"## Field {i}\n\n{narrative_html(text)}\n" for i, text in enumerate(fields)]
    return "# Page\n\n" + "\n".join(parts)


def page_html(fields: list[str]) -> str:
    """The page through Python-Markdown as MkDocs runs it (with roofgen's stash), checked
    to be the same HTML as without the stash (Python-Markdown's own raw HTML path)."""
    source = page_markdown(fields)
    stored = markdown.Markdown(
        extensions=[*EXTENSIONS, RawHtmlExtension()], extension_configs=CONFIGS
    ).convert(source)
    plain = markdown.Markdown(extensions=EXTENSIONS, extension_configs=CONFIGS).convert(source)
    assert stored == plain
    return stored


def assert_inert_page(fields: list[str]) -> _Parsed:
    """Every element of the page is the template's own (the headings and their
    permalinks) or an allowed one inside its field's narrative block."""
    parsed = _Parsed(page_html(fields))
    assert parsed.narratives == len(fields)
    for tag, attrs, inside in parsed.elements:
        if inside:
            assert_inert_element(tag, attrs)
        elif tag in ("h1", "h2"):
            assert set(attrs) <= {"id"}, (tag, attrs)
        else:
            assert tag == "a" and attrs.get("class") == "headerlink", (tag, attrs)
            assert attrs["href"].startswith("#"), attrs
    return parsed


# --------------------------------------------------------------------------- payloads


@pytest.mark.parametrize("payload", PAYLOADS)
def test_each_payload_renders_inert(payload: str) -> None:
    parsed = assert_inert_page([payload])
    assert "".join(parsed.text).strip()  # something of the field is shown


def test_the_issue_payload_is_text_and_code() -> None:
    parsed = assert_inert_page([ISSUE])
    text = "".join(parsed.text)
    assert "<img src=x onerror=window.pwned=1>" in text  # shown, as text
    assert "twelve bytes" in text
    assert not [e for e in parsed.elements if e[0] == "img"]


def test_all_payloads_in_one_field_and_each_in_its_own() -> None:
    assert_inert_page(["\n".join(PAYLOADS)])
    assert_inert_page(list(PAYLOADS))


def test_fields_are_rendered_on_their_own() -> None:
    # A reference defined in one field does not serve another ...
    parsed = assert_inert_page(["[ok]: https://ok.example/", "see [ok] and [ok][]"])
    assert not [e for e in parsed.elements if e[0] == "a" and e[2]]
    assert "see [ok] and [ok][]" in "".join(parsed.text)
    # ... and a stray backtick pairs with nothing in the next field.
    parsed = assert_inert_page(["one `", "<b>two</b> ` three"])
    assert not [e for e in parsed.elements if e[0] == "code"]
    assert "<b>two</b> ` three" in "".join(parsed.text)


def test_what_stays_a_link_and_what_is_shown_as_text() -> None:
    fragment = narrative_html(
        "[pr](https://example.com/pr/1) [mail](mailto:team@example.com) "
        "![plot](https://example.com/p.png) [rel](../cases/x/) [frag](#verdict) "
        "[far](//evil.example/) <b>bold?</b>\n\n### A heading"
    )
    parsed = _Parsed(fragment)
    links = [(attrs["href"], tag) for tag, attrs, _ in parsed.elements if tag == "a"]
    assert links == [
        ("https://example.com/pr/1", "a"),
        ("mailto:team@example.com", "a"),
        ("https://example.com/p.png", "a"),  # an image is a link to it, loads nothing
    ]
    text = "".join(parsed.text)
    assert "plot rel frag far <b>bold?</b>" in text  # the rest is text
    # A heading is bold text: the page's outline and search sections stay its own.
    assert ("strong", {}, True) in parsed.elements and "A heading" in text
    assert not [e for e in parsed.elements if e[0].startswith("h")]


def test_a_narrative_block_is_one_line_and_keeps_code_lines() -> None:
    fragment = narrative_html("```\na\n\n\tb\n```\n\n1. x\n2. y")
    assert "\n" not in fragment and "\t" not in fragment
    parsed = _Parsed(fragment)
    assert "a\n\n    b\n" in "".join(parsed.text)  # the code's lines, as HTML reads them


def test_a_kernel_note_leads_with_its_id() -> None:
    assert narrative_html("Scale *and* add.", lead="fused") == (
        '<div class="roofgen-narrative"><p>fused: Scale <em>and</em> add.</p></div>'
    )
    assert narrative_html("- a", lead="<k>") == (
        '<div class="roofgen-narrative"><p>&lt;k&gt;: </p><ul>&#10;<li>a</li>&#10;</ul></div>'
    )


def test_md_text_keeps_a_stray_backtick_from_pairing_across_lines() -> None:
    """md_text (roofgen's own prose: the Guide) escapes a backtick outside a one-line
    code span, so Markdown cannot pair it with one on the next line."""
    rendered = markdown.markdown(md_text(ISSUE), extensions=EXTENSIONS)
    parsed = _Parsed(rendered)
    assert [tag for tag, _, _ in parsed.elements] == ["p", "code"]
    assert "<img src=x onerror=window.pwned=1>" in "".join(parsed.text)


# --------------------------------------------------------------------------- fuzz

FRAGMENTS = (
    "`", "``", "```", "\\`", "[", "]", "(", ")", "![", "](", "]: ", "[x]", "[x]: ",
    "<", ">", "</", "/>", "<img src=x onerror=alert(1)>", "<script>", "</script>",
    "<svg onload=alert(1)>", "<template id=c1>", "<a href=javascript:alert(1)>", "</a>",
    "<div markdown=1>", "</div>", '<p id="verdict" class="c" style="s">', "<!--", "-->",
    "<![CDATA[", "]]>", "&", "&lt;", "&gt;", "&#60;", "&#x6A;", "&amp;", "&#10;", "&#0;",
    "javascript:", "java\tscript:", "data:text/html,", "vbscript:", "//evil.example",
    "\\\\evil", "/\\evil", "https://ok.example/", "mailto:a@b.c", "#id", "{: #id .c }",
    "{", "}", '"', "'", "=", "*", "_", "~", "|", "|---|", "#", "> ", "- ", "1. ", "    ",
    "\t", "\n", "\n\n", "!!! note", ":", " ", "x", "onerror=", "alert(1)",
)  # fmt: skip
_CHUNK = st.sampled_from(FRAGMENTS) | st.text(alphabet="`[]()<>&#;!*_\\\n :/=\"'|{}", max_size=4)
_FIELD = st.lists(_CHUNK, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FIELD, min_size=1, max_size=3))
def test_fuzzed_fields_render_inert(fields: list[str]) -> None:
    assert_inert_page(fields)


# --------------------------------------------------------------------------- a real site


def _q(text: str) -> str:
    return json.dumps(text)


EVERY = "\n\n".join(PAYLOADS)
SENTINELS = {  # the visible text each field starts with, and where it is shown
    "context": "Sentinel context",
    "hypothesis": "Sentinel hypothesis",
    "change": "Sentinel change",
    "result": "Sentinel result",
    "lessons": "Sentinel lessons",
    "method": "Sentinel method",
    "variant": "Sentinel variant",
    "kernel": "Sentinel kernel",
    "machine": "Sentinel machine",
}


def _field(key: str) -> str:
    return _q(f"{SENTINELS[key]}.\n\n{EVERY}")


MACHINE = f"""\
roofgen: 1
kind: machine
id: seed
name: Seed
description: {_field("machine")}
clocks: {{sm: 1410 MHz}}
compute:
  - id: tensor
    kind: tensor
    peaks: {{fp16: 312 TFLOP/s}}
memory:
  - id: hbm
    role: device
    bandwidth: 1.5 TB/s
"""

CASE = f"""\
roofgen: 1
kind: case
id: pts
title: Points
summary: {_q(ISSUE)}
machines: [seed]
narrative:
  context: {_field("context")}
  hypothesis: {_field("hypothesis")}
  change: {_field("change")}
  result: {_field("result")}
  lessons: {_field("lessons")}
method:
  description: {_field("method")}
kernels:
  - {{id: low, operator: {{kind: elementwise}}, description: {_field("kernel")}}}
variants:
  - id: base
    description: {_field("variant")}
    launches:
      - kernel: low
        measurement:
          time: {{median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}}
          flops: {{tensor: {{fp16: 1.5e9 FLOP}}}}
          bytes: {{hbm: 1.5 GB}}
"""


@pytest.fixture(scope="module")
def payload_site(tmp_path_factory: pytest.TempPathFactory, make_settings: Any) -> Path:
    """A site (built strict) whose every Markdown field holds every payload."""
    root = tmp_path_factory.mktemp("narrative-site")
    for name, text in {"machines/seed.yaml": MACHINE, "cases/pts.yaml": CASE}.items():
        (root / "specs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "specs" / name).write_text(text, encoding="utf-8")
    settings_ = make_settings(root, name="Narratives")
    result = build_site(
        [root / "specs"], settings_, root / "site", cache_dir=root / "cache", strict=True
    )
    assert result.ok, [p.format() for p in result.problems]
    return root / "site"


def _narratives(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    return re.findall(r'<div class="roofgen-narrative">.*?</div>', text)


@pytest.mark.slow
def test_the_built_pages_hold_only_inert_narratives(payload_site: Path) -> None:
    case = _narratives(payload_site / "cases" / "pts" / "index.html")
    machine = _narratives(payload_site / "machines" / "seed" / "index.html")
    assert len(case) == 8 and len(machine) == 1  # 5 narrative, method, kernel, variant
    for block in case + machine:
        parsed = _Parsed(block)
        assert parsed.narratives == 1
        for tag, attrs, _ in parsed.elements:
            assert_inert_element(tag, attrs)
    shown = " ".join(" ".join(_Parsed(b).text) for b in case + machine)
    for sentinel in SENTINELS.values():
        assert sentinel in shown


@pytest.mark.slow
def test_search_indexes_the_narratives(payload_site: Path) -> None:
    index = json.loads((payload_site / "search" / "search_index.json").read_text("utf-8"))
    entries = {d["location"]: d["text"] for d in index["docs"]}
    # Each narrative section's entry holds its text (the payloads in it as text).
    for key in ("context", "hypothesis", "change", "result", "lessons"):
        text = entries[f"cases/pts/index.html#{key}"]
        assert SENTINELS[key] in text and "twelve bytes" in text, key
        assert "<img" not in text and "<script" not in text, key
    assert SENTINELS["machine"] in entries["machines/seed/index.html#seed"]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("page_path", ["cases/pts/", "machines/seed/"])
def test_no_payload_runs_in_a_browser(
    page_path: str, watched_page: WatchedPage, serve_dir: Any, payload_site: Path
) -> None:
    page = watched_page.page
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(serve_dir(payload_site) + page_path)
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)
    title = page.title()
    assert page.evaluate("() => window.pwned === undefined && parent.pwned === undefined")
    assert "pwned" not in title and dialogs == []
    live = page.evaluate(
        """() => [...document.querySelectorAll('.roofgen-narrative *')]
              .map(e => e.localName)
              .filter(t => ['img', 'svg', 'iframe', 'script', 'template', 'form', 'style',
                            'math', 'object', 'embed'].includes(t))"""
    )
    assert live == []
    targets = page.evaluate(
        "() => [...document.querySelectorAll('.roofgen-narrative a')].map(a => a.href)"
    )
    assert targets and all(t.startswith(("http://", "https://", "mailto:")) for t in targets)
    assert not [t for t in targets if "127.0.0.1" in t]  # no link resolved against the site
    key = "kernel" if page_path.startswith("cases") else "machine"
    assert page.get_by_text(SENTINELS[key], exact=False).first.is_visible()
    assert page.get_by_text("twelve bytes", exact=False).first.is_visible()
    assert watched_page.blocked_requests == []
