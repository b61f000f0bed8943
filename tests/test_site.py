"""The case-study site: pages, numbers, offline assets, golden output, determinism,
atomic output, Markdown-only output, escaping of hostile spec strings, the CLI.

Golden files live in ``tests/golden/``; after an intended change of the generated
pages, regenerate them with::

    ROOFGEN_REGEN_GOLDEN=1 pytest tests/test_site.py

and review the diff.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from pngread import drawn_share, read_png
from specdata import make_settings

from roofgen.api import build_site, check
from roofgen.charts import RooflineInput, hierarchical_chart
from roofgen.cli import main
from roofgen.config import load_settings
from roofgen.site.advice import recommendations
from roofgen.site.build import MARKER, BuildResult
from roofgen.site.charts import case_chart_inputs
from roofgen.site.context import build_context, resource_names
from roofgen.site.escape import md_escape, md_text, plain_text, safe_url

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "specs"
GOLDEN = Path(__file__).resolve().parent / "golden"
REGEN = os.environ.get("ROOFGEN_REGEN_GOLDEN") == "1"

TINY = """\
roofgen: 1
kind: machine
id: tiny
name: Tiny GPU
clocks: {sm: 1000 MHz}
compute:
  - id: vector
    name: Vector unit
    kind: fp32
    peaks:
      fp32:
        datasheet: 10 TFLOP/s
        measured: 9 TFLOP/s
        source: vendor sheet
        measured_source: microbenchmark
    ceilings:
      - {id: no-fma, name: No FMA, precision: fp32, value: 5 TFLOP/s}
memory:
  - {id: hbm, name: HBM, role: device, bandwidth: {datasheet: 1 TB/s, measured: 0.9 TB/s}}
  - {id: l2, name: L2, role: llc, bandwidth: 4 TB/s}
"""

ALPHA = """\
roofgen: 1
kind: case
id: alpha
title: Alpha fusion
summary: Two kernels become one.
date: 2026-01-02
owners: [ana]
status: merged
tags: [fusion, demo]
patterns: [fusion]
machines: [tiny]
links: {pull_request: "https://example.com/pr/1", commit: abc1234}
narrative:
  context: Why it matters.
  result: |
    It got **faster**; see [the pull request](https://example.com/pr/1).
method: {description: "CUDA events, 100 repeats.", gpu: Tiny GPU}
end_to_end:
  before: {time: 10 ms, description: one step}
  after: {time: 9 ms, description: one step}
kernels:
  - id: scale
    name: scale_kernel
    operator: {kind: elementwise, shape: {n: 1000000}}
    dtypes: {x: fp32}
  - {id: add, name: add_kernel, operator: {kind: elementwise}}
  - {id: fused, name: fused_kernel, operator: {kind: elementwise}, description: Scale and add.}
variants:
  - id: before
    name: Two kernels
    launches:
      - kernel: scale
        measurement:
          time: {median: 1.2 ms, q1: 1.19 ms, q3: 1.21 ms, repeats: 100, warmup: 10}
          timing: cuda-events
          flops: {vector: {fp32: 1e9 FLOP}}
          bytes: {hbm: 1 GB, l2: 1.5 GB}
      - kernel: add
        measurement:
          time: {median: 1.3 ms, q1: 1.29 ms, q3: 1.31 ms, repeats: 100, warmup: 10}
          timing: cuda-events
          flops: {vector: {fp32: 5e8 FLOP}}
          bytes: {hbm: 1 GB, l2: 1.2 GB}
  - id: after
    name: One fused kernel
    launches:
      - kernel: fused
        measurement:
          time: {median: 1.4 ms, q1: 1.39 ms, q3: 1.41 ms, repeats: 100, warmup: 10}
          timing: cuda-events
          flops: {vector: {fp32: 1.5e9 FLOP}}
          bytes: {hbm: 1.1 GB, l2: 1.3 GB}
"""

BETA = """\
roofgen: 1
kind: case
id: beta
title: Beta compute kernel
summary: A compute-bound kernel.
date: 2026-02-01
owners: [bo]
status: draft
tags: [demo]
machines: [tiny]
kernels:
  - {id: dense, name: dense_kernel, operator: {kind: gemm, shape: {m: 1024, n: 1024, k: 1024}}}
variants:
  - id: only
    launches:
      - kernel: dense
        measurement:
          time: {median: 2 ms, q1: 1.99 ms, q3: 2.01 ms, repeats: 50, warmup: 5}
          timing: cuda-events
          flops: {vector: {fp32: 1.5e10 FLOP}}
          bytes: {hbm: 100 MB, l2: 400 MB}
"""

# Hostile strings in every free-text field a spec has.
PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "{{ 7*7 }}",
    "a | b",
    "</script>",
    "{: onclick=alert(1)}",
    "[entity](java&#115;cript:alert(1))",
)
EVIL_TEXT = " ".join(PAYLOADS)


def _q(text: str) -> str:
    return json.dumps(text)


EVIL_MACHINE = f"""\
roofgen: 1
kind: machine
id: evil-gpu
name: {_q("Evil GPU " + EVIL_TEXT)}
description: {_q(EVIL_TEXT)}
clocks: {{sm: 1000 MHz}}
compute:
  - id: vector
    name: {_q("Unit " + EVIL_TEXT)}
    kind: fp32
    peaks:
      fp32: {{datasheet: 10 TFLOP/s, source: {_q(EVIL_TEXT)}}}
memory:
  - {{id: hbm, name: {_q("HBM " + EVIL_TEXT)}, role: device, bandwidth: 1 TB/s}}
"""

EVIL_CASE = f"""\
roofgen: 1
kind: case
id: evil
title: {_q("Evil " + EVIL_TEXT)}
summary: {_q(EVIL_TEXT)}
date: 2026-03-01
owners: [{_q(EVIL_TEXT)}]
tags: [evil]
machines: [evil-gpu]
links:
  pull_request: "javascript:alert(1)"
  issue: "https://example.com/issue/1"
  code: {_q("https://example.com/a b<script>")}
narrative:
  context: {_q(EVIL_TEXT)}
  hypothesis: {_q("<script>alert(1)</script>" + chr(10) + chr(10) + "> quoted <b>bold</b>")}
  change: {_q("![pixel](https://tracker.example/p.png) [ok](https://example.com)")}
  result: {_q("[x][id]" + chr(10) + chr(10) + "[id]: javascript:alert(1)")}
  lessons: {_q("para" + chr(10) + "{: onclick=alert(1)}")}
method:
  description: {_q(EVIL_TEXT)}
  gpu: {_q(EVIL_TEXT)}
end_to_end:
  base: {{time: 10 ms, description: {_q(EVIL_TEXT)}}}
kernels:
  - id: k
    name: {_q("kernel " + EVIL_TEXT)}
    description: {_q(EVIL_TEXT)}
    operator: {{kind: other, shape: {{note: {_q(EVIL_TEXT)}}}}}
variants:
  - id: base
    name: {_q("variant " + EVIL_TEXT)}
    description: {_q(EVIL_TEXT)}
    launches:
      - kernel: k
        measurement:
          time: {{median: 1 ms, q1: 0.99 ms, q3: 1.01 ms, repeats: 10, warmup: 2}}
          timing: cuda-events
          flops: {{vector: {{fp32: 1e9 FLOP}}}}
          bytes: {{hbm: 0.5 GB}}
          notes: {_q(EVIL_TEXT)}
"""


# --------------------------------------------------------------------------- helpers


def write_specs(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def build(specs: Path, output: Path, *, static_charts: bool = False, **options: Any) -> BuildResult:
    root = specs.parent
    options.setdefault("cache_dir", root / "cache")
    options.setdefault("strict", True)
    settings = make_settings(root, static_charts=True) if static_charts else make_settings(root)
    result = build_site([specs], settings, output, **options)
    assert result.ok, [p.format() for p in result.problems]
    return result


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def html_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


class Page(html.parser.HTMLParser):
    """Elements, attributes, script bodies and text of one HTML page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self.title = ""
        self._in: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag in ("script", "title", "style"):
            self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        where = self._in[-1] if self._in else ""
        if where == "script":
            self.scripts.append(data)
        elif where == "title":
            self.title += data
        else:
            self.text.append(data)

    def all_text(self) -> str:
        return " ".join(self.text)


def parse(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BuildResult]:
    """The example specs built (strict) into a temporary folder."""
    root = tmp_path_factory.mktemp("examples")
    specs = root / "specs"
    shutil.copytree(EXAMPLES, specs)
    result = build(specs, root / "site")
    return root / "site", result


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("small")
    return write_specs(
        root / "specs",
        {"machines/tiny.yaml": TINY, "cases/alpha.yaml": ALPHA, "cases/beta.yaml": BETA},
    )


@pytest.fixture(scope="module")
def small_site(small: Path) -> tuple[Path, BuildResult]:
    output = small.parent / "site"
    return output, build(small, output)


# --------------------------------------------------------------------------- pages


@pytest.mark.slow
def test_every_page_exists(example_site: tuple[Path, BuildResult]) -> None:
    site, result = example_site
    checked = check([EXAMPLES])
    assert checked.analysis is not None
    expected = ["index.html", "method/index.html", "tags/index.html"]
    expected += ["operators/index.html", "bindings/index.html", "404.html"]
    expected += [f"cases/{c.case.id}/index.html" for c in checked.analysis.cases]
    expected += [f"machines/{m.machine.id}/index.html" for m in checked.analysis.machines]
    missing = [p for p in expected if not (site / p).is_file()]
    assert not missing
    assert (site / MARKER).is_file()
    hierarchical = len(checked.analysis.machines) + sum(
        len({v.machine for v in c.variants}) for c in checked.analysis.cases
    )
    assert checked.specs is not None
    ctx = build_context(checked.analysis, checked.specs.machines, name="Examples")
    # One hierarchical roofline per machine page and per machine of a case, plus the
    # sections' charts (every resource, precision, instruction, communication, ...).
    assert sum(isinstance(slot.input, RooflineInput) for slot in ctx.charts) == hierarchical
    assert result.charts == len(ctx.charts)
    assert not (site / "assets" / "charts").exists()  # drawn in the browser only


@pytest.mark.slow
def test_home_table_lists_every_case(example_site: tuple[Path, BuildResult]) -> None:
    site, _ = example_site
    text = (site / "index.html").read_text(encoding="utf-8")
    table = re.search(r'<div class="roofgen-sortable roofgen-cases">(.*?)</div>', text, re.S)
    assert table, "the sortable table of every case"
    checked = check([EXAMPLES])
    assert checked.analysis is not None
    rows = re.findall(r"<tr>(.*?)</tr>", table.group(1), re.S)
    assert len(rows) == len(checked.analysis.cases) + 1  # + the heading row
    for c in checked.analysis.cases:
        assert f'href="cases/{c.case.id}/index.html"' in table.group(1), c.case.id
    headings = re.findall(r"<th[^>]*>(.*?)</th>", rows[0])
    # the key columns first, so that they show at 1280 px (test_site_browser)
    assert headings == [
        "Case", "Binding resource", "Efficiency", "Best speedup", "Class", "Machine", "Date",
    ]  # fmt: skip


@pytest.mark.slow
def test_case_page_has_the_launch_numbers_and_recommendations(
    small_site: tuple[Path, BuildResult],
) -> None:
    site, _ = small_site
    page = parse(site / "cases" / "alpha" / "index.html")
    text = page.all_text()
    # scale: 1e9 FLOP, 1 GB of HBM, 1.5 GB of L2 in 1.2 ms; measured HBM roof 0.9 TB/s.
    for expected in (
        "scale_kernel",
        "1.2 ms",  # time
        "833 GFLOP/s",  # 1e9 / 1.2e-3
        "1 FLOP/B",  # HBM intensity
        "0.667 FLOP/B",  # L2 intensity
        "1.11 ms",  # bound: 1 GB / 0.9 TB/s
        "93%",  # efficiency, measured roofs
        "83%",  # efficiency, datasheet roofs: 1 ms / 1.2 ms
        "1.08x",  # headroom
        "HBM",  # binding
        "L2",  # runner-up
        "1.79x",  # speedup of the fused variant
        "1.11x",  # end-to-end speedup 10 / 9
        "cuda-events",
    ):
        assert expected in text, expected
    ids = [a.get("id") for tag, a in page.tags if tag in ("h2", "h3")]
    assert "recommendations" in ids
    assert "Already at 93% of the HBM roof: at most 1.08x is left" in text  # scale
    assert "At most 1.17x by reaching the HBM roof; beyond that only fewer bytes help" in text
    links = [a["href"] for tag, a in page.tags if tag == "a" and "href" in a]
    assert "https://example.com/pr/1" in links
    assert "../../machines/tiny/index.html" in links
    assert any(h.startswith("../../tags/index.html#tag-fusion") for h in links)
    # the narrative is rendered as Markdown
    assert "<strong>faster</strong>" in (site / "cases" / "alpha" / "index.html").read_text()


@pytest.mark.slow
def test_machine_page_roofs_ridges_and_chart(small_site: tuple[Path, BuildResult]) -> None:
    site, _ = small_site
    page = parse(site / "machines" / "tiny" / "index.html")
    text = page.all_text()
    for expected in ("10 TFLOP/s", "9 TFLOP/s", "1 TB/s", "900 GB/s", "microbenchmark"):
        assert expected in text, expected
    assert "10 FLOP/B" in text  # ridge: 9 TFLOP/s / 0.9 TB/s
    assert any(t == "template" and a.get("id") == "roofline-1" for t, a in page.tags)
    assert "Alpha fusion" in text


@pytest.mark.slow
def test_indexes_group_by_tag_operator_and_binding(small_site: tuple[Path, BuildResult]) -> None:
    site, _ = small_site
    tags = parse(site / "tags" / "index.html")
    ids = {a.get("id") for _, a in tags.tags}
    assert {"tag-demo", "tag-fusion"} <= ids
    operators = parse(site / "operators" / "index.html").all_text()
    assert "elementwise" in operators and "gemm" in operators
    bindings = parse(site / "bindings" / "index.html").all_text()
    assert "memory.hbm (HBM)" in bindings and "compute.vector (Vector unit)" in bindings


@pytest.mark.slow
def test_method_page_explains_every_term(example_site: tuple[Path, BuildResult]) -> None:
    site, _ = example_site
    text = parse(site / "method" / "index.html").all_text().lower()
    for term in (
        "roofline", "arithmetic intensity", "hierarchical roofline", "binding roof",
        "runner-up", "co-bound", "below all roofs", "insufficient data", "coverage",
        "unknown is not zero", "measured", "datasheet", "clock scaling", "nsight compute",
        "efficiency", "headroom", "serial bound", "sub-ceiling", "ridge point",
    ):  # fmt: skip
        assert term in text, term


@pytest.mark.slow
def test_pages_load_nothing_from_other_hosts(example_site: tuple[Path, BuildResult]) -> None:
    site, _ = example_site
    pages = html_pages(site)
    assert pages
    for path in pages:
        for tag, attrs in parse(path).tags:
            if tag == "script" and "src" in attrs:
                url = attrs["src"]
            elif tag == "link" and attrs.get("rel") not in ("canonical", "alternate"):
                url = attrs.get("href", "")
            elif tag in ("img", "iframe", "source") and "src" in attrs:
                url = attrs["src"]
            else:
                continue
            assert not re.match(r"(https?:)?//", url, re.I), f"{path}: {tag} {url}"


@pytest.mark.slow
def test_generated_files_say_so(tmp_path: Path, small: Path) -> None:
    output = tmp_path / "md"
    build(small, output, markdown_only=True)
    for page in output.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        if text.startswith("---\n"):  # front matter (a case page's title) comes first
            text = text.split("\n---\n", 1)[1]
        assert text.startswith("<!-- generated by roofgen from specs; do not edit -->\n"), page


# --------------------------------------------------------------------------- golden


def _normalise_markdown(text: str) -> str:
    text = re.sub(
        r'(<template class="roofgen-chart-spec" id="[^"]+" data-search-exclude>).*?(</template>)',
        r"\1{...}\2",
        text,
    )
    return re.sub(r"assets/charts/[0-9a-f]{16}\.svg", "assets/charts/HASH.svg", text)


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_round(v) for v in value]
    return value


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing {path}; run ROOFGEN_REGEN_GOLDEN=1 pytest tests/test_site.py"
    assert text == path.read_text(encoding="utf-8"), (
        f"{name} differs from the golden file; if intended, regenerate with "
        "ROOFGEN_REGEN_GOLDEN=1 pytest tests/test_site.py"
    )


@pytest.mark.slow
def test_golden_case_markdown(tmp_path: Path, small: Path) -> None:
    output = tmp_path / "md"
    build(small, output, markdown_only=True)
    text = (output / "cases" / "alpha" / "index.md").read_text(encoding="utf-8")
    _golden("case-alpha.md", _normalise_markdown(text))


def test_golden_chart_spec(small: Path) -> None:
    checked = check([small])
    assert checked.analysis is not None and checked.specs is not None
    case = next(c for c in checked.analysis.cases if c.case.id == "alpha")
    machines = checked.specs.machines
    [(machine, inp)] = case_chart_inputs(case, machines, resource_names(machines["tiny"]))
    assert machine.id == "tiny"
    spec = hierarchical_chart(inp)
    _golden("chart-alpha.json", json.dumps(_round(spec), indent=1, sort_keys=True) + "\n")


# --------------------------------------------------------------------------- determinism


def _cli_build(cwd: Path, args: list[str], seed: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", "from roofgen.cli import entry; entry()", "build", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.slow
def test_builds_are_byte_identical(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES, tmp_path / "specs")
    files = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "specs").rglob("*.yaml"))
    runs = [
        ("one", files, "1", "cache-one"),
        ("two", files[::-1], "2", "cache-two"),  # cold cache, reversed order, other seed
        ("three", files, "3", "cache-one"),  # warm cache
    ]
    for name, order, seed, cache in runs:
        args = ["-q", "--static-charts", "-o", name, "--cache-dir", cache, *order]
        done = _cli_build(tmp_path, args, seed)
        assert done.returncode == 0, done.stdout + done.stderr
    first = tree(tmp_path / "one")
    assert any(p.endswith(".svg") for p in first)
    for name in ("two", "three"):
        other = tree(tmp_path / name)
        assert sorted(other) == sorted(first)
        different = [p for p in first if first[p] != other[p]]
        assert not different, f"{name}: {different}"
    for path, data in first.items():
        if path.endswith((".html", ".md", ".xml", ".json")):
            assert str(tmp_path).encode() not in data, f"temporary path leaked into {path}"


@pytest.mark.slow
def test_a_second_build_renders_nothing_again(tmp_path: Path, small: Path) -> None:
    first = build(small, tmp_path / "a", cache_dir=tmp_path / "cache", static_charts=True)
    assert first.chart_stats.svgs_rendered == first.charts
    second = build(small, tmp_path / "b", cache_dir=tmp_path / "cache", static_charts=True)
    assert second.chart_stats.svgs_rendered == 0
    assert second.chart_stats.specs_built == 0
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


# --------------------------------------------------------------------------- output


@pytest.mark.slow
def test_an_invalid_spec_leaves_the_previous_site_alone(tmp_path: Path, small: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(small, specs)
    output = tmp_path / "site"
    build(specs, output)
    before = tree(output)
    (specs / "cases" / "broken.yaml").write_text(
        "roofgen: 1\nkind: case\nid: broken\ntitle: Broken\nmachines: [nowhere]\n"
        "kernels: []\nvariants: []\n",
        encoding="utf-8",
    )
    result = build_site([specs], make_settings(tmp_path), output, cache_dir=tmp_path / "cache")
    assert not result.ok
    assert any(p.severity == "error" for p in result.problems)
    assert tree(output) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "site", "specs"]

    status = main(["build", str(specs), "-q", "-o", str(output), "--cache-dir",
                   str(tmp_path / "cache")])  # fmt: skip
    assert status == 1
    assert tree(output) == before


@pytest.mark.slow
def test_a_hostile_tag_is_rejected_before_anything_is_written(tmp_path: Path) -> None:
    specs = write_specs(
        tmp_path / "specs",
        {
            "machines/tiny.yaml": TINY,
            "cases/alpha.yaml": ALPHA.replace("tags: [fusion, demo]", 'tags: ["<script>"]'),
        },
    )
    result = build_site([specs], make_settings(tmp_path), tmp_path / "site")
    assert not result.ok
    assert any("tags" in p.path for p in result.problems)
    assert not (tmp_path / "site").exists()


@pytest.mark.slow
def test_refuses_to_replace_a_folder_it_did_not_write(tmp_path: Path, small: Path) -> None:
    output = tmp_path / "mine"
    output.mkdir()
    (output / "notes.txt").write_text("keep me", encoding="utf-8")
    result = build_site([small], make_settings(tmp_path), output, cache_dir=tmp_path / "c")
    assert not result.ok
    assert "was not written by roofgen" in result.problems[-1].message
    assert (output / "notes.txt").read_text(encoding="utf-8") == "keep me"


@pytest.mark.slow
def test_an_interrupted_build_keeps_the_previous_site(
    tmp_path: Path, small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "site"
    build(small, output)
    before = tree(output)

    def interrupt(*args: Any, **kwargs: Any) -> list[str]:
        raise KeyboardInterrupt

    monkeypatch.setattr("roofgen.site.build.run_mkdocs", interrupt)
    with pytest.raises(KeyboardInterrupt):
        build_site([small], make_settings(tmp_path), output, cache_dir=small.parent / "cache")
    assert tree(output) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site.")]


@pytest.mark.slow
def test_markdown_only(tmp_path: Path, small: Path) -> None:
    output = tmp_path / "docs"
    build(small, output, markdown_only=True, static_charts=True)
    files = tree(output)
    assert not [p for p in files if p.endswith(".html")]
    for page in ("index.md", "cases/alpha/index.md", "cases/beta/index.md",
                 "machines/tiny/index.md", "method/index.md", "tags/index.md",
                 "operators/index.md", "bindings/index.md"):  # fmt: skip
        assert page in files, page
    assert "assets/javascripts/roofgen-vega.js" in files
    assert "assets/javascripts/roofgen-charts.js" in files
    svgs = [p for p in files if p.startswith("assets/charts/") and p.endswith(".svg")]
    # alpha and beta: roofline, every resource, precision; the machine: roofline, ceilings;
    # the home page: every case's speedups
    assert len(svgs) == 9
    case = files["cases/alpha/index.md"].decode()
    for svg in re.findall(r"\((\.\./\.\./assets/charts/[0-9a-f]+\.svg)\)", case):
        assert (output / "cases" / "alpha" / svg).resolve().is_file()


@pytest.mark.slow
def test_the_caller_environment_is_restored(
    tmp_path: Path, small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.delenv("NO_MKDOCS_2_WARNING", raising=False)
    before = dict(os.environ)
    build(small, tmp_path / "site")
    assert dict(os.environ) == before


@pytest.mark.slow
def test_quiet_build_prints_nothing(
    tmp_path: Path, small: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    status = main(["build", str(small), "-q", "-o", str(tmp_path / "site"),
                   "--cache-dir", str(tmp_path / "cache")])  # fmt: skip
    assert status == 0
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    status = main(["build", str(small), "-o", str(tmp_path / "site"),
                   "--cache-dir", str(tmp_path / "cache")])  # fmt: skip
    out, err = capfd.readouterr()
    assert status == 0
    assert out.strip() == f"open {tmp_path / 'site' / 'index.html'}"
    assert "sitemap" in err
    assert "Material for MkDocs" not in out + err


@pytest.mark.slow
def test_site_settings_are_allowlisted_and_escaped(tmp_path: Path, small: Path) -> None:
    (tmp_path / "extra.css").write_text(".x { color: red; }\n", encoding="utf-8")
    (tmp_path / "about.md").write_text("# About us\n\nHello.\n", encoding="utf-8")
    (tmp_path / "logo.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    (tmp_path / "roofgen.toml").write_text(
        "[site]\n"
        'name = "Perf <script>alert(1)</script> \\"team\\""\n'
        'description = "Cases & notes"\n'
        'copyright = "<b>us</b>"\n'
        'url = "https://perf.example.com/"\n'
        'logo = "logo.svg"\n'
        'extra_css = ["extra.css"]\n'
        'extra_pages = ["about.md"]\n'
        'features = ["navigation.tabs", "search.suggest"]\n'
        '[site.palette]\nscheme = "slate"\nprimary = "indigo"\n',
        encoding="utf-8",
    )
    settings = load_settings(tmp_path)
    result = build_site([small], settings, tmp_path / "out", cache_dir=tmp_path / "cache",
                        strict=True)  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    assert not result.notes  # site.url is set: the sitemap has pages
    site = tmp_path / "out"
    home = (site / "index.html").read_text(encoding="utf-8")
    page = Page(home)
    assert "<script>alert" not in home and "<b>us</b>" not in home
    assert "alert(1)" in page.title and "<" not in page.title
    assert 'data-md-color-scheme="slate"' in home
    assert (site / "assets" / "images" / "logo.svg").is_file()
    assert any(
        t == "link" and a.get("href", "").endswith("extra-1-extra.css") for t, a in page.tags
    )
    assert (site / "pages" / "1-about.html").is_file()
    assert "https://perf.example.com/cases/alpha/index.html" in (site / "sitemap.xml").read_text()


# --------------------------------------------------------------------------- injection


def _assert_inert(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    page = Page(text)
    for tag, attrs in page.tags:
        events = [k for k in attrs if k.startswith("on")]
        assert not events, f"{path}: <{tag} {events}>"
        for key in ("href", "src", "action", "formaction", "xlink:href"):
            value = attrs.get(key, "").strip().lower()
            assert not value.startswith(("javascript:", "vbscript:", "data:text")), (
                f"{path}: <{tag} {key}={value!r}>"
            )
        if tag == "img":
            assert attrs.get("src") != "x", path
            assert "tracker.example" not in attrs.get("src", ""), path
        if tag == "script":
            assert not re.match(r"\s*(\w+:|//)", attrs.get("src", "")), (path, attrs)
    for body in page.scripts:
        assert "alert(" not in body, f"{path}: script runs {body[:80]!r}"
    assert "<" not in page.title, path


@pytest.mark.slow
def test_hostile_strings_never_become_live_html(tmp_path: Path) -> None:
    specs = write_specs(
        tmp_path / "specs", {"machines/evil.yaml": EVIL_MACHINE, "cases/evil.yaml": EVIL_CASE}
    )
    assert not check([specs]).failed(), [p.format() for p in check([specs]).problems]
    site = tmp_path / "site"
    build(specs, site)
    pages = html_pages(site)
    assert len(pages) >= 7
    for path in pages:
        _assert_inert(path)
    case = site / "cases" / "evil" / "index.html"
    text = parse(case).all_text()
    assert "{{ 7*7 }} a | b" in text and "49 a | b" not in text  # shown, never evaluated
    assert "<script>alert(1)</script>" in text  # shown as text
    assert "a | b" in text
    raw = case.read_text(encoding="utf-8")
    assert "<script>alert" not in raw and "<img src=x" not in raw
    assert '<a href="https://example.com" rel="noopener noreferrer">ok</a>' in raw  # links
    assert '<a href="https://example.com/issue/1">' in raw
    assert "https://example.com/a%20b%3Cscript%3E" in raw  # quoted, still a link
    assert "<blockquote>" in raw  # Markdown still works around the payloads
    # the chart data carries the strings as inert JSON
    chart = re.search(r'<template class="roofgen-chart-spec"[^>]*>(.*?)</template>', raw, re.S)
    assert chart and "<" not in chart.group(1)
    spec = json.loads(chart.group(1))
    lines = spec["title"]["text"]  # a long title is wrapped into lines
    assert " ".join([lines] if isinstance(lines, str) else lines).startswith("Evil <script>")
    # the nav and the window title show the title without markup characters
    assert parse(case).title.startswith(plain_text("Evil <script>alert(1)</script>"))
    assert plain_text("Evil <script>") in text


# --------------------------------------------------------------------------- escaping


def test_md_escape_neutralises_markdown_and_html() -> None:
    text = md_escape("a|b <i>x</i> `c` [l](javascript:1) {: .c} *e* _u_ #h\\ !\nnext")
    for raw in ("|", "<", ">", "`", "[", "]", "{", "}", "\n"):
        assert raw not in text, raw
    assert text.endswith("next")


def test_md_text_keeps_markdown_but_not_html_or_unsafe_links() -> None:
    out = md_text("**b** <script>x</script> [a](https://x.org) [b](javascript:y) `<code>`")
    assert "**b**" in out and "[a](https://x.org)" in out
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert "](javascript" not in out
    assert "`<code>`" in out  # code spans are escaped by Markdown itself
    assert md_text("> quote > more") == "> quote &gt; more"
    assert md_text("para\n{: onclick=x}") == "para\n&#123;: onclick=x&#125;"
    assert md_text("[r]: javascript:x") == "[r]&#58; javascript:x"
    assert md_text("[r]: https://x.org") == "[r]: https://x.org"
    assert md_text("![i](https://x.org/i.png)") == "&#33;[i](https://x.org/i.png)"


def test_safe_url_accepts_only_http_and_https() -> None:
    assert safe_url("https://x.org/a b") == "https://x.org/a%20b"
    assert safe_url("HTTP://x.org/(y)") == "HTTP://x.org/%28y%29"
    for bad in ("javascript:alert(1)", "//x.org", "/local", "data:text/html,x", "http://", ""):
        assert safe_url(bad) is None, bad


def test_recommendations_follow_the_verdict(small: Path) -> None:
    checked = check([small])
    assert checked.analysis is not None and checked.specs is not None
    names = resource_names(checked.specs.machines["tiny"])
    alpha = next(c for c in checked.analysis.cases if c.case.id == "alpha")
    scale = alpha.variants[0].launches[0]
    advice = recommendations(scale, names)
    assert advice[0].startswith("Already at 93% of the HBM roof: at most 1.08x")
    assert any("datasheet roofs the efficiency is 83%" in a for a in advice)
    beta = next(c for c in checked.analysis.cases if c.case.id == "beta")
    dense = beta.variants[0].launches[0]
    assert "Vector unit roof; beyond that only less arithmetic" in recommendations(dense, names)[0]
    without = recommendations(scale)  # ids when no names are given
    assert "memory.hbm" in without[0]


# --------------------------------------------------------------------------- chart, serve


@pytest.mark.slow
def test_chart_command_writes_each_format(tmp_path: Path, small: Path) -> None:
    for suffix in ("svg", "png", "html", "json"):
        out = tmp_path / f"alpha.{suffix}"
        status = main(["chart", str(small), "--kernel", "alpha/scale", "-o", str(out), "-q"])
        assert status == 0 and out.stat().st_size > 0, suffix
    spec = json.loads((tmp_path / "alpha.json").read_text(encoding="utf-8"))
    assert {p["variant"] for p in spec["datasets"]["points"]} == {"before"}
    svg = (tmp_path / "alpha.svg").read_text(encoding="utf-8")
    assert svg.startswith("<svg")
    size = re.search(r'<svg[^>]* width="(\d+)" height="(\d+)"', svg)
    assert size, "the SVG states its size"
    width, height, _, _ = read_png((tmp_path / "alpha.png").read_bytes())
    assert (width, height) == (2 * int(size.group(1)), 2 * int(size.group(2)))  # scale 2
    assert drawn_share((tmp_path / "alpha.png").read_bytes()) > 0.01
    out = tmp_path / "alpha.svg"
    assert main(["chart", str(small), "--kernel", "alpha/scale", "-o", str(out), "-q"]) == 1
    assert main(["chart", str(small), "--kernel", "alpha/scale/before", "-o", str(out),
                 "--force", "-q"]) == 0  # fmt: skip
    assert main(["chart", str(small), "--kernel", "alpha", "-o", str(tmp_path / "x.svg")]) == 2
    assert (
        main(["chart", str(small), "--kernel", "alpha/scale", "-o", str(tmp_path / "x.gif")]) == 2
    )
    assert main(["chart", str(small), "--kernel", "alpha/nope", "-o", str(tmp_path / "x.svg")]) == 1
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.slow
def test_serve_rebuilds_when_a_spec_changes(tmp_path: Path, small: Path) -> None:
    from roofgen.api import serve

    specs = tmp_path / "specs"
    shutil.copytree(small, specs)
    stop = threading.Event()
    urls: list[str] = []
    builds: list[BuildResult] = []
    thread = threading.Thread(
        target=serve,
        args=([specs], make_settings(tmp_path), tmp_path / "site"),
        kwargs={
            "port": 0,
            "interval": 0.2,
            "on_ready": urls.append,
            "on_build": builds.append,
            "stop": stop,
            "cache_dir": tmp_path / "cache",
        },
        daemon=True,
    )
    thread.start()
    try:
        _wait(lambda: urls, 120)
        with urllib.request.urlopen(urls[0] + "cases/alpha/", timeout=10) as response:
            assert "Alpha fusion" in response.read().decode()
        case = specs / "cases" / "alpha.yaml"
        case.write_text(case.read_text().replace("Alpha fusion", "Alpha renamed"))
        _wait(lambda: len(builds) >= 2, 120)
        assert builds[-1].ok
        with urllib.request.urlopen(urls[0] + "cases/alpha/", timeout=10) as response:
            assert "Alpha renamed" in response.read().decode()
        case.write_text("roofgen: 1\nkind: case\n")  # broken: the old site stays up
        _wait(lambda: len(builds) >= 3, 120)
        assert not builds[-1].ok
        with urllib.request.urlopen(urls[0] + "cases/alpha/", timeout=10) as response:
            assert "Alpha renamed" in response.read().decode()
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()


def _wait(condition: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
