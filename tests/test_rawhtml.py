"""Raw HTML blocks stored before Python-Markdown's HTML parsers (``site/rawhtml.py``):
the HTML of every page and the anchor ids MkDocs validates links against are the
same as without the extension, and the blocks it is not sure of are left alone."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import markdown
import pytest
from mkdocs.structure.pages import _RawHTMLPreprocessor
from specdata import make_settings

import roofgen.site.build as site_build
import roofgen.site.rawhtml as rawhtml
from roofgen.api import build_site
from roofgen.site.mkdocs_run import run_mkdocs
from roofgen.site.rawhtml import RawHtmlExtension, raw_blocks

EXAMPLES = Path(__file__).resolve().parents[1] / "specs"
# The Markdown extensions of the generated mkdocs.yml (roofgen/site/pages.py).
EXTENSIONS: list[Any] = ["tables", "attr_list", "md_in_html", "admonition", "toc"]
CONFIGS = {"toc": {"permalink": True}}
HEAVY = ("<table>", '<div class="roofgen-chart-block"', '<div class="roofgen-verdict"')


def convert(text: str, *, raw: bool) -> tuple[str, set[str]]:
    """The page's HTML and its anchor ids as MkDocs collects them from raw HTML."""
    extension = RawHtmlExtension()
    md = markdown.Markdown(
        extensions=[*EXTENSIONS, extension] if raw else EXTENSIONS, extension_configs=CONFIGS
    )
    ids = _RawHTMLPreprocessor()
    ids._register(md)
    html = md.convert(text)
    return html, ids.present_anchor_ids | extension.take_anchor_ids()


STORED: list[int] = []


@pytest.fixture(scope="module")
def example_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Markdown pages roofgen hands MkDocs for the example specs (and, in STORED,
    how many blocks the build's MkDocs run stored unparsed, page by page)."""
    root = tmp_path_factory.mktemp("rawhtml")
    shutil.copytree(EXAMPLES, root / "specs")
    inner, store = site_build.run_mkdocs, rawhtml.raw_blocks
    kept = root / "docs"

    def keep(config_file: Path, *args: Any, **kwargs: Any) -> list[str]:
        shutil.copytree(Path(config_file).parent / "docs", kept)
        return inner(config_file, *args, **kwargs)

    def counted(lines: list[str]) -> list[tuple[int, int]]:
        found = store(lines)
        STORED.append(len(found))
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(site_build, "run_mkdocs", keep)
        patch.setattr(rawhtml, "raw_blocks", counted)
        result = build_site(
            [root / "specs"], make_settings(root), root / "site", cache_dir=root / "cache"
        )
    assert result.ok, [p.format() for p in result.problems]
    return kept


def body(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text.split("---\n", 2)[2] if text.startswith("---\n") else text


def test_every_example_page_converts_to_the_same_html_and_anchors(example_docs: Path) -> None:
    pages = sorted(example_docs.rglob("*.md"))
    assert len(pages) > 20
    for page in pages:
        text = body(page)
        assert convert(text, raw=True) == convert(text, raw=False), page


def test_the_case_pages_tables_and_chart_blocks_skip_the_html_parsers(example_docs: Path) -> None:
    # The build's MkDocs run stores blocks unparsed, on every page it converts ...
    pages = sorted(example_docs.rglob("*.md"))
    assert len(STORED) == len(pages) and sum(STORED) > 10 * len(pages)
    # ... and every table, chart block and verdict card of a case page among them:
    # the blocks that cost the time.
    cases = sorted((example_docs / "cases").glob("*/index.md"))
    assert cases
    for page in cases:
        lines = body(page).split("\n")
        stored = {i for start, end in raw_blocks(lines) for i in range(start, end)}
        heavy = [i for i, line in enumerate(lines) if line.startswith(HEAVY)]
        assert heavy, page
        assert [i for i in heavy if i not in stored] == [], page


def test_a_block_is_stored_whole_with_its_ids() -> None:
    text = (
        "Intro *text*.\n\n"
        '<div class="card" id="verdict">\n<div id="inner">x</div>\n'
        '<a name="old-anchor">y</a> <a href="#verdict">z</a>\n</div>\n\n'
        "After **it**.\n"
    )
    lines = text.split("\n")
    assert raw_blocks(lines) == [(2, 6)]
    html, ids = convert(text, raw=True)
    assert html == convert(text, raw=False)[0]
    assert '<div class="card" id="verdict">\n<div id="inner">x</div>' in html
    assert "<p>After <strong>it</strong>.</p>" in html
    assert ids == {"verdict", "inner", "old-anchor"}


@pytest.mark.parametrize(
    "text",
    [
        # The first element closes before the block ends: Markdown parses the rest.
        "<div>a</div>\n*b*\n<div>c</div>\n\n",
        # A comment could hide a tag from a count of tags.
        "<div><!-- <div> -->a</div>\n\n",
        # Markdown inside HTML is Markdown's to parse.
        '<div markdown="1">\n*a*\n</div>\n\n',
        # Not preceded by a blank line (part of a paragraph).
        "text\n<table>\n<tr><td>1</td></tr>\n</table>\n\n",
        # Not a tag roofgen opens a block with.
        "<section>\n<p>a</p>\n</section>\n\n",
        # Never closed.
        "<div>\n<p>a</p>\n\n",
        # A script's content is not markup.
        "<div><script>if (a < b) {}</script></div>\n\n",
    ],
)
def test_blocks_it_is_not_sure_of_are_left_to_markdown(text: str) -> None:
    assert raw_blocks(text.split("\n")) == []
    assert convert(text, raw=True) == convert(text, raw=False)


def test_blocks_without_a_blank_line_after_are_left_to_markdown() -> None:
    assert raw_blocks(["", "<div>", "</div>"]) == []
    assert raw_blocks(["", "<div>", "</div>", ""]) == [(1, 3)]


def test_links_to_ids_in_stored_blocks_are_validated_like_the_others(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(
        "# Home\n\n"
        '<div class="roofgen-verdict" id="verdict">\n<dl><dt>a</dt><dd>b</dd></dl>\n</div>\n\n'
        "See [the verdict](#verdict) and [nothing](#nowhere).\n",
        encoding="utf-8",
    )
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nvalidation:\n  anchors: warn\n", encoding="utf-8"
    )
    messages = run_mkdocs(tmp_path / "mkdocs.yml", tmp_path / "site", strict=False, epoch=0)
    assert [m for m in messages if "#nowhere" in m]
    assert [m for m in messages if "#verdict" in m] == []
    assert '<div class="roofgen-verdict" id="verdict">' in (
        tmp_path / "site" / "index.html"
    ).read_text(encoding="utf-8")


def test_a_narrative_block_is_stored_whole_without_its_text_as_ids() -> None:
    """A narrative's sanitised HTML may hold a code block and text that reads like an
    attribute; it is stored all the same, and such text adds no anchor."""
    block = (
        '<div class="roofgen-narrative"><p>see id="verdict" and markdown="1"</p>'
        "<pre><code>a&#10;&#10;b&#10;</code></pre></div>"
    )
    text = f"Intro.\n\n{block}\n\nAfter *it*.\n"
    assert raw_blocks(text.split("\n")) == [(2, 3)]
    html, ids = convert(text, raw=True)
    assert (html, ids) == convert(text, raw=False)
    assert block in html and ids == set()
    # Not alone on its line: left to Markdown like any other block.
    assert raw_blocks(["", block, "more", ""]) == []
