"""`roofgen migrate`, and the line-ending step every edit of a spec file goes through,
cost time linear in the file's size.

A general diff (difflib's SequenceMatcher) matched the edited lines to the old ones
to give each its line ending: on a large case, whose launches repeat the same lines,
its cost grew with the square of the lines and more (a 150 KB version-0 case took
141 s of CPU to migrate, 600 KB some forty minutes). The costs are compared between
two sizes, 8x apart, in CPU time, with a bound three times the linear ratio: the
quadratic step gave more than 50x.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofgen.cli import main
from roofgen.spec.migrate import migrate_text
from roofgen.spec.roundtrip import keep_layout, lf_text, only_added

HEAD = "roofgen: 0\nkind: case\nid: big\ntitle: Big\nmachines: [a100-40gb-sxm]\n"
KERNELS = "kernels:\n  - {id: low, operator: {kind: other}}\nvariants:\n  - id: base\n"


def version_0_case(launches: int) -> str:
    """A version-0 case of ``launches`` launches, five lines each, alike but the time."""
    body = "".join(
        "      - kernel: low\n        measurement:\n"
        f"          time: {i + 1} us\n"
        "          bytes_hbm: 1.5 GB   # dram__bytes.sum\n          bytes_l2: 2 GB\n"
        for i in range(launches)
    )
    return HEAD + KERNELS + "    launches:\n" + body


def mixed_endings(text: str) -> bytes:
    """Every third line ending CRLF, the others LF: the slow path of keep_layout."""
    lines = text.split("\n")
    ends = ["\r\n" if i % 3 == 0 else "\n" for i in range(len(lines) - 1)] + [""]
    return "".join(line + end for line, end in zip(lines, ends, strict=True)).encode()


def cpu(work: Callable[[], object], repeats: int = 3) -> float:
    """The least CPU time of ``repeats`` runs of ``work``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.timeout(300)
def test_line_endings_of_a_large_edit_cost_linear_time() -> None:
    small, large = (mixed_endings(version_0_case(n)) for n in (150, 1200))
    edits = {raw: migrate_text(lf_text(raw)).text for raw in (small, large)}

    def step(raw: bytes) -> Callable[[], object]:
        return lambda: (keep_layout(raw, edits[raw]), only_added(lf_text(raw), edits[raw]))

    ratio = cpu(step(large)) / max(cpu(step(small)), 1e-4)
    assert ratio < 24, f"8x the lines cost {ratio:.1f}x the CPU time"


@pytest.mark.timeout(600)
def test_migrate_of_a_large_version_0_case_costs_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    costs = []
    for launches in (150, 1200):  # 19 KB and 151 KB
        path = tmp_path / f"case-{launches}.yaml"
        path.write_text(version_0_case(launches), encoding="utf-8")
        start = time.process_time()
        assert main(["migrate", "-q", path.name]) == 0, capsys.readouterr().err
        costs.append(time.process_time() - start)
        text = path.read_text(encoding="utf-8")
        assert text.startswith("roofgen: 1\n") and "bytes_" not in text
        assert text.count("          bytes:\n            hbm: 1.5 GB") == launches
    assert costs[1] / costs[0] < 24, f"8x the size cost {costs[1] / costs[0]:.1f}x the CPU time"


LINES = st.lists(st.sampled_from(["a", "b", "- k: 1", "  ", "c: [x]"]), max_size=30)


@given(old=LINES, inserts=st.lists(st.tuples(st.integers(0, 30), LINES), max_size=4),
       ends=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=31, max_size=31))  # fmt: skip
def test_lines_only_added_keep_their_endings(
    old: list[str], inserts: list[tuple[int, list[str]]], ends: list[str]
) -> None:
    """Whatever is added where, every old line is still there with its own ending,
    the new lines end with the most common ending, and only_added finds nothing."""
    raw = "".join(line + end for line, end in zip(old, ends, strict=False))
    new = list(old)
    for at, lines in sorted(inserts, reverse=True):
        new[at:at] = lines
    edited = "".join(line + "\n" for line in new)
    assert only_added(lf_text(raw.encode()), edited) == []
    out = keep_layout(raw.encode(), edited).decode()
    out_lines = out.splitlines(keepends=True)
    assert [line.rstrip("\r\n") for line in out_lines] == new
    # The old lines, in order, are a subsequence of the output with their endings.
    wanted = [line + end for line, end in zip(old, ends, strict=False)]
    found = iter(out_lines)
    assert all(any(line == w for line in found) for w in wanted)


def test_a_changed_or_removed_line_is_found() -> None:
    before = "a\nb\nc\nd\n"
    assert only_added(before, "a\nb\nx\nc\nd\ne\n") == []
    assert only_added(before, "a\nc\nd\n") == ["2: b"]
    assert only_added(before, "a\nB\nc\nd\n") == ["2: b"]
    raw = b"a\r\nb\nc\r\nd\n"
    # b changed in place keeps its LF; the new line after c takes CRLF (two of each: the
    # first on a tie is CRLF); the others keep theirs.
    assert keep_layout(raw, "a\nB\nc\nnew\nd\n") == b"a\r\nB\nc\r\nnew\r\nd\n"
