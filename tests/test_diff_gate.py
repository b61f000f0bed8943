"""`roofgen diff --fail-on-regression`: one policy, and no way around it unnamed.

Each test is a real git repository with two commits: the minimal specs, then a pull
request that slows a kernel and also does what once hid the slowdown from the gate
(moves the specs with the settings, renames a variant or a kernel, drops or widens the
timing intervals, changes the settings, the rules or a machine file)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from roofgen.cli import main

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
TIME = "time: {median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}"
# 1.1 ms -> 2.2 ms: 100% slower, quartiles far apart: a significant regression.
SLOWER = "time: {median: 2.2 ms, q1: 2.19 ms, q3: 2.21 ms, warmup: 10, repeats: 100}"
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false")
GATE = ("git:HEAD~1", "git:HEAD", "--fail-on-regression", "5")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *IDENTITY, *args], cwd=repo, capture_output=True, check=True)


def _repo(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository whose first commit holds the minimal specs (and ``files``)."""
    repo = tmp_path / "repo"
    shutil.copytree(MINIMAL, repo / "specs")
    for name, text in (files or {}).items():
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    return repo


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def _commit(repo: Path) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "head")


def _diff(repo: Path, monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(repo)
    status = main(["diff", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_moved_specs_folder_is_compared_by_case_id(tmp_path, monkeypatch, capsys):
    """The pull request moves specs/ to perf/ and the settings with it: each revision's
    specs are found by its own settings, so the slowdown is still compared."""
    repo = _repo(tmp_path)
    _git(repo, "mv", "specs", "perf")
    (repo / "roofgen.toml").write_text('specs = ["perf"]\n', encoding="utf-8")
    _edit(repo / "perf" / "case.yaml", TIME, SLOWER)
    _commit(repo)
    status, out, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-context", "settings")
    assert status == 3, err
    # 2.2 ms / 1.1 ms - 1 = 100% slower.
    assert "pts/base/low: 100% slower, a significant regression beyond the limit of 5%" in err
    assert "1 kernel slower" in out and "new case" not in out


def test_a_moved_specs_folder_is_a_settings_change(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    _git(repo, "mv", "specs", "perf")
    (repo / "roofgen.toml").write_text('specs = ["perf"]\n', encoding="utf-8")
    _commit(repo)
    status, out, err = _diff(repo, monkeypatch, capsys, *GATE)
    assert status == 3, err
    assert "settings: a settings file roofgen.toml was added" in err
    assert "--allow-context settings" in err
    assert "a settings file roofgen.toml was added" in out  # the comment says it too
    status, out, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-context", "settings")
    assert status == 0, err
    assert "No kernel or roof changed." in out


def test_a_renamed_variant_is_a_removal(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    case = repo / "specs" / "case.yaml"
    _edit(case, "  - id: base\n", "  - id: baseline2\n")
    _edit(case, TIME, SLOWER)
    _commit(repo)
    status, out, err = _diff(repo, monkeypatch, capsys, *GATE)
    assert status == 3, err
    assert "pts/base: variant removed at head" in err and "--allow-removed pts/base" in err
    assert "**Gate (--fail-on-regression 5%): fails**, 1 reason:" in out
    assert "variant removed at head" in out
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-removed", "pts/other")
    assert status == 3, err
    status, out, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-removed", "pts/base")
    assert status == 0, err
    assert "allowed by `--allow-removed pts/base`" in out


def test_a_renamed_kernel_is_a_removal(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    case = repo / "specs" / "case.yaml"
    _edit(case, "{id: low,", "{id: lower,")
    _edit(case, "kernel: low\n", "kernel: lower\n")
    _edit(case, TIME, SLOWER)
    _commit(repo)
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE)
    assert status == 3, err
    assert "pts/base/low: kernel launch removed at head" in err
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-removed", "pts")
    assert status == 3, err  # the removal is allowed; the variant's slowdown is not
    assert "pts/base: 100% slower" in err and "removed" not in err


def test_a_removed_kernel_fails(tmp_path, monkeypatch, capsys):
    """The base launches a second kernel; the head drops it."""
    repo = tmp_path / "repo"
    shutil.copytree(MINIMAL, repo / "specs")
    case = repo / "specs" / "case.yaml"
    launch = case.read_text(encoding="utf-8").split("    launches:\n")[1]
    _edit(case, "  - {id: low, operator: {kind: elementwise}}\n",
          "  - {id: low, operator: {kind: elementwise}}\n"
          "  - {id: high, operator: {kind: elementwise}}\n")  # fmt: skip
    case.write_text(case.read_text() + launch.replace("kernel: low", "kernel: high"))
    _git(repo, "init", "-q")
    _commit(repo)
    case.write_text(case.read_text().replace(launch.replace("kernel: low", "kernel: high"), ""))
    _edit(case, "  - {id: high, operator: {kind: elementwise}}\n", "")
    _commit(repo)
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE)
    assert status == 3, err
    assert "pts/base/high: kernel launch removed at head" in err


def test_a_slowdown_without_intervals_fails(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    _edit(repo / "specs" / "case.yaml", TIME, "time: {median: 2.2 ms, warmup: 10, repeats: 100}")
    _commit(repo)
    status, out, err = _diff(repo, monkeypatch, capsys, *GATE)
    assert status == 3, err
    assert "pts/base/low: 100% slower with unknown noise (no timing interval at head)" in err
    assert "unknown noise (no timing interval at head)" in out
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-noise", "pts/base")
    assert status == 0, err
    # Under the limit it does not fail: 2.2 ms is 100% slower, under a 150% limit.
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE[:2], "--fail-on-regression", "150")
    assert status == 0, err


def test_a_widened_head_interval_cannot_swallow_a_slowdown(tmp_path, monkeypatch, capsys):
    """Base 1.1 ms (1.09-1.12); head 1.5 ms (1.0-2.0) overlaps it: within noise. With the
    base's spread, the head would be 1.5 x 1.09 / 1.1 = 1.486 ms and up, above 1.12 ms."""
    repo = _repo(tmp_path)
    wide = "time: {median: 1.5 ms, q1: 1.0 ms, q3: 2.0 ms, warmup: 10, repeats: 100}"
    _edit(repo / "specs" / "case.yaml", TIME, wide)
    _commit(repo)
    status, out, err = _diff(repo, monkeypatch, capsys, *GATE, "--format", "json")
    assert status == 3, err
    # 1.5 / 1.1 - 1 = 36%.
    assert "pts/base/low: 36% slower, within noise only because the head's timing" in err
    kinds = {r["kind"] for r in json.loads(out)["gate"]["reasons"]}
    assert kinds == {"widened"}
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-noise", "pts")
    assert status == 0, err


def test_noise_that_was_there_at_base_does_not_fail(tmp_path, monkeypatch, capsys):
    """Base 1.1 ms (0.8-1.5), head 1.2 ms (0.85-1.6): as noisy as before. With the base's
    spread the head would span 1.2 x 0.8 / 1.1 = 0.87 ms to 1.64 ms: overlapping."""
    noisy = "time: {median: 1.1 ms, q1: 0.8 ms, q3: 1.5 ms, warmup: 10, repeats: 100}"
    repo = _repo(tmp_path)
    _edit(repo / "specs" / "case.yaml", TIME, noisy)
    _git(repo, "commit", "-qam", "noisy base")
    head = "time: {median: 1.2 ms, q1: 0.85 ms, q3: 1.6 ms, warmup: 10, repeats: 100}"
    _edit(repo / "specs" / "case.yaml", noisy, head)
    _commit(repo)
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE)
    assert status == 0, err


def test_the_heads_thresholds_are_not_the_policy(tmp_path, monkeypatch, capsys):
    """1.5 GB in 1.3 ms is 1.154 TB/s of 1.5 TB/s: 77% efficient. The head raises the
    below-all-roofs threshold to 80%; the base's 50% still judges both sides."""
    repo = _repo(tmp_path, {"roofgen.toml": "[thresholds]\nbelow_roofs_efficiency = 0.5\n"})
    _edit(repo / "roofgen.toml", "0.5", "0.8")
    later = "time: {median: 1.3 ms, q1: 1.29 ms, q3: 1.31 ms, warmup: 10, repeats: 100}"
    _edit(repo / "specs" / "case.yaml", TIME, later)
    _commit(repo)
    argv = ["git:HEAD~1", "git:HEAD", "--fail-on-regression", "50", "--format", "text"]
    status, out, err = _diff(repo, monkeypatch, capsys, *argv)
    assert status == 3, err
    assert "settings: the settings file roofgen.toml changed" in err
    status, out, err = _diff(repo, monkeypatch, capsys, *argv, "--allow-context", "settings")
    assert status == 0, err
    assert "still hbm-bound" in out and "below all roofs" not in out


RULES = ("roofgen: 1\nrules:\n  - id: no-warmup\n    check: no-warmup\n    severity: note\n"
         "    message: no warm-up runs\n")  # fmt: skip


def test_a_changed_rules_file_fails_unless_allowed(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path, {"roofgen.toml": 'rules = "rules.yaml"\n', "rules.yaml": RULES})
    _edit(repo / "rules.yaml", "severity: note", "severity: warning")
    _commit(repo)
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE)
    assert status == 3, err
    assert "rules: the rules file rules.yaml changed" in err
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-context", "rules")
    assert status == 0, err


def test_a_rules_file_missing_at_a_revision_is_named(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path, {"roofgen.toml": 'rules = "rules.yaml"\n'})
    status, _, err = _diff(repo, monkeypatch, capsys, "git:HEAD", "git:HEAD")
    assert status == 1, err
    assert err.startswith("git:HEAD: rules.yaml: no such file in this revision"), err


def test_a_changed_machine_file_fails_unless_allowed(tmp_path, monkeypatch, capsys):
    repo = _repo(tmp_path)
    _edit(repo / "specs" / "machine.yaml", "bandwidth: 1.5 TB/s", "bandwidth: 3 TB/s")
    _commit(repo)
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE)
    assert status == 3, err
    assert "machine:seed: the machine file of seed changed" in err
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-context", "machine:other")
    assert status == 3, err
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE, "--allow-context", "machine:seed")
    assert status == 0, err


@pytest.mark.parametrize("limit", ["nan", "inf", "-inf", "-1", "1e999"])
def test_the_limit_is_a_finite_number(tmp_path, monkeypatch, capsys, limit):
    repo = _repo(tmp_path)
    _edit(repo / "specs" / "case.yaml", TIME, SLOWER)
    _commit(repo)
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE[:2], "--fail-on-regression", limit)
    assert status == 2, err
    assert "--fail-on-regression" in err and "write a finite number of percent" in err


@pytest.mark.parametrize(("option", "value"), [("--allow-removed", "git:HEAD"),
                                               ("--allow-context", "everything")])  # fmt: skip
def test_an_allowance_names_something(tmp_path, monkeypatch, capsys, option, value):
    repo = _repo(tmp_path)
    status, _, err = _diff(repo, monkeypatch, capsys, *GATE, option, value)
    assert status == 2 and f"'{value}' is not" in err, err
