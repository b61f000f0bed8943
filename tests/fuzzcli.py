"""Fuzzing roofgen's commands in a child process: the runner, the oracle and the
mutations, shared by ``tests/test_fuzz_cli_*.py``.

Every example runs one command as its own process (``python -c "from roofgen.cli
import entry; entry()" ...``, importing the source tree under test through
``PYTHONPATH``) under resource limits, so that input which makes roofgen spin or
swell fails the test instead of the machine:

* ``RLIMIT_CPU`` 60 s (SIGXCPU; SIGKILL at 65 s);
* ``RLIMIT_AS`` 2 GiB. A build renders charts in V8 (vl-convert), which reserves
  about 100 GiB of address space it never touches, so a build runs with
  ``RLIMIT_AS`` 256 GiB and ``RLIMIT_DATA`` 2 GiB, which bounds the memory written;
* 240 s of wall-clock time, for input that makes it wait rather than compute.

The limits are generous so that a loaded machine never turns a slow example into a
failure; pytest-timeout (``FUZZ_TIMEOUT_S``) sits well above a test's examples.

:func:`assert_handled` is the oracle: the status is an accepted one (0 or 1; ``diff``
also 3), no traceback was printed, no limit was hit, and a failure says where: some
line reads ``FILE:LINE:COL: message`` or ``FILE: message`` with ``FILE`` one of the
command's inputs.

How many examples each test runs, :func:`examples`: with ``CI=true`` (the "ci"
Hypothesis profile, derandomised) the count given for CI, sized so that all the
command fuzzers together take about two minutes of CPU time (a child process costs
about half a second, a build four); otherwise three times that, from a fresh random
seed each run; with ``HYPOTHESIS_PROFILE=fuzz`` fifty times
that; ``ROOFGEN_FUZZ_EXAMPLES=N`` sets every test's count to N.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from browser import in_ci
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "specs"
VALID = REPO / "tests" / "cases" / "valid"
DATA = REPO / "tests" / "data"

CPU_LIMIT_S = 60
ADDRESS_SPACE = 2 << 30
V8_ADDRESS_SPACE = 256 << 30  # what a build's chart renderer reserves, with room to spare
WALL_LIMIT_S = 240
FUZZ_TIMEOUT_S = 1800  # pytest-timeout for one fuzz test: far above its examples

_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci" if in_ci() else "default")
_SCALE = {"ci": 1, "fuzz": 50}.get(_PROFILE, 3)


def examples(ci: int) -> int:
    """A test's example count: ``ci`` under CI, scaled for the other profiles."""
    explicit = os.environ.get("ROOFGEN_FUZZ_EXAMPLES")
    return int(explicit) if explicit else ci * _SCALE


def fuzz_settings(ci: int) -> settings:
    """Hypothesis settings of a command fuzzer: ``examples(ci)``, no deadline (a child
    process takes about a second), and no complaint about slow generation."""
    return settings(
        max_examples=examples(ci),
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Outcome:
    """What one command did: its arguments, status (negative: killed by that signal;
    None: still running at the wall-clock limit), output and the CPU seconds it used."""

    args: tuple[str, ...]
    cwd: Path
    status: int | None
    out: str
    err: str
    cpu_s: float

    def describe(self) -> str:
        return (
            f"roofgen {' '.join(_short(a) for a in self.args)}  (in {self.cwd})\n"
            f"status {self.status}, {self.cpu_s:.1f} s CPU\n"
            f"--- stdout\n{_tail(self.out)}\n--- stderr\n{_tail(self.err)}"
        )


def _short(arg: str) -> str:
    text = repr(arg) if not re.fullmatch(r"[\w./:=@+-]+", arg) else arg
    return text if len(text) <= 120 else text[:100] + f"...({len(arg)} chars)"


def _tail(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else f"...({len(text)} chars)...\n" + text[-limit:]


def _limits(address_space: int, data: int | None) -> Callable[[], None]:
    def apply() -> None:  # in the child, before it runs Python
        _lower(resource.RLIMIT_CPU, CPU_LIMIT_S, CPU_LIMIT_S + 5)
        _lower(resource.RLIMIT_AS, address_space, address_space)
        if data is not None:
            _lower(resource.RLIMIT_DATA, data, data)
        _lower(resource.RLIMIT_CORE, 0, 0)  # SIGXCPU would dump a core

    return apply


def _lower(which: int, soft: int, hard: int) -> None:
    """Set a limit, never above the one the machine already imposes."""
    _, current = resource.getrlimit(which)
    if current != resource.RLIM_INFINITY:
        soft, hard = min(soft, current), min(hard, current)
    resource.setrlimit(which, (soft, hard))


def run_roofgen(args: Sequence[str], cwd: Path, *, v8: bool = False) -> Outcome:
    """``roofgen ARGS`` in ``cwd``, in a child process under the limits above; ``v8``
    for a command that renders charts (the address-space limit V8 needs)."""
    tmp = cwd / ".tmp"
    tmp.mkdir(exist_ok=True)  # crash reports land here, not in the machine's /tmp
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "TMPDIR": str(tmp),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    limits = _limits(V8_ADDRESS_SPACE, ADDRESS_SPACE) if v8 else _limits(ADDRESS_SPACE, None)
    command = [sys.executable, "-c", "from roofgen.cli import entry; entry()", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, preexec_fn=limits, start_new_session=True,
    )  # fmt: skip
    status: int | None
    try:
        out, err = process.communicate(timeout=WALL_LIMIT_S)
        status = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        status = None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Outcome(
        tuple(args), cwd, status, out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"), cpu,
    )  # fmt: skip


@contextmanager
def workdir(scratch: Path) -> Iterator[Path]:
    """A fresh folder under ``scratch`` for one example, removed afterwards; the last
    example that failed keeps its folder as ``scratch/last-failure``, its inputs
    there to run the command again by hand."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    try:
        yield folder
    except BaseException as exc:
        kept = scratch / "last-failure"
        shutil.rmtree(kept, ignore_errors=True)
        folder.rename(kept)
        exc.add_note(f"this example's folder is kept: {kept} (it ran in {folder})")
        raise
    shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------- the oracle

LOCATED = re.compile(r"^(?P<file>[^:\n]+?)(?::\d+:\d+)?: \S")
_CRASH = re.compile(r"details in (\S+)$", re.M)
_LIMIT_SIGNALS = {signal.SIGXCPU: "the CPU-time limit", signal.SIGKILL: "a hard limit"}


def assert_handled(
    outcome: Outcome,
    inputs: Sequence[str],
    *,
    statuses: Sequence[int] = (0, 1),
    every_line: Callable[[str], bool] | None = None,
    whole_input: Sequence[str] = (),
) -> None:
    """The command handled its input: an accepted status, no traceback, no limit hit,
    and a failure (1; or 2, a usage error, where accepted) that says where: a line
    ``FILE:LINE:COL: ...`` or ``FILE: ...`` whose ``FILE`` is one of ``inputs`` (as
    the command prints them) or lies under one, or, for what is about an input as a
    whole, a line starting with one of ``whole_input``. With ``every_line``, every
    line on stderr must pass it as well. Records the status as a Hypothesis event:
    ``--hypothesis-show-statistics`` shows how often each came."""
    event(f"exit status {outcome.status}")
    detail = outcome.describe()
    if outcome.status is None:
        raise AssertionError(f"still running after {WALL_LIMIT_S} s (wall clock):\n{detail}")
    if outcome.status < 0:
        sig = signal.Signals(-outcome.status)
        what = _LIMIT_SIGNALS.get(sig, "a signal")
        raise AssertionError(f"killed by {sig.name} ({what}):\n{detail}")
    crash = _CRASH.search(outcome.err)
    if outcome.status == 4 or crash:
        report = _crash_report(outcome, crash)
        limit = " (the address-space limit)" if "MemoryError" in report else ""
        raise AssertionError(f"internal error{limit}:\n{detail}\n--- crash report\n{report}")
    assert outcome.status in statuses, f"status {outcome.status}:\n{detail}"
    for text in (outcome.out, outcome.err):
        assert "Traceback (most recent call last)" not in text, f"a traceback:\n{detail}"
    lines = outcome.err.splitlines()
    if every_line is not None:
        odd = [line for line in lines if not every_line(line)]
        assert not odd, f"lines not located: {odd[:3]}\n{detail}"
    if outcome.status in (1, 2):  # 2: a usage error, about an option
        assert any(
            names_an_input(line, inputs) or line.startswith(tuple(whole_input)) for line in lines
        ), f"a failure that names none of {list(inputs)}:\n{detail}"


def names_an_input(line: str, inputs: Sequence[str]) -> bool:
    """True when ``line`` is ``FILE:LINE:COL: ...`` or ``FILE: ...`` about an input."""
    found = LOCATED.match(line)
    if not found:
        return False
    file = found.group("file")
    return any(file == name or file.startswith(name.rstrip("/") + "/") for name in inputs)


def _crash_report(outcome: Outcome, crash: re.Match[str] | None) -> str:
    if crash is None:
        return "(no crash report named)"
    path = Path(crash.group(1))
    if not path.is_absolute():
        path = outcome.cwd / path
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-6000:]
    except OSError as exc:
        return f"(cannot read {path}: {exc})"


# --------------------------------------------------------------------------- mutations


class Blob(bytes):
    """Bytes that a failing example shows short: a long input as its length, hash and
    start (the whole of it is in the example's kept folder, see :func:`workdir`)."""

    def __repr__(self) -> str:
        if len(self) <= 200:
            return f"Blob({bytes(self)!r})"
        digest = hashlib.sha256(self).hexdigest()[:12]
        return f"Blob({len(self):,} bytes, sha256 {digest}, {bytes(self[:60])!r}...)"


# Numbers that overflow, underflow, are not numbers, or are too long to convert
# (Python refuses int() of more than 4,300 digits).
HOSTILE_NUMBERS = [
    "1e999999999", "9" * 5000, "-" + "9" * 5000, "1e-320", "4.9e-324", "NaN", "nan", "-0",
    "-0.0", "inf", "-inf", "1e309", "1.7976931348623157e308", "18446744073709551616", "0",
    "-1", "0x1F", "1_000", "1e", ".", "1,,0", "0.000", "1e+", "+-1",
]  # fmt: skip
# Strings that are huge, invisible, reversed, markup, or paths.
HOSTILE_WORDS = [
    "x" * 200_000, "\U0001f680\U0001f525", "\u202eevil", "\u200b", "a\nb", "{{ 7*7 }}",
    "<script>alert(1)</script>", "../../etc/passwd", "", " ", "-", "~", "null", "CON", "\u00e9",
    "\x00", "<" * 3000 + ">" * 3000, "%s%n", "\\", "'", '"', "\t",
]  # fmt: skip
_NUMBER = re.compile(rb"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
ENCODINGS = ["utf-8-sig", "utf-16", "utf-16-be", "utf-32", "latin-1", "bom-twice", "nul"]
NEWLINES = ["\r\n", "\r", "mixed"]


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes, tokens: Sequence[str] = ()) -> Blob:
    """``data`` after one to four edits: a bit flipped; a token inserted (``tokens``,
    those of the format); a range deleted; the end cut off; a line repeated (duplicate
    keys and rows); a number or a word replaced by a hostile one; deep nesting; then
    maybe re-encoded (BOMs, UTF-16/32, Latin-1, NUL bytes) or its line endings changed."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(out)))
        how = draw(st.sampled_from(
            ["number", "word", "insert", "duplicate", "flip", "delete", "truncate", "nest"]
        ))  # fmt: skip
        if how == "number":
            _replace_match(out, _NUMBER, at, draw(st.sampled_from(HOSTILE_NUMBERS)))
        elif how == "word":
            _replace_match(out, _WORD, at, draw(st.sampled_from(HOSTILE_WORDS)))
        elif how == "insert" and tokens:
            out[at:at] = draw(st.sampled_from(list(tokens))).encode("utf-8", "surrogatepass")
        elif how == "duplicate":
            start = out.rfind(b"\n", 0, at) + 1
            end = out.find(b"\n", at)
            line = out[start : end + 1 if end >= 0 else len(out)]
            out[start:start] = line * draw(st.sampled_from([1, 2, 1000]))
        elif how == "flip" and at < len(out):
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif how == "delete":
            del out[at : at + draw(st.integers(1, 64))]
        elif how == "truncate":
            del out[at:]
        elif how == "nest":
            depth = draw(st.sampled_from([50, 1000, 100_000]))
            pair = draw(st.sampled_from([("[", "]"), ("{", "}")]))
            out[at:at] = (pair[0] * depth + pair[1] * depth).encode()
    return reencoded(draw, bytes(out))


def reencoded(draw: st.DrawFn, data: bytes) -> Blob:
    """Maybe ``data`` in another encoding or with other line endings."""
    how = draw(st.sampled_from([None, None, "encoding", "newlines"]))
    if how == "encoding":
        return Blob(encode_as(data, draw(st.sampled_from(ENCODINGS))))
    if how == "newlines":
        return Blob(with_newlines(data, draw(st.sampled_from(NEWLINES))))
    return Blob(data)


def encode_as(data: bytes, encoding: str) -> bytes:
    text = data.decode("utf-8", "replace")
    if encoding == "bom-twice":
        return b"\xef\xbb\xbf\xef\xbb\xbf" + data
    if encoding == "nul":
        return data.replace(b"\n", b"\x00\n")
    if encoding == "latin-1":  # an accented letter, so the bytes are not UTF-8
        return (text.replace("e", "\u00e9", 1) + "\n# caf\u00e9\n").encode("latin-1", "replace")
    return text.encode(encoding, "replace")


def with_newlines(data: bytes, newline: str) -> bytes:
    if newline == "mixed":
        lines = data.split(b"\n")
        return b"".join(line + (b"\r\n" if i % 2 else b"\r") for i, line in enumerate(lines))
    return data.replace(b"\r\n", b"\n").replace(b"\n", newline.encode())


def _replace_match(out: bytearray, pattern: re.Pattern[bytes], at: int, new: str) -> None:
    """Replace the first match of ``pattern`` at or after ``at`` (else the last one)."""
    found = pattern.search(out, at) or _last(pattern, out)
    if found:
        out[found.start() : found.end()] = new.encode("utf-8", "surrogatepass")


def _last(pattern: re.Pattern[bytes], data: bytearray) -> re.Match[bytes] | None:
    last = None
    for last in pattern.finditer(data):  # noqa: B007 (the last one is wanted)
        pass
    return last


# Files no spec can be, put beside the specs: a pipe and a device (a read never
# ends), links that loop, dangle, climb out or lead to a file that is no spec, and a
# folder named like a spec file.
ODD_FILES = ["fifo", "dev-zero", "link-loop", "dangling-link", "link-out", "link-up",
             "folder"]  # fmt: skip


def make_odd_file(path: Path, kind: str) -> None:
    """Make ``path`` an odd file of ``kind`` (one of :data:`ODD_FILES`)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "link-loop":
        path.symlink_to(path.name)
    elif kind == "dangling-link":
        path.symlink_to("missing.yaml")
    elif kind == "link-out":
        path.symlink_to("/etc/passwd")
    elif kind == "link-up":
        path.symlink_to("..")
    elif kind == "folder":
        path.mkdir()
        (path / "inner.yaml").write_text("roofgen: 1\nkind: case\n", encoding="utf-8")


# Values a dump of a data structure cannot write (a number past Python's 4,300-digit
# limit, a nest deeper than the recursion limit): the string RAW stands in for one,
# replaced in the dumped text.
RAW = "zz-raw-zz"
RAW_VALUES = ["1e999999999", "9" * 5000, "-0", "[" * 100_000 + "]" * 100_000]


def hostile_value(raw_numbers: bool = True) -> st.SearchStrategy[Any]:
    """A value to put where something else belongs: null, a wrong type, an empty or
    huge or deeply nested container, a hostile number or quantity, a huge string."""
    plain = st.sampled_from([
        None, True, False, 0, -1, 2**64, 1e-320, -0.0, math.nan, math.inf, -math.inf, "", [],
        {}, {"": None}, "1e999999999 ms", "1e-320 ms", "NaN TB/s", "-0 ms", "1e300 MHz",
        "inf TFLOP/s", "1e308 FLOP", "-1 GB", "0 TB/s", "1 parsec", "x" * 200_000,
        "\U0001f680 site", "2200-01-01", "1960-01-01", ["x"] * 10_000,
    ])  # fmt: skip
    nested = st.sampled_from([10, 100]).map(_nest)  # deeper nests: raw text (RAW_VALUES)
    values = plain | nested | st.text(max_size=8) | st.integers() | st.floats()
    if raw_numbers:
        values = values | st.just(RAW)
    return values


def _nest(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def tree_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a tree of dicts and lists, the root first."""
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += tree_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            out += tree_paths(child, (*prefix, i))
    return out


def replace_at(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``tree`` with the value at ``path`` replaced (``tree`` itself is changed)."""
    if not path:
        return value
    parent = tree
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return tree
