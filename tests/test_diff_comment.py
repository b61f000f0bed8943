"""The PR comment of `roofgen diff`: a verdict at kernel level on its first line, commits,
threshold and versions on the next, a per-kernel table that GitHub renders as a table
(checked with cmarkgfm, GitHub's own cmark-gfm), text bars, an optional Mermaid chart,
and the comment kept as a golden file.

Regenerate the golden comment after an intended change of its text:
    ROOFGEN_REGEN_GOLDEN=1 pytest tests/test_diff_comment.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.pipeline import check
from roofgen.review.comment import MARKER, Options, Side, markdown, mermaid_label
from roofgen.review.diff import diff

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
GOLDEN = Path(__file__).parent / "golden" / "diff-comment.md"
REGEN = os.environ.get("ROOFGEN_REGEN_GOLDEN") == "1"


def _time(median_ms: float, spread_ms: float) -> str:
    return (f"{{median: {median_ms} ms, q1: {median_ms - spread_ms} ms, "
            f"q3: {median_ms + spread_ms} ms, warmup: 10, repeats: 100}}")  # fmt: skip


# kernel -> (base median ms, head median ms, spread of the quartiles around it, ms)
TIMES = {
    "rmsnorm": (1.27, 1.00, 0.01),  # 1.27 / 1.00 = 1.27x faster
    "attn": (1.10, 1.00, 0.01),  # 1.10x faster
    "up-proj": (0.92, 1.00, 0.01),  # 0.92x: 1.00 / 0.92 - 1 = 8.7% slower, over 5%
    "gate": (2.00, 1.98, 0.10),  # quartiles overlap: within noise
}


def _case(side: int, added: bool) -> str:
    kernels = [*TIMES, "down-proj"] if added else list(TIMES)
    times = {k: _time(TIMES[k][side], TIMES[k][2]) for k in TIMES} | {
        "down-proj": _time(2.44, 0.01)
    }
    launches = "".join(
        f"      - kernel: {k}\n        measurement:\n          time: {times[k]}\n"
        "          flops: {tensor: {fp16: 1.0e8 FLOP}}\n          bytes: {hbm: 1.2 GB}\n"
        for k in kernels
    )
    names = "".join(f"  - {{id: {k}, name: {k.upper()} kernel, operator: {{kind: elementwise}}}}\n"
                    for k in kernels)  # fmt: skip
    return (f"roofgen: 1\nkind: case\nid: mlp\ntitle: MLP block\nmachines: [seed]\n"
            f"kernels:\n{names}variants:\n  - id: fused\n    launches:\n{launches}")  # fmt: skip


def _write(folder: Path, side: int, added: bool) -> Path:
    folder.mkdir(parents=True)
    shutil.copy(MINIMAL / "machine.yaml", folder / "machine.yaml")
    (folder / "mlp.yaml").write_text(_case(side, added), encoding="utf-8")
    return folder


def _diff(tmp_path: Path, reverse: bool = False):
    base = _write(tmp_path / "base", 0, added=False)
    head = _write(tmp_path / "head", 1, added=True)
    shutil.copy(MINIMAL / "case.yaml", head / "pts.yaml")  # a new case at head
    sides = []
    for folder in (head, base) if reverse else (base, head):
        result = check([folder], display_root=tmp_path)
        assert not result.failed(), [p.format() for p in result.problems]
        sides.append((result.specs, result.analysis))
    return diff(sides[0][0], sides[0][1], sides[1][0], sides[1][1])


BASE = Side("git:main", "0123456789abcdef0123456789abcdef01234567")
HEAD = Side("git:" + "fedcba9876543210fedcba9876543210fedcba98",
            "fedcba9876543210fedcba9876543210fedcba98")  # fmt: skip
VERDICT = ("**roofgen diff**: 2 kernels faster: `rmsnorm` 1.27x, `attn` 1.10x; "
           "1 slower: `up-proj` 0.92x; 1 within noise or threshold; 1 kernel added; "
           "1 new case (threshold 5%)")  # fmt: skip


def test_the_first_line_names_the_faster_and_slower_kernels(tmp_path):
    text = markdown(_diff(tmp_path), BASE, HEAD, Options(version="9.9.9"))
    lines = text.splitlines()
    assert lines[0] == MARKER  # invisible once rendered: the verdict is the first line seen
    assert lines[1] == VERDICT
    # Commits shortened to 10 characters; a commit named by its object name is not repeated.
    assert lines[3] == ("`git:main` (0123456789) → fedcba9876 · threshold 5% · roofgen 9.9.9 · "
                        "machines: `seed` (the specs' own)")  # fmt: skip


def test_a_threshold_decides_what_counts(tmp_path):
    # At 9%: attn (10% faster) still counts; up-proj (1.00 / 0.92 - 1 = 8.7% slower) does not.
    text = markdown(_diff(tmp_path), BASE, HEAD, Options(threshold=0.09))
    assert text.splitlines()[1] == (
        "**roofgen diff**: 2 kernels faster: `rmsnorm` 1.27x, `attn` 1.10x; "
        "2 within noise or threshold; 1 kernel added; 1 new case (threshold 9%)"
    )
    row = next(line for line in text.splitlines() if line.startswith("| `up-proj` "))
    assert "| ▼ ░░ | under threshold |" in row  # light blocks: a move that does not count


def test_an_added_kernel_has_its_time_under_head_and_no_speedup(tmp_path):
    text = markdown(_diff(tmp_path), BASE, HEAD)
    row = next(line for line in text.splitlines() if line.startswith("| `down-proj` "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # kernel, case / variant, base, head, speedup, change, verdict, bound by, efficiency
    assert cells[:7] == ["`down-proj`", "`mlp` / `fused`", "—", "2.44 ms", "—", "", "added"]
    # and the variant that holds it changed (its launches differ), with both times
    assert "| `mlp` | `fused` | " in text
    assert "New cases: `pts`" in text
    # a variant of a new case: its time under head, no base time, no speedup; efficiency
    # 1.5 GB / 1.5 TB/s = 1 ms over 1.1 ms = 91%
    assert "| `pts` | `base` | — | 1.1 ms | — | added | 91% |" in text


def test_a_removed_kernel_has_its_time_under_base(tmp_path):
    text = markdown(_diff(tmp_path, reverse=True), HEAD, BASE)
    row = next(line for line in text.splitlines() if line.startswith("| `down-proj` "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:7] == ["`down-proj`", "`mlp` / `fused`", "2.44 ms", "—", "—", "", "removed"]
    assert "| `pts` | `base` | 1.1 ms | — | — | removed | 91% |" in text
    assert "1 kernel removed; 1 case removed (threshold 5%)" in text.splitlines()[1]


def test_rows_carry_text_bars_and_plain_words(tmp_path):
    text = markdown(_diff(tmp_path), BASE, HEAD)
    rows = {line.split(" | ")[0][2:]: line for line in text.splitlines() if line.startswith("| `")}
    # ln(1.27) / ln(1.05) = 4.9 -> 5 blocks; ln(1.10) / ln(1.05) = 1.95 -> 2;
    # ln(1 / 0.92) / ln(1.05) = 1.7 -> 2.
    assert "| ▲ █████ | faster |" in rows["`rmsnorm`"]
    assert "| ▲ ██ | faster |" in rows["`attn`"]
    assert "| ▼ ██ | **slower** |" in rows["`up-proj`"]
    assert "| ≈ | within noise |" in rows["`gate`"]
    # 1.27 ms -> 1 ms; the bound by the memory level's name, not its id
    assert "| 1.27 ms | 1 ms |" in rows["`rmsnorm`"]
    # 1.2 GB / 1.5 TB/s = 0.8 ms: 0.8 / 1.27 = 63% -> 0.8 / 1 = 80% of the HBM roof
    assert "| still hbm-bound | 63% → 80% |" in rows["`rmsnorm`"]  # the seed names it "hbm"


class _Tables(HTMLParser):
    """The tables of an HTML document: per table, its header row and body rows of cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _render(text: str) -> str:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options as CmarkOptions

    return cmarkgfm.github_flavored_markdown_to_html(text, options=CmarkOptions.CMARK_OPT_UNSAFE)


def test_github_renders_the_kernel_table_as_a_table(tmp_path):
    html = _render(markdown(_diff(tmp_path), BASE, HEAD))
    parser = _Tables()
    parser.feed(html)
    kernels = parser.tables[0]
    assert kernels[0] == ["kernel", "case / variant", "base", "head", "speedup (interval)",
                          "change", "verdict", "bound by", "efficiency"]  # fmt: skip
    assert all(len(row) == 9 for row in kernels)
    assert [row[0] for row in kernels[1:]] == ["rmsnorm", "attn", "up-proj", "gate", "down-proj"]
    assert kernels[1][4] == "1.27x (1.25–1.29)"  # 1.26 / 1.01 = 1.248, 1.28 / 0.99 = 1.293
    # Open, not folded: five rows are read at a glance.
    assert "<details" not in html.split("<table>")[1].split("</table>")[0]
    assert html.index("<table>") < html.index("<details>")


def test_a_hostile_variant_name_cannot_break_the_table(tmp_path):
    d = _diff(tmp_path)
    # A side named like a table row with a mention and a link.
    side = Side("git:x| a | b |\n@octocat [x](https://evil.test)")
    html = _render(markdown(d, side, HEAD))
    assert "<a " not in html.split("<table>")[0]
    # only inside code, where GitHub links no mention
    assert "@octocat" not in re.sub(r"<code>.*?</code>", "", html, flags=re.S)


def test_the_mermaid_chart_has_one_series_and_safe_labels(tmp_path):
    text = markdown(_diff(tmp_path), BASE, HEAD, Options(mermaid=True))
    block = text.split("```mermaid\n")[1].split("```")[0]
    assert block.splitlines()[0] == "xychart-beta"
    assert '  x-axis ["rmsnorm", "attn", "up-proj", "gate"]' in block
    assert len([line for line in block.splitlines() if line.strip().startswith("bar")]) == 1
    assert "  bar [1.270, 1.100, 0.920, 1.010]" in block  # 2.00 / 1.98 = 1.0101
    # each of " ] LF % % { and } % % and ` becomes _
    assert mermaid_label('x"]\n%%{init}%% `') == "x______init___ _"


def test_links_to_case_pages_when_the_site_url_is_known(tmp_path):
    text = markdown(_diff(tmp_path), BASE, HEAD, Options(site_url="https://perf.test/site/"))
    assert "[`mlp`](https://perf.test/site/cases/mlp/index.html) / `fused`" in text


def test_the_comment_matches_its_golden_file(tmp_path):
    text = markdown(_diff(tmp_path), BASE, HEAD, Options(version="0.0.0", mermaid=True,
                                                         site_url="https://perf.test"))  # fmt: skip
    if REGEN:
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.is_file(), f"missing {GOLDEN}; run ROOFGEN_REGEN_GOLDEN=1 pytest {__file__}"
    assert text == GOLDEN.read_text(encoding="utf-8"), (
        f"the comment changed; if intended: ROOFGEN_REGEN_GOLDEN=1 pytest {__file__}"
    )


# ------------------------------------------------------------------- through git and CI

IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t")


def _git(repo: Path, *args: str) -> str:
    run = subprocess.run(["git", *IDENTITY, *args], cwd=repo, text=True, capture_output=True,
                         check=True)  # fmt: skip
    return run.stdout.strip()


def _repo(tmp_path: Path) -> Path:
    """A repository on branch master, no remote: the base commit, then the head commit
    (the same change as :func:`_diff`'s)."""
    repo = tmp_path / "repo"
    _write(repo / "specs", 0, added=False)
    _git(repo, "init", "-q", "-b", "master")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    (repo / "specs" / "mlp.yaml").write_text(_case(1, added=True), encoding="utf-8")
    shutil.copy(MINIMAL / "case.yaml", repo / "specs" / "pts.yaml")  # a new case at head
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "head")
    return repo


def test_a_two_commit_change_through_the_cli_and_the_job_summary(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    base, head = _git(repo, "rev-parse", "HEAD~1"), _git(repo, "rev-parse", "HEAD")
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.chdir(repo)
    status = main(["diff", f"git:{base}", f"git:{head}", "--format", "markdown",
                   "-o", "roofgen-comment.md"])  # fmt: skip
    assert status == 0, capsys.readouterr().err
    comment = (repo / "roofgen-comment.md").read_text(encoding="utf-8")
    assert comment.splitlines()[1] == VERDICT
    assert comment.splitlines()[3].startswith(f"{base[:10]} → {head[:10]} · threshold 5% · ")
    # the same text in the job summary, after what an earlier step wrote
    assert summary.read_text(encoding="utf-8") == "earlier step\n\n" + comment
    # JSON and text say the same, with the commits and the threshold
    assert main(["diff", "git:HEAD~1", "git:HEAD", "--format", "json", "--threshold", "9"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["base_commit"], doc["head_commit"], doc["threshold"]) == (base, head, 0.09)
    assert doc["kernels"]["faster"] == ["rmsnorm", "attn"]
    assert doc["kernels"]["slower"] == []  # 8.7% slower: under 9%
    assert doc["kernels"]["unchanged"] == ["up-proj", "gate"]
    assert doc["kernels"]["added"] == ["down-proj"]
    assert main(["diff", "git:HEAD~1", "git:HEAD", "--format", "text"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (f"git:HEAD~1 ({base[:10]}) -> git:HEAD ({head[:10]}): "
                     + VERDICT.removeprefix("**roofgen diff**: ").replace("`", ""))  # fmt: skip


def test_an_unknown_branch_in_a_master_repository_without_origin(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    assert main(["diff", "git:main", "git:HEAD"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "git:main: no such revision in this repository; this repository's branch is master: "
        "write git:master; this repository has no remote to fetch it from (its branches: master)"
    )
    assert "origin" not in err
    assert main(["diff", "git:origin/main", "git:HEAD"]) == 1
    err = capsys.readouterr().err
    assert "there is no remote named origin;" in err and "write git:master" in err
    _git(repo, "remote", "add", "upstream", str(tmp_path / "elsewhere"))
    assert main(["diff", "git:main", "git:HEAD"]) == 1
    err = capsys.readouterr().err
    assert "there is no remote named origin (remotes here: upstream)" in err
    assert re.search(r"write git:master; there is no remote", err)


def test_the_diff_chart_names_levels_and_draws_base_hollow(tmp_path, monkeypatch, capsys):
    pytest.importorskip("vl_convert")
    base = _write(tmp_path / "base", 0, added=False)
    head = _write(tmp_path / "head", 1, added=True)
    for folder in (base, head):  # the level's display name differs from its id
        machine = folder / "machine.yaml"
        machine.write_text(
            machine.read_text().replace("  - id: hbm\n", "  - id: hbm\n    name: HBM2e\n")
        )
    monkeypatch.chdir(tmp_path)
    assert main(["diff", "base", "head", "-o", "report.md"]) == 0, capsys.readouterr().err
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert (
        "Roofline charts of the changed kernels (base hollow, head filled): `report-charts/`"
        in report
    )
    assert "| still HBM2e-bound |" in report  # the bound in the level's name, as on the chart
    svg = (tmp_path / "report-charts" / "mlp.svg").read_text(encoding="utf-8")
    assert "base: hollow points; head: filled" in svg
    assert ">HBM2e<" in svg and ">hbm<" not in svg  # the legend names the level as the roof does


def test_base_points_are_hollow_and_head_points_filled():
    from roofgen.review.charts import hollow_base as _hollow_base

    spec = {"layer": [{"name": "launches", "mark": {"type": "point"},
                       "encoding": {"color": {"field": "role", "legend": {"title": "Level"}}}},
                      {"name": "roofs", "encoding": {"color": {"field": "role"}}}]}  # fmt: skip
    points, roofs = _hollow_base(spec)["layer"]
    base = "datum.variant === 'base'"
    assert points["encoding"]["fillOpacity"] == {
        "condition": {"test": base, "value": 0},
        "value": 1,
    }
    assert points["encoding"]["strokeWidth"] == {"condition": {"test": base, "value": 1.5},
                                                 "value": 0}  # fmt: skip
    assert points["encoding"]["stroke"] == {"field": "role", "legend": None}  # one legend only
    assert roofs == {"name": "roofs", "encoding": {"color": {"field": "role"}}}
