"""Hostile spec input the corpus in tests/cases/invalid cannot hold: files generated at
test time (50 MB, half a million values), file-system oddities (symbolic link loops,
unreadable files, folders and pipes named like specs), the pure-Python YAML parser,
and the time and memory each refusal costs.

Every case ends the same way: ``roofgen check`` returns 1, prints located messages
(``FILE:LINE:COL: ...`` or ``FILE: ...``), no traceback, and stays within its time
(pytest-timeout) and memory (tracemalloc) budget.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
import yaml

from roofgen.cli import main
from roofgen.commands.progress import Ticker
from roofgen.spec import yamlload
from roofgen.spec.quantity import QuantityError, parse_quantity
from roofgen.spec.yamlload import MAX_FILE_BYTES, MAX_NODES, load_bytes, load_text

CASES = Path(__file__).parent / "cases"
MINIMAL = CASES / "valid" / "minimal"
LOCATED = re.compile(r"^[^:\s][^:]*(:\d+:\d+)?: \S.*$")
SUMMARY = re.compile(r"^\d+ file\(s\) checked: ")
# Off a terminal, a check that outlasts the progress interval (10 s: a loaded machine,
# tracemalloc) writes ``check: checking specs, 10 s`` before its report
# (commands/progress.py).
PROGRESS = re.compile(r"^check: (checking specs, )?\d+ s$")
MiB = 1024 * 1024


@functools.cache
def _warm_up() -> None:
    """Import and compile what a check needs, so that memory peaks measure the input."""
    main(["check", "-q", str(MINIMAL)])


def check(
    paths: list[Path],
    cwd: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
    *,
    trace: bool = True,
) -> tuple[int, list[str], float, int]:
    """Run ``roofgen check`` in-process: status, problem lines, CPU seconds (this
    process's: a loaded machine stretches wall time, not the work done), peak bytes
    (with ``trace``; tracemalloc slows allocations several times, so time an untraced
    run where time matters)."""
    _warm_up()
    capsys.readouterr()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("NO_COLOR", "1")
    if trace:
        tracemalloc.start()
    start = time.process_time()
    try:
        status = main(["check", *map(str, paths)])
    finally:
        seconds = time.process_time() - start
        _, peak = tracemalloc.get_traced_memory() if trace else (0, 0)
        tracemalloc.stop()
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err and "internal error" not in err, err
    report = err.splitlines()
    while report and PROGRESS.match(report[0]):
        report.pop(0)
    lines = [line for line in report if not SUMMARY.match(line)]
    for line in lines:
        assert LOCATED.match(line), line
    return status, lines, seconds, peak


def minimal_specs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("machine.yaml", "case.yaml"):
        (folder / name).write_bytes((MINIMAL / name).read_bytes())
    return folder


# --------------------------------------------------------------------------- size


@pytest.mark.timeout(300)
def test_a_50_mb_file_is_refused_before_it_is_read(tmp_path, monkeypatch, capsys):
    big = tmp_path / "specs" / "big.yaml"
    big.parent.mkdir()
    with big.open("w", encoding="utf-8") as f:
        f.write("roofgen: 1\nkind: machine\nvalues: [")
        chunk = "1, " * (1024 * 1024 // 3)
        while f.tell() < 50 * MiB:
            f.write(chunk)
        f.write("1]\n")
    status, lines, seconds, peak = check([big.parent], tmp_path, monkeypatch, capsys)
    assert status == 1
    assert lines == [
        f"specs/big.yaml: file is {big.stat().st_size / 1e6:.1f} MB, above the 8 MiB limit "
        "for a spec file; split it into several files"
    ]
    assert peak < 4 * MiB, f"{peak / MiB:.1f} MiB: the file was read"
    assert seconds < 5


def test_a_file_that_grows_after_stat_is_still_cut_at_the_limit(tmp_path, monkeypatch):
    path = tmp_path / "grows.yaml"
    path.write_text("roofgen: 1\n", encoding="utf-8")
    real_stat = Path.stat

    def small_stat(self: Path, **kwargs):  # the size seen before the file grew
        info = real_stat(self, **kwargs)
        return os.stat_result((*info[:6], 11, *info[7:]))

    with path.open("a", encoding="utf-8") as f:
        f.write("# " + "x" * (MAX_FILE_BYTES + 10) + "\n")
    monkeypatch.setattr(Path, "stat", small_stat)
    doc, problems = yamlload.load_file(path, "grows.yaml")
    assert doc is None
    assert [p.format() for p in problems] == [
        f"grows.yaml: file is {(MAX_FILE_BYTES + 1) / 1e6:.1f} MB, above the 8 MiB limit for "
        "a spec file; split it into several files"
    ]


@pytest.mark.timeout(300)
def test_half_a_million_values_are_counted_and_refused_without_building_a_tree(
    tmp_path, monkeypatch, capsys
):
    # Under the size limit, but more values than the limit (500,000, scaled down here
    # to keep the test fast under tracemalloc): PyYAML's node tree would cost ~500
    # bytes a value. The streaming count stops at the limit.
    limit = MAX_NODES // 10
    monkeypatch.setattr(yamlload, "MAX_NODES", limit)
    path = tmp_path / "many.yaml"
    path.write_text("roofgen: 1\nkind: machine\nx: [" + "1," * 10 * limit + "1]\n", "utf-8")
    status, lines, seconds, peak = check([path], tmp_path, monkeypatch, capsys)
    assert status == 1
    # 9 parse events (stream, document, mapping, 5 scalars, sequence) precede the items
    column = len("x: [") + 2 * (limit + 1 - 10) + 1
    assert lines == [
        f"many.yaml:3:{column}: more than {limit:,} values in one file: split it into several"
    ]
    assert peak < 16 * MiB, f"{peak / MiB:.1f} MiB"  # the tree would be ~250 MB
    assert seconds < 5


def test_a_large_file_below_the_value_limit_still_loads(tmp_path):
    text = "roofgen: 1\nkind: machine\nx: [" + "1," * (MAX_NODES // 2) + "1]\n"
    assert len(text) > MAX_NODES  # counted first, then loaded
    doc, problems = load_text(text, "ok.yaml")
    assert not problems and doc is not None
    assert len(doc.data["x"]) == MAX_NODES // 2 + 1


# --------------------------------------------------------------------------- bombs


BOMBS = sorted(
    p.name
    for p in (CASES / "invalid").iterdir()
    if p.name.startswith(("alias-bomb", "nesting-", "yaml-merge-of-itself", "yaml-alias-cont"))
)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", BOMBS)
def test_bombs_and_deep_nesting_cost_little_time_and_memory(name, monkeypatch, capsys):
    folder = CASES / "invalid" / name
    status, lines, _, peak = check([folder], folder, monkeypatch, capsys)
    assert status == 1 and len(lines) == 1
    assert peak < 32 * MiB, f"{peak / MiB:.1f} MiB"
    _, _, seconds, _ = check([folder], folder, monkeypatch, capsys, trace=False)
    assert seconds < 2


def test_a_progress_line_before_the_report_is_not_a_problem_line(monkeypatch, capsys):
    """A bomb checked on a loaded machine can outlast the progress interval: the progress
    line written before the report is not one of the check's problems."""
    stop, ticks = Ticker.stop, []

    def stop_after_a_line(ticker: Ticker) -> None:  # as if the check took 10 s
        ticker.tick()
        ticks.append(ticker.line())
        stop(ticker)

    monkeypatch.setattr(Ticker, "stop", stop_after_a_line)
    folder = CASES / "invalid" / "alias-bomb-quadratic"
    status, lines, _, _ = check([folder], folder, monkeypatch, capsys, trace=False)
    assert ticks and ticks[0].startswith("check: checking specs, ")
    assert status == 1
    assert lines == (folder / "expected.txt").read_text(encoding="utf-8").splitlines()


def test_the_bombs_are_all_there() -> None:
    assert len([b for b in BOMBS if b.startswith("alias-bomb")]) >= 6
    assert len([b for b in BOMBS if b.startswith("nesting-")]) >= 5


@pytest.mark.timeout(20)
@pytest.mark.parametrize("levels", [1_000, 100_000])
def test_deep_brackets_give_a_message_not_a_crash(levels, tmp_path, monkeypatch, capsys):
    path = tmp_path / "deep.yaml"
    path.write_text("roofgen: 1\nkind: machine\ndeep: " + "[" * levels + "]" * levels + "\n")
    status, lines, _, _ = check([path], tmp_path, monkeypatch, capsys)
    assert status == 1
    assert len(lines) == 1 and lines[0].endswith("nesting deeper than 64 levels"), lines


def _pure_python_loader() -> type:
    """The loader roofgen uses without libyaml: PyYAML's Python parser."""
    return type("PureLoader", (yaml.SafeLoader,), {"resolve": yamlload._Loader.resolve})


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "text",
    [
        "deep: " + "[" * 1_000 + "]" * 1_000 + "\n",
        "deep: " + "{a: " * 3_000 + "1" + "}" * 3_000 + "\n",
        "".join(" " * i + f"k{i}:\n" for i in range(2_000)),
    ],
    ids=["flow-sequences", "flow-mappings", "block-mappings"],
)
def test_deep_nesting_without_libyaml_is_a_message(text, monkeypatch):
    monkeypatch.setattr(yamlload, "_Loader", _pure_python_loader())
    doc, problems = load_text(text, "deep.yaml")
    assert doc is None
    assert len(problems) == 1
    assert problems[0].message.endswith(f"nesting deeper than {yamlload.MAX_DEPTH} levels")


def test_the_pure_python_loader_reads_what_libyaml_reads(monkeypatch):
    text = (MINIMAL / "machine.yaml").read_text(encoding="utf-8")
    expected, _ = load_text(text, "m.yaml")
    monkeypatch.setattr(yamlload, "_Loader", _pure_python_loader())
    doc, problems = load_text(text, "m.yaml")
    assert not problems and doc is not None and expected is not None
    assert doc.data == expected.data
    assert doc.positions == expected.positions


@pytest.mark.timeout(60)
@pytest.mark.parametrize("width", [30, 1_000, 100_000])
def test_a_long_unit_costs_linear_time(width):
    start = time.process_time()
    with pytest.raises(QuantityError, match="unknown unit"):
        parse_quantity("1 " + "a" * width + "!", "time")
    with pytest.raises(QuantityError, match="unknown unit"):
        parse_quantity("1 " + "ms " * width + "1", "time")
    assert time.process_time() - start < 1  # CPU seconds: quadratic would take minutes


# --------------------------------------------------------------------------- encodings


def test_a_utf8_byte_order_mark_is_accepted(tmp_path, monkeypatch, capsys):
    # YAML allows a BOM, and Windows editors write one: accepted, columns unchanged.
    specs = minimal_specs(tmp_path / "specs")
    for path in specs.iterdir():
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    status, lines, _, _ = check([specs], tmp_path, monkeypatch, capsys)
    assert (status, lines) == (0, [])
    broken = specs / "case.yaml"
    broken.write_bytes(broken.read_bytes().replace(b"roofgen: 1", b"roofgen: 2"))
    status, lines, _, _ = check([specs], tmp_path, monkeypatch, capsys)
    assert status == 1
    assert lines == [
        "specs/case.yaml:1:10: roofgen: spec format version 2 is not one this roofgen reads "
        "(it reads version 1)"
    ]


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_windows_and_old_mac_line_endings_are_valid(newline, tmp_path, monkeypatch, capsys):
    specs = minimal_specs(tmp_path / "specs")
    for path in specs.iterdir():
        path.write_bytes(path.read_bytes().replace(b"\n", newline.encode()))
    status, lines, _, _ = check([specs], tmp_path, monkeypatch, capsys)
    assert (status, lines) == (0, [])


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("roofgen: 1\n".encode("utf-16"), "the file is UTF-16 or UTF-32 text: save it as UTF-8"),
        ("roofgen: 1\n".encode("utf-16-le"), "the file is UTF-16 or UTF-32 text: save it as UTF-8"),
        ("roofgen: 1\n".encode("utf-32-be"), "the file is UTF-16 or UTF-32 text: save it as UTF-8"),
        (b"%PDF-1.7\n", "the file is a PDF document, not text: a spec is a YAML text file"),
        (b"\x7fELF\x02\x01", "the file is an executable, not text: a spec is a YAML text file"),
        (b"a: \xe2\x82\n", "byte 0xe2 is not valid UTF-8: save the file as UTF-8"),
        (b"a: b\x00\n", "the file contains NUL bytes: it is not text"),
        (b"a: b\x1b[31m\n", "the control character U+001B is not allowed in YAML: remove it"),
    ],
    ids=["utf16", "utf16-le-no-bom", "utf32-be", "pdf", "elf", "utf8-cut", "nul", "escape"],
)
def test_what_is_not_utf8_text_says_what_it_is(raw, message):
    doc, problems = load_bytes(raw, "x.yaml")
    assert doc is None
    assert [p.message for p in problems] == [message]


# --------------------------------------------------------------------------- numbers and tags


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a: !!str 12\n", "12"),
        ("a: !!int '12'\n", 12),
        ("a: !!float 1\n", 1.0),
        ("a: !!bool 'true'\n", True),
        ("a: !!null ''\n", None),
        ("a: '12'\n", "12"),
        ("a: 12\n", 12),
        ("a: 1e12\n", 1e12),
        ("a: no\n", "no"),
        ("a: 0x1F\n", 31),
        ("a: |\n  12\n", "12\n"),
        ("a: 1e308\n", 1e308),
        ("a: " + "9" * 308 + "\n", int("9" * 308)),
    ],
)
def test_explicit_tags_win_and_plain_scalars_follow_yaml_1_2(text, value):
    doc, problems = load_text(text, "x.yaml")
    assert not problems and doc is not None
    assert doc.data["a"] == value and type(doc.data["a"]) is type(value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1e309\n", "a: the number 1e309 is too large: numbers go up to about 1.8e308"),
        ("a: -1e309\n", "a: the number -1e309 is too large: numbers go up to about 1.8e308"),
        (
            "a: 1" + "0" * 400 + "\n",
            "a: the number 100000000000... (401 characters) is too large: numbers go up to "
            "about 1.8e308",
        ),
        (
            "a: 1" + "0" * 5_000 + "\n",  # beyond int()'s 4,300-digit limit
            "a: the number 100000000000... (5001 characters) is too large: numbers go up to "
            "about 1.8e308",
        ),
        ("a: !!int x\n", "a: 'x' does not fit the tag '!!int': remove it"),
        ("a: !!float true\n", "a: 'true' does not fit the tag '!!float': remove it"),
        ("a: !!seq {}\n", "the tag '!!seq' does not fit this value: remove it"),
        ("a: !!binary aGk=\n", "the tag '!!binary' is not allowed in a spec: remove it"),
    ],
)
def test_numbers_beyond_a_float_and_misfit_tags_are_located(text, message):
    doc, problems = load_text(text, "x.yaml")
    assert doc is None
    assert [p.format() for p in problems] == [f"x.yaml:1:4: {message}"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "!!python/object:os.system kind: case\n",
            "the tag '!!python/object:os.system' is not allowed in a spec: remove it",
        ),
        ("a:\n  !!binary aGk=: 1\n", "the tag '!!binary' is not allowed in a spec: remove it"),
        ("!!seq kind: case\n", "the tag '!!seq' does not fit this value: remove it"),
        ("!!map kind: case\n", "the tag '!!map' does not fit this value: remove it"),
    ],
)
def test_a_key_with_a_tag_a_spec_refuses_is_located(text, message):
    doc, problems = load_text(text, "x.yaml")
    assert doc is None
    line, column = (2, 3) if text.startswith("a:") else (1, 1)
    assert [p.format() for p in problems] == [f"x.yaml:{line}:{column}: {message}"]


def test_a_huge_integer_reaching_the_quantity_parser_is_an_error_not_a_crash():
    with pytest.raises(QuantityError, match="an integer of about 401 digits is too large"):
        parse_quantity(10**400, "bandwidth")
    with pytest.raises(QuantityError, match="is too large: the largest bandwidth roofgen"):
        parse_quantity("1e300 EB/s", "bandwidth")
    with pytest.raises(QuantityError, match="is too small: the smallest amount of data"):
        parse_quantity("1e-999999 B", "information")  # not 0: read as 0, it divided by 0


# --------------------------------------------------------------------------- file system


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
@pytest.mark.timeout(10)
def test_symbolic_link_loops_in_the_specs_folder(tmp_path, monkeypatch, capsys):
    specs = minimal_specs(tmp_path / "specs")
    (specs / "self.yaml").symlink_to("self.yaml")
    (specs / "a.yaml").symlink_to("b.yaml")
    (specs / "b.yaml").symlink_to("a.yaml")
    (specs / "gone.yaml").symlink_to("nowhere.yaml")
    (specs / "sub").mkdir()
    (specs / "sub" / "up").symlink_to("..", target_is_directory=True)  # a folder loop
    status, lines, _, _ = check([specs], tmp_path, monkeypatch, capsys)
    assert status == 1
    loop = os.strerror(40) if sys.platform == "linux" else None
    assert [line.split(": cannot read the file: ")[0] for line in lines] == [
        "specs/a.yaml",
        "specs/b.yaml",
        "specs/gone.yaml",
        "specs/self.yaml",
    ]
    if loop:
        assert lines[0].endswith(loop)
    assert lines[2].endswith("No such file or directory")
    # named on the command line, a loop is not a folder to search nor a file to read
    status, lines, _, _ = check([specs / "a.yaml"], tmp_path, monkeypatch, capsys)
    assert (status, lines) == (1, ["specs/a.yaml: no such file or folder"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.timeout(10)
def test_pipes_devices_and_folders_named_like_specs(tmp_path, monkeypatch, capsys):
    specs = minimal_specs(tmp_path / "specs")
    os.mkfifo(specs / "pipe.yaml")  # reading it would wait for a writer forever
    if Path("/dev/zero").exists():
        (specs / "zero.yaml").symlink_to("/dev/zero")  # reading it would never end
    folder = specs / "folder.yaml"
    folder.mkdir()
    (folder / "inner.yaml").write_text("roofgen: 1\nkind: machine\nid: [\n", "utf-8")
    status, lines, seconds, peak = check([specs], tmp_path, monkeypatch, capsys)
    assert status == 1
    expected = [
        "specs/folder.yaml/inner.yaml:4:1: YAML syntax error: did not find expected node "
        "content (while parsing a flow node that starts at line 4, column 1)",
        "specs/pipe.yaml: is not a regular file: a spec is a text file",
    ]
    if Path("/dev/zero").exists():
        expected.append("specs/zero.yaml: is not a regular file: a spec is a text file")
    assert lines == expected
    assert seconds < 5 and peak < 16 * MiB
    # a folder named like a spec, named on the command line, is searched
    status, lines, _, _ = check([folder], tmp_path, monkeypatch, capsys)
    assert status == 1 and len(lines) == 1 and lines[0].startswith("specs/folder.yaml/inner")
    empty = tmp_path / "empty.yaml"
    empty.mkdir()
    status, lines, _, _ = check([empty], tmp_path, monkeypatch, capsys)
    assert (status, lines) == (
        1,
        ["empty.yaml: no spec files (*.yaml, *.yml) found: nothing to check"],
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.timeout(60)
def test_a_build_with_a_pipe_among_the_specs_fails_instead_of_hanging(
    tmp_path, monkeypatch, capsys
):
    # `build` keys its check cache on the bytes of every spec file: a pipe is not read.
    specs = minimal_specs(tmp_path / "specs")
    os.mkfifo(specs / "pipe.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    status = main(["build", "specs", "-q", "-o", "site", "--cache-dir", "cache"])
    _, err = capsys.readouterr()
    assert status == 1
    assert err.splitlines()[0] == "specs/pipe.yaml: is not a regular file: a spec is a text file"
    assert not (tmp_path / "site").exists()


def test_a_folder_passed_to_the_file_loader_is_named(tmp_path):
    (tmp_path / "x.yaml").mkdir()
    doc, problems = yamlload.load_file(tmp_path / "x.yaml", "x.yaml")
    assert doc is None
    assert [p.format() for p in problems] == ["x.yaml: is a folder, not a spec file"]


def test_an_unreadable_file(tmp_path, monkeypatch, capsys):
    """The file is there and regular, but opening it fails as for another user's file.
    Simulated (root reads a chmod 000 file), so that it runs as root too, as in CI."""
    specs = minimal_specs(tmp_path / "specs")
    locked = specs / "locked.yaml"
    locked.write_text((MINIMAL / "machine.yaml").read_text(encoding="utf-8"), "utf-8")
    real_open = Path.open
    refused: list[Path] = []

    def open_(self: Path, *args, **kwargs):
        if self.resolve() == locked.resolve():
            refused.append(self)
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_)
    status, lines, _, _ = check([specs], tmp_path, monkeypatch, capsys)
    assert refused, "the loader never opened the file"
    assert status == 1
    assert lines == ["specs/locked.yaml: cannot read the file: Permission denied"]


def test_a_file_without_read_permission(tmp_path, monkeypatch, capsys):
    """The same on disk: chmod 000 (root and CAP_DAC_OVERRIDE read it anyway)."""
    specs = minimal_specs(tmp_path / "specs")
    locked = specs / "locked.yaml"
    locked.write_text((MINIMAL / "machine.yaml").read_text(encoding="utf-8"), "utf-8")
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):
            pytest.skip("running as root (or with CAP_DAC_OVERRIDE): chmod 000 stays readable")
        status, lines, _, _ = check([specs], tmp_path, monkeypatch, capsys)
    finally:
        locked.chmod(0o644)
    assert status == 1
    assert lines == ["specs/locked.yaml: cannot read the file: Permission denied"]
