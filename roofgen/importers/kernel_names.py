"""Kernel ids from the names Nsight Compute reports, and ``--kernel-map``.

A kernel's id is made from its function's name: ``void gemm_v1<float>(float *, ...)``
gives ``gemm_v1``, a mangled ``_Z7gemm_v1IfEvPT_...`` too. Each step reads a name
once, so names of any length and nesting cost linear time; and an importer cuts a
name to :data:`MAX_NAME` characters (:func:`clean_name`) before any other step, so a
name's cost is bounded too.

An id is at most 64 characters (what a spec's id may be) with its ``-N`` suffix, and
never a name Windows keeps for a device (``con``, ``nul``, ...): such a name gets
``-kernel`` after it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["MAX_NAME", "KernelIds", "KernelMap", "clean_name", "derived_id", "kernel_id",
           "suffixed"]  # fmt: skip

_ID_OK = re.compile(r"^[a-z0-9][a-z0-9._-]*$")

#: Characters of a kernel's name kept: demangled template names of CUTLASS and CuTe
#: kernels run to a few thousand; the rest of a longer one is cut (ending in "…").
MAX_NAME = 4096
MAX_ID = 64  # roofgen.spec.ids.MAX_ID_LENGTH (spec sits below the importers)
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$")
# What YAML cannot hold: C0 controls but tab, LF and CR; DEL; C1 controls but NEL.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]")
_UNPAIRED = re.compile("[\ud800-\udfff\ufffe\uffff]")  # lone surrogates, non-characters


@dataclass(frozen=True)
class KernelMap:
    """``--kernel-map REGEX=ID``: kernel names matching REGEX get the kernel id ID."""

    pattern: re.Pattern[str]
    kernel: str

    @classmethod
    def parse(cls, text: str) -> KernelMap:
        regex, sep, kernel = text.rpartition("=")
        if not sep or not regex or not _ID_OK.match(kernel):
            raise ValueError(
                f"--kernel-map {text!r}: write REGEX=ID, where ID uses lower-case letters, "
                "digits, '.', '_' and '-'"
            )
        try:
            return cls(re.compile(regex), kernel)
        except re.error as exc:
            raise ValueError(f"--kernel-map {text!r}: bad regular expression: {exc}") from None


def kernel_id(name: str, kernel_map: Sequence[KernelMap] = ()) -> str | None:
    """The kernel id for a kernel name: the first matching map, else one made from the
    name's function (``void gemm_v1<float>(float *, ...)`` -> ``gemm_v1``)."""
    for entry in kernel_map:
        if entry.pattern.search(name):
            return entry.kernel
    return None


def clean_name(name: str) -> str:
    """A kernel's name as a case keeps it: at most :data:`MAX_NAME` characters (cut
    first, so nothing after costs more), a control character written as its escape
    (``ESC`` -> ``\\x1b``, visible where the tool's name had it), and a lone surrogate
    or a non-character (which no UTF-8 file can hold) replaced by U+FFFD."""
    if len(name) > MAX_NAME:
        name = name[: MAX_NAME - 1] + "\u2026"
    name = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", name)
    return _UNPAIRED.sub("\ufffd", name)


def derived_id(name: str) -> str:
    """The id made from a name's function (its first :data:`MAX_NAME` characters)."""
    name = name[:MAX_NAME]
    base = _mangled_name(name) if name.startswith("_Z") else _function_name(name)
    ident = re.sub(r"[^a-z0-9._-]+", "-", base.lower()).strip("-._")
    ident = ident[:MAX_ID].rstrip("-._")
    if _RESERVED.match(ident):
        ident = f"{ident[: MAX_ID - 7]}-kernel"
    return ident or "kernel"


def suffixed(base: str, n: int) -> str:
    """The ``n``-th id made from ``base``: ``base`` itself, then ``base-2``, ... each at
    most 64 characters (``base`` cut to make room for its suffix)."""
    if n <= 1:
        return base
    suffix = f"-{n}"
    return base[: MAX_ID - len(suffix)].rstrip("-._") + suffix


def _function_name(name: str) -> str:
    depth = 0
    cut = len(name)
    for i, ch in enumerate(name):  # the argument list: the first '(' outside templates
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth <= 0:
            cut = i
            break
    head = _without_templates(name[:cut])
    head = head.split("<", 1)[0] or head  # a template still open (a name cut short)
    head = head.strip().split()[-1] if head.strip() else name
    return head.split("::")[-1]


def _without_templates(text: str) -> str:
    """``text`` without its balanced ``<...>`` groups, nested ones included; a bracket
    without its partner stays. One pass: removing the innermost group again and again
    took minutes for a name nested 60,000 deep."""
    out: list[str] = []
    opened: list[int] = []  # where in ``out`` each '<' still open stands
    for ch in text:
        if ch == "<":
            opened.append(len(out))
            out.append(ch)
        elif ch == ">" and opened:
            del out[opened.pop() :]  # each character is deleted at most once
        else:
            out.append(ch)
    return "".join(out)


_LENGTH = re.compile(r"[0-9]{1,10}")  # a longer length names more than any symbol holds


def _mangled_name(name: str) -> str:
    """The last name component of an Itanium-mangled symbol (``_Z7gemm_v1...``)."""
    pos = 2
    if name[pos : pos + 1] == "N":
        pos += 1
        while name[pos : pos + 1] in ("K", "V", "r"):
            pos += 1
    last = name
    while (match := _LENGTH.match(name, pos)) is not None:
        start = match.end()
        last = name[start : start + int(match.group())]
        pos = start + len(last)
        if len(last) < int(match.group()):  # the name ends inside this component
            break
    return last


class KernelIds:
    """Ids made from kernel names. Different kernels whose names give the same id
    (``a::k``, ``b::k``) get ``k``, ``k-2``, ...; launches of one kernel keep one id.
    Each name is read once and each id's next suffix is kept, so 10,000 instances of
    one template cost linear time, not a search through every suffix taken."""

    def __init__(self) -> None:
        self.by_name: dict[str, str] = {}
        self.taken: set[str] = set()
        self.next: dict[str, int] = {}

    def of(self, name: str) -> str:
        known = self.by_name.get(name)
        if known is not None:
            return known
        base = derived_id(name)
        candidate, n = base, self.next.get(base, 1)
        while candidate in self.taken:
            n += 1
            candidate = suffixed(base, n)
        self.next[base] = n
        self.taken.add(candidate)
        self.by_name[name] = candidate
        return candidate
