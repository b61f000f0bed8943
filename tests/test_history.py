"""`roofgen history`: a case's launches over the commits that changed it, read from
real git repositories; expected times and efficiencies computed by hand."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.review.history import GitReadError, history
from roofgen.review.history_report import history_csv, history_json, history_text

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
TIME = "time: {median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}"
SLOWER = "time: {median: 2.2 ms, q1: 2.19 ms, q3: 2.21 ms, warmup: 10, repeats: 100}"
# The minimal case: 1.5e9 FLOP on a 312 TFLOP/s roof (4.8 us) and 1.5 GB over a
# 1.5 TB/s HBM roof (1 ms): the bound is 1 ms, HBM binds.
BOUND_S = 1.5e9 / 1.5e12


def _git(repo: Path, *args: str, when: int = 0) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": f"{1767225600 + when} +0000",
           "GIT_COMMITTER_DATE": f"{1767225600 + when} +0000"}  # fmt: skip
    run = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                         cwd=repo, env=env, capture_output=True, check=True)  # fmt: skip
    return run.stdout.decode().strip()


def _commit(repo: Path, message: str, when: int) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message, when=when)
    return _git(repo, "rev-parse", "HEAD")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Commits: the minimal specs; a README (no spec); the case twice as slow; the
    machine's HBM twice as fast."""
    repo = tmp_path / "repo"
    shutil.copytree(MINIMAL, repo / "specs")
    _git(repo, "init", "-q")
    _commit(repo, "Add the case", 0)
    (repo / "README").write_text("not a spec\n")
    _commit(repo, "A readme", 60)
    _edit(repo / "specs" / "case.yaml", TIME, SLOWER)
    _commit(repo, "Slower", 120)
    _edit(repo / "specs" / "machine.yaml", "1.5 TB/s", "3 TB/s")
    _commit(repo, "Faster HBM", 180)
    return repo


def _run(repo: Path, **kw) -> object:
    return history(repo, [repo / "specs"], **kw)


def test_every_commit_that_changed_the_case_hand_computed(repo):
    found = _run(repo)
    assert [c.subject for c in found.commits] == ["Add the case", "Slower", "Faster HBM"]
    assert found.commits[0].date == "2026-01-01T00:00:00Z"
    assert found.commits[2].date == "2026-01-01T00:03:00Z"
    points = [c.cases[0].points[0] for c in found.commits]
    assert [p.time_s for p in points] == pytest.approx([1.1e-3, 2.2e-3, 2.2e-3])
    # Efficiency: bound / measured; the faster machine halves the HBM bound.
    assert [p.efficiency for p in points] == pytest.approx(
        [BOUND_S / 1.1e-3, BOUND_S / 2.2e-3, (1.5e9 / 3e12) / 2.2e-3]
    )
    assert {p.binding for p in points} == {"memory.hbm"}
    assert all(c.cases[0].case == "pts" and c.cases[0].status == "analysed" for c in found.commits)


def test_text_json_and_csv_agree(repo):
    found = _run(repo)
    text = history_text(found)
    assert "2026-01-01 " in text and "pts/low/base: 1.1 ms, 90.9% efficiency, memory.hbm" in text
    doc = history_json(found)
    assert doc["commits"][1]["cases"][0]["launches"][0]["time_s"] == pytest.approx(2.2e-3)
    assert len(doc["commits"][0]["short"]) == 12
    rows = list(csv.DictReader(io.StringIO(history_csv(found))))
    assert [r["subject"] for r in rows] == ["Add the case", "Slower", "Faster HBM"]
    assert float(rows[0]["efficiency"]) == pytest.approx(1 / 1.1)


def test_selection_since_and_last(repo):
    first = _git(repo, "rev-list", "--max-parents=0", "HEAD")
    assert [c.subject for c in _run(repo, since=first).commits] == ["Slower", "Faster HBM"]
    assert [c.subject for c in _run(repo, last=1).commits] == ["Faster HBM"]
    assert _run(repo, case="other").commits == ()
    assert _run(repo, case="pts", kernel="nothing").commits == ()
    assert len(_run(repo, case="pts", kernel="low", variant="base").commits) == 3


def test_a_shallow_clone_says_how_to_deepen_it(repo, tmp_path, monkeypatch, capsys):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)],
                   check=True, capture_output=True)  # fmt: skip
    found = _run(clone)
    assert found.shallow
    monkeypatch.chdir(clone)
    assert main(["history"]) == 0
    err = capsys.readouterr().err
    assert "shallow clone" in err and "git fetch --unshallow" in err and "fetch-depth: 0" in err
    assert not _run(repo).shallow


def test_a_subject_with_escape_sequences_is_neutralised(repo, monkeypatch, capsys):
    evil = "Retitle \x1b]0;owned\x07 and clear \x1b[2J\x1b[31mred \u202eevil"
    _edit(repo / "specs" / "case.yaml", SLOWER, TIME)
    _commit(repo, evil, 240)
    monkeypatch.chdir(repo)
    assert main(["history", "-n", "1"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "Retitle \\x1b]0;owned\\x07 and clear \\x1b[2J\\x1b[31mred \\u202eevil" in out
    assert main(["history", "-n", "1", "--format", "json"]) == 0
    raw = capsys.readouterr().out
    assert "\x1b" not in raw  # escaped by the JSON encoder
    assert json.loads(raw)["commits"][0]["subject"] == evil
    assert main(["history", "-n", "1", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "Retitle \\x1b]0;owned" in out


def test_a_subject_a_spreadsheet_would_run_is_written_as_text(repo):
    _edit(repo / "specs" / "case.yaml", SLOWER, TIME)
    _commit(repo, '=HYPERLINK("http://evil.example","x")', 240)
    rows = list(csv.DictReader(io.StringIO(history_csv(_run(repo, last=1)))))
    assert rows[0]["subject"] == '\'=HYPERLINK("http://evil.example","x")'


def test_a_commit_in_an_older_spec_format_is_migrated(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(MINIMAL, repo / "specs")
    case = repo / "specs" / "case.yaml"
    _edit(case, "roofgen: 1", "roofgen: 0")
    _edit(case, "bytes: {hbm: 1.5 GB}", "bytes_hbm: 1.5 GB")
    _git(repo, "init", "-q")
    _commit(repo, "Version 0", 0)
    found = _run(repo)
    point = found.commits[0].cases[0].points[0]
    assert found.commits[0].cases[0].status == "analysed"
    assert point.efficiency == pytest.approx(BOUND_S / 1.1e-3)
    assert case.read_text().startswith("roofgen: 0")  # migrated in memory only


def test_a_cache_hit_gives_the_same_output(repo, tmp_path):
    cache = tmp_path / "cache"
    first = _run(repo, cache_dir=cache)
    assert first.analysed == 3
    (stored,) = cache.glob("history-*.json")
    assert len(json.loads(stored.read_bytes())["entries"]) == 3
    again = _run(repo, cache_dir=cache)
    assert again.analysed == 0
    assert history_json(again) == history_json(first)
    assert history_text(again) == history_text(first)


def test_a_cache_entry_of_another_shape_is_a_miss(repo, tmp_path):
    cache = tmp_path / "cache"
    first = _run(repo, cache_dir=cache)
    (stored,) = cache.glob("history-*.json")
    entries = json.loads(stored.read_bytes())["entries"]
    bad = {"format": 1, "status": "analysed", "points": [[1]], "problems": []}
    stored.write_text(json.dumps({"format": 1, "entries": dict.fromkeys(entries, bad)}))
    again = _run(repo, cache_dir=cache)
    assert again.analysed == 3
    assert history_json(again) == history_json(first)


def test_a_spec_that_fails_the_check_is_reported_for_its_commit(repo, monkeypatch, capsys):
    _edit(repo / "specs" / "case.yaml", "bytes: {hbm: 1.5 GB}", "bytes: {hbm: 1.5 parsecs}")
    _commit(repo, "Broken", 240)
    _edit(repo / "specs" / "case.yaml", "bytes: {hbm: 1.5 parsecs}", "bytes: {hbm: 1.5 GB}")
    _commit(repo, "Fixed", 300)
    found = _run(repo)
    broken, fixed = found.commits[-2:]
    assert broken.cases[0].status == "invalid" and broken.cases[0].points == ()
    assert any("specs/case.yaml:" in p and "parsecs" in p for p in broken.cases[0].problems)
    assert fixed.cases[0].status == "analysed"
    monkeypatch.chdir(repo)
    assert main(["history"]) == 0
    assert "pts: does not pass the check" in capsys.readouterr().out


def test_a_removed_case_is_reported_removed(repo):
    (repo / "specs" / "case.yaml").unlink()
    _commit(repo, "Drop it", 240)
    last = _run(repo).commits[-1]
    assert (last.subject, last.cases[0].status) == ("Drop it", "removed")


def test_outside_a_repository_is_an_error_not_a_traceback(tmp_path, monkeypatch, capsys):
    shutil.copytree(MINIMAL, tmp_path / "specs")
    with pytest.raises(GitReadError):
        _run(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["history"]) == 1
    assert "not inside a git repository" in capsys.readouterr().err


def test_the_chart_has_a_point_per_commit_and_launch(repo, monkeypatch):
    monkeypatch.chdir(repo)
    assert main(["history", "pts", "--chart", "history.json"]) == 0
    spec = json.loads((repo / "history.json").read_text())
    points = spec["datasets"]["points"]
    assert [p["subject"] for p in points] == ["Add the case", "Slower", "Faster HBM"]
    assert [p["y"] for p in points] == pytest.approx([1.1e-3, 2.2e-3, 2.2e-3])
    assert [lab["label"] for lab in spec["datasets"]["labels"]] == [
        "Add the case", "Slower", "Faster HBM",
    ]  # fmt: skip


def _case_page(docs: Path) -> str:
    pages = [p for p in docs.rglob("*.md") if "pts" in p.parts]
    assert len(pages) == 1, sorted(str(p) for p in docs.rglob("*.md"))
    return pages[0].read_text("utf-8")


def test_the_site_has_a_history_chart_per_case_with_subjects_escaped(repo, tmp_path, make_settings):
    from roofgen.api import build_site

    _edit(repo / "specs" / "case.yaml", SLOWER, TIME)
    _commit(repo, "</script><script>alert(1)</script> \x1b[31m", 240)
    docs = tmp_path / "docs"
    result = build_site([repo / "specs"], make_settings(repo), docs, markdown_only=True,
                        cache_dir=tmp_path / "c")  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    page = _case_page(docs)
    assert "## History" in page
    assert "Faster HBM" in page and "Add the case" in page
    assert "<script>alert" not in page and "\x1b" not in page
    assert "\\\\x1b[31m" in page  # the escape, as text in the chart's JSON


def test_the_site_history_setting_turns_it_off(repo, tmp_path, make_settings):
    from roofgen.api import build_site

    docs = tmp_path / "docs"
    settings = make_settings(repo, history=False)
    result = build_site([repo / "specs"], settings, docs, markdown_only=True,
                        cache_dir=tmp_path / "c")  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    assert "## History" not in _case_page(docs)


def test_a_site_outside_git_has_no_history(tmp_path, make_settings):
    from roofgen.api import build_site

    shutil.copytree(MINIMAL, tmp_path / "specs")
    docs = tmp_path / "docs"
    result = build_site([tmp_path / "specs"], make_settings(tmp_path), docs, markdown_only=True,
                        cache_dir=tmp_path / "c")  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    assert "## History" not in _case_page(docs)


@pytest.mark.browser
@pytest.mark.slow
def test_the_site_history_chart_draws_in_the_browser(
    repo, tmp_path, make_settings, watched_page, serve_dir
):
    from browser import wait_for_charts

    from roofgen.api import build_site

    hostile = "<img src=x onerror=pwned=1>\x1b[2J"
    _edit(repo / "specs" / "case.yaml", SLOWER, TIME)
    _commit(repo, hostile, 240)
    result = build_site([repo / "specs"], make_settings(repo), tmp_path / "site", strict=True,
                        cache_dir=tmp_path / "c")  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    page = watched_page.page
    page.goto(f"{serve_dir(tmp_path / 'site')}cases/pts/")
    wait_for_charts(watched_page)
    chart = page.locator('div.roofgen-chart[data-spec-id="history-1"]')
    assert chart.get_attribute("data-roofgen-chart") == "ready"
    assert (
        chart.locator("g.mark-symbol.role-mark.commits_marks path").count() == 4
    )  # a point per commit
    texts = chart.evaluate(
        "el => [...el.querySelectorAll('svg g.mark-text text')].map(e => e.textContent)"
    )
    assert {"Add the case", "Slower", "Faster HBM"} <= set(texts)
    assert "<img src=x onerror=pwned=1>\\x1b[2J" in texts  # shown as text
    assert page.evaluate("() => window.pwned") is None
    watched_page.assert_clean()


def test_a_merged_branch_is_one_commit_on_the_first_parent_line(repo):
    main_branch = _git(repo, "rev-parse", "--abbrev-ref", "HEAD")
    _git(repo, "checkout", "-qb", "topic")
    _edit(repo / "specs" / "case.yaml", SLOWER, TIME)
    _commit(repo, "On the branch", 240)
    _git(repo, "checkout", "-q", main_branch)
    _git(repo, "merge", "-q", "--no-ff", "-m", "Merge topic", "topic", when=300)
    found = _run(repo)
    assert [c.subject for c in found.commits][-2:] == ["Faster HBM", "Merge topic"]
    point = found.commits[-1].cases[0].points[0]
    assert point.time_s == pytest.approx(1.1e-3)


def test_a_long_history_keeps_its_subjects_to_the_tooltips():
    from roofgen.charts.history import MAX_LABELS, HistoryInput, HistoryPoint, history_chart

    def chart(n: int) -> dict:
        points = tuple(
            HistoryPoint(i, f"{i:012x}", "2026-01-01T00:00:00Z", f"commit {i}", "k/v", 1e-3)
            for i in range(n)
        )
        return history_chart(HistoryInput("t", points))

    assert [r["label"] for r in chart(2)["datasets"]["labels"]] == ["commit 0", "commit 1"]
    many = chart(MAX_LABELS + 1)
    assert many["datasets"]["labels"] == []
    assert len(many["datasets"]["points"]) == MAX_LABELS + 1
    assert {"field": "subject", "title": "Subject", "type": "nominal"} in (
        many["layer"][1]["encoding"]["tooltip"]
    )
