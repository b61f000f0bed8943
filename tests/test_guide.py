"""The site's Guide: the spec reference generated from the schemas, the measuring
recipes, the tutorial page, and a strict site build with them in the navigation."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from roofgen.api import build_site
from roofgen.cli import main
from roofgen.config import load_settings
from roofgen.importers.ncu_metrics import FLOP_WEIGHTS, sass_metric
from roofgen.site.guide import GUIDE_NAV, REFERENCE_PATH, guide_pages, reference_page
from roofgen.site.pages import GENERATED_MD
from roofgen.spec import fields as reference
from roofgen.spec.schema import load_schema

ANCHOR = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def _property_names(node: Any) -> set[str]:
    """Every property name anywhere in a schema, walked without roofgen's walker."""
    names: set[str] = set()
    if isinstance(node, dict):
        names |= set(node.get("properties", {}))
        for value in node.values():
            names |= _property_names(value)
    elif isinstance(node, list):
        for value in node:
            names |= _property_names(value)
    return names


@pytest.mark.parametrize("kind", reference.SPEC_KINDS)
def test_the_reference_lists_every_schema_field(kind):
    page = reference_page()
    fields = reference.fields(kind)
    anchors = [f.anchor for f in fields]
    assert len(anchors) == len(set(anchors))
    for f in fields:
        assert ANCHOR.match(f.anchor), f.anchor
        assert f"### `{f.display}` {{#{f.anchor}}}" in page, f.display
    shown = {part for f in fields for part in re.split(r"[.\[\]]+", f.display)}
    missing = _property_names(load_schema(kind)) - shown
    assert not missing
    assert f"{{#{kind}}}" in page


def test_the_reference_says_type_unit_and_example():
    page = reference_page()
    entry = page.split("{#case-variants-launches-measurement-time}")[1].split("###")[0]
    assert "**required**" in entry
    # The median is required unless the mean is given: the schema's if/then, not 'required'.
    entry = page.split("{#case-variants-launches-measurement-time-median}")[1].split("###")[0]
    assert "quantity (time)" in entry and "unit s" in entry
    assert "median: 1.42 ms" in entry
    entry = page.split("{#machine-memory-bandwidth}")[1].split("###")[0]
    assert "quantity (bandwidth) or mapping" in entry and "unit B/s" in entry


def test_every_guide_page_says_it_is_generated():
    pages = guide_pages(GENERATED_MD)
    assert set(pages) == {path for _, path in GUIDE_NAV}
    for text in pages.values():
        assert text.startswith(GENERATED_MD)


def test_the_measuring_page_has_the_recipes():
    text = guide_pages(GENERATED_MD)["guide/measure/index.md"]
    command = next(line for line in text.splitlines() if line.startswith("ncu --csv --metrics"))
    metrics = set(command.split()[3].split(","))
    wanted = {"gpu__time_duration.sum", "dram__bytes.sum", "lts__t_bytes.sum",
              "l1tex__t_bytes.sum", "smsp__inst_executed.sum",
              "sm__ops_path_tensor_src_bf16_dst_fp32.sum"}  # fmt: skip
    wanted |= {sass_metric(op) for ops in FLOP_WEIGHTS.values() for op, _ in ops
               if not op.endswith("2")}  # fmt: skip
    assert wanted <= metrics
    for op in ("fadd2", "fmul2", "ffma2"):  # Blackwell only: named beside the command
        assert sass_metric(op) in text
    for recipe in ("nsys stats --report cuda_gpu_kern_sum --format csv", "do_bench(",
                   "torch.cuda.Event(enable_timing=True)", "statistics.quantiles",
                   "cudaEventElapsedTime", "flush.zero_()", "warmup"):  # fmt: skip
        assert recipe in text, recipe


def _links(text: str) -> list[tuple[str, str]]:
    return re.findall(r"\]\((\.\./[a-z-]+/index\.md)#([A-Za-z0-9_-]+)\)", text)


def test_guide_links_point_at_reference_entries():
    anchors = {f.anchor for k in reference.SPEC_KINDS for f in reference.fields(k)}
    pages = guide_pages(GENERATED_MD)
    links = [link for text in pages.values() for link in _links(text)]
    assert links
    for page, anchor in links:
        assert page == "../reference/index.md" and anchor in anchors, (page, anchor)


@pytest.mark.slow
def test_a_strict_build_has_the_guide(tmp_path: Path, monkeypatch, capsys):
    assert main(["init", str(tmp_path), "-q"]) == 0
    monkeypatch.chdir(tmp_path)
    settings = load_settings(tmp_path)
    output = tmp_path / "site"
    result = build_site(list(settings.specs), settings, output, strict=True, quiet=True,
                        use_cache=False)  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    for _, path in GUIDE_NAV:
        assert (output / path.replace(".md", ".html")).is_file(), path
    html = (output / REFERENCE_PATH.replace(".md", ".html")).read_text("utf-8")
    assert 'id="case-variants-launches-measurement-time"' in html
    assert 'id="machine-memory-bandwidth"' in html
    # The Guide is a section of the navigation (pruned pages show their own section).
    for title, _ in GUIDE_NAV:
        assert title in html, title
    assert "Guide" in (output / "index.html").read_text("utf-8")
