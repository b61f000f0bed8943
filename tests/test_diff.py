"""`roofgen diff`: verdicts against the noise, roof changes apart, git revisions, limits."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.review.report import COMMENT_LIMIT, MARKER

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
TIME = "time: {median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}"


def _sides(tmp_path: Path, head_time: str | None = None, bandwidth: str | None = None):
    base = tmp_path / "base"
    head = tmp_path / "head"
    shutil.copytree(MINIMAL, base)
    shutil.copytree(MINIMAL, head)
    case = head / "case.yaml"
    assert TIME in case.read_text()
    if head_time:
        case.write_text(case.read_text().replace(TIME, head_time))
    if bandwidth:
        machine = head / "machine.yaml"
        machine.write_text(machine.read_text().replace("bandwidth: 1.5 TB/s", bandwidth))
    return base, head


def run(argv, capsys, monkeypatch, cwd):
    monkeypatch.chdir(cwd)
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_significant_regression_fails_beyond_the_threshold(tmp_path, capsys, monkeypatch):
    slower = "time: {median: 1.3 ms, q1: 1.29 ms, q3: 1.31 ms, warmup: 10, repeats: 100}"
    _sides(tmp_path, slower)
    status, out, err = run(["diff", "base", "head"], capsys, monkeypatch, tmp_path)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == MARKER
    # 1.1 ms -> 1.3 ms: 1.1 / 1.3 = 0.846x; intervals 1.09/1.31 = 0.832, 1.12/1.29 = 0.868.
    assert lines[1] == "**roofgen diff**: 1 kernel slower: `low` 0.85x (threshold 5%)"
    assert lines[3].startswith("`base` → `head` · threshold 5% · roofgen ")
    # ln(1.3 / 1.1) / ln(1.05) = 3.4: three blocks.
    assert (
        "| `low` | `pts` / `base` | 1.1 ms | 1.3 ms | 0.85x (0.83–0.87) | ▼ ███ | **slower** |"
        in out
    )
    assert "#### Kernels (1 changed)" in out
    # 18% slower: fails at 10%, passes at 20%.
    argv = ["diff", "base", "head", "--format", "json", "--fail-on-regression"]
    assert run([*argv, "10"], capsys, monkeypatch, tmp_path)[0] == 3
    status, out, err = run([*argv, "20"], capsys, monkeypatch, tmp_path)
    assert status == 0
    doc = json.loads(out)
    assert doc["counts"] == {"faster": 0, "within noise": 0, "regression": 1, "unknown noise": 0}
    change = doc["launches"][0]
    assert change["speedup"]["value"] == pytest.approx(1.1 / 1.3)
    assert change["speedup"]["low"] == pytest.approx(1.09 / 1.31)
    assert change["speedup"]["high"] == pytest.approx(1.12 / 1.29)


def test_overlapping_intervals_are_within_noise_and_never_fail(tmp_path, capsys, monkeypatch):
    noisy = "time: {median: 1.12 ms, q1: 1.05 ms, q3: 1.2 ms, warmup: 10, repeats: 100}"
    _sides(tmp_path, noisy)
    status, out, _ = run(["diff", "base", "head", "--format", "json", "--fail-on-regression",
                          "0"], capsys, monkeypatch, tmp_path)  # fmt: skip
    assert status == 0
    assert json.loads(out)["variants"][0]["verdict"] == "within noise"


def test_roof_changes_are_reported_apart_from_kernel_changes(tmp_path, capsys, monkeypatch):
    _sides(tmp_path, bandwidth="bandwidth: 2 TB/s")
    status, out, _ = run(["diff", "base", "head"], capsys, monkeypatch, tmp_path)
    assert status == 0
    assert "### Roof changes (machines, not kernels)" in out
    assert "| `seed` | memory.hbm (datasheet) | 1.5 TB/s | 2 TB/s |" in out
    status, out, _ = run(["diff", "base", "head", "--format", "json"], capsys, monkeypatch,
                         tmp_path)  # fmt: skip
    doc = json.loads(out)
    assert doc["launches"][0]["roofs_moved"] is True
    assert doc["launches"][0]["verdict"] == "within noise"  # the time did not move


def test_unchanged_specs(tmp_path, capsys, monkeypatch):
    _sides(tmp_path)
    status, out, _ = run(["diff", "base", "head"], capsys, monkeypatch, tmp_path)
    assert status == 0 and "No kernel or roof changed." in out


def test_report_fits_a_pull_request_comment(tmp_path, capsys, monkeypatch):
    base, head = _sides(tmp_path)
    case = (base / "case.yaml").read_text()
    many = case.split("variants:")[0] + "variants:\n" + "".join(
        f"  - id: v{i}\n    launches:\n" + "".join(
            f"      - kernel: low\n        measurement:\n          {TIME}\n"
            "          flops: {tensor: {fp16: 1.5e9 FLOP}}\n          bytes: {hbm: 1.5 GB}\n"
            for _ in range(20))
        for i in range(60))  # fmt: skip
    (base / "case.yaml").write_text(many)
    slower = "time: {median: 1.3 ms, q1: 1.29 ms, q3: 1.31 ms, warmup: 10, repeats: 100}"
    (head / "case.yaml").write_text(many.replace(TIME, slower))
    status, out, _ = run(["diff", "base", "head"], capsys, monkeypatch, tmp_path)
    assert status == 0
    assert len(out) < COMMENT_LIMIT
    assert re.search(r"\d+ more kernels omitted to fit a comment", out)
    assert "<details><summary>Kernels (1200 changed)</summary>" in out  # folded: over 20 rows
    assert "1200 kernels slower" in out.splitlines()[1]


def test_invalid_side_is_status_1(tmp_path, capsys, monkeypatch):
    base, head = _sides(tmp_path)
    (head / "case.yaml").write_text("roofgen: 1\nkind: case\n")
    status, _, err = run(["diff", "base", "head"], capsys, monkeypatch, tmp_path)
    assert status == 1 and "head: the specs are invalid" in err
    assert run(["diff", "base", "nowhere"], capsys, monkeypatch, tmp_path)[0] == 1


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_git_revisions_and_a_shallow_clone(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(MINIMAL, repo / "specs")
    _git(repo, "init", "-q")
    _git(
        repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base", "--allow-empty"
    )
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "specs")
    case = repo / "specs" / "case.yaml"
    faster = "time: {median: 0.9 ms, q1: 0.89 ms, q3: 0.91 ms, warmup: 10, repeats: 100}"
    case.write_text(case.read_text().replace(TIME, faster))
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "faster")
    status, out, err = run(["diff", "git:HEAD~1", "git:HEAD", "-o", "report.md"], capsys,
                           monkeypatch, repo)  # fmt: skip
    assert status == 0, err
    report = (repo / "report.md").read_text()
    assert "1 kernel faster: `low` 1.22x (threshold 5%)" in report  # 1.1 / 0.9
    assert (repo / "report-charts" / "pts.svg").read_text().startswith("<svg")
    # The first commit has no specs folder: every case is new.
    status, out, _ = run(["diff", "git:HEAD~2", "specs"], capsys, monkeypatch, repo)
    assert status == 0 and "New cases: `pts`" in out
    # The working tree is not touched by reading revisions.
    assert "0.9 ms" in case.read_text()
    status, _, err = run(["diff", "git:no-such-rev", "specs"], capsys, monkeypatch, repo)
    assert status == 1 and "no such revision" in err
    assert "fetch origin no-such-rev" not in err  # a revision is never echoed as a command
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(shallow)],
                   check=True, capture_output=True)  # fmt: skip
    status, _, err = run(["diff", "git:HEAD~1", "specs"], capsys, monkeypatch, shallow)
    assert status == 1 and "shallow clone" in err and "fetch-depth: 0" in err


# --------------------------------------------------------------------------- inert text
# A pull request can change what the report quotes: the settings' URLs, the folder and
# ref names. Nothing it quotes may ping a person or team, link an issue, or add markup.

HOSTILE_PREVIEW = "https://x.test/@org/admins) please merge #1 <img src=x onerror=alert(1)>"


def _outside_code(markdown: str) -> str:
    """The text of ``markdown`` outside its code spans (where GitHub links mentions)."""
    return re.sub(r"(`+).*?\1", "", markdown)


def test_report_quotes_no_mention_no_issue_reference_and_no_markup(tmp_path, capsys, monkeypatch):
    slower = "time: {median: 1.3 ms, q1: 1.29 ms, q3: 1.31 ms, warmup: 10, repeats: 100}"
    base, head = _sides(tmp_path, head_time=slower)
    (tmp_path / "roofgen.toml").write_text(
        f'[site]\nurl = "https://perf.test/@org/team"\npreview_url = "{HOSTILE_PREVIEW}"\n'
    )
    named = tmp_path / "@octocat `#2`"
    base.rename(named)
    status, out, _ = run(["diff", named.name, "head"], capsys, monkeypatch, tmp_path)
    assert status == 0
    plain = _outside_code(out)
    assert not re.search(r"[@#][\w-]", plain), plain
    assert "<img" not in out and "](" not in out.split("Preview of the site:")[1].split("\n")[0]
    # The folder's name is one code span, fenced by more backticks than it holds (and
    # padded, as it ends with one).
    assert out.splitlines()[3].startswith("`` @octocat `#2` `` → `head` · threshold 5%")
    # The link to the case page still works, its @ percent-encoded.
    assert "(https://perf.test/%40org/team/cases/pts/index.html)" in out


def test_every_table_is_cut_to_fit_a_comment(tmp_path, capsys, monkeypatch):
    base, head = _sides(tmp_path)
    case = (base / "case.yaml").read_text()
    variants = "".join(
        f"  - id: variant-with-a-long-name-{i:04d}\n    launches:\n      - kernel: low\n"
        f"        measurement:\n          {TIME}\n"
        "          flops: {tensor: {fp16: 1.5e9 FLOP}}\n          bytes: {hbm: 1.5 GB}\n"
        for i in range(1500)
    )
    many = case.split("variants:")[0] + "variants:\n" + variants
    (base / "case.yaml").write_text(many)
    slower = "time: {median: 1.3 ms, q1: 1.29 ms, q3: 1.31 ms, warmup: 10, repeats: 100}"
    (head / "case.yaml").write_text(many.replace(TIME, slower))
    status, out, _ = run(["diff", "base", "head"], capsys, monkeypatch, tmp_path)
    assert status == 0
    assert len(out) < COMMENT_LIMIT
    shown = sum(1 for line in out.splitlines() if line.startswith("| `low` | `pts` / `variant-"))
    omitted = int(re.search(r"(\d+) more kernels omitted to fit a comment", out).group(1))
    assert 0 < shown < 1500 and shown + omitted == 1500
    assert "1500 kernels slower" in out.splitlines()[1]
