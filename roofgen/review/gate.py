"""The regression gate of `roofgen diff`: one policy, every way around it named. Pure.

``--fail-on-regression PCT`` fails a pull request on a significant slowdown beyond PCT.
A pull request declares its own times, so the gate also fails on what would otherwise
let a slowdown through unseen, unless the command line allows it by name:

* a case, variant or kernel removed at head (a rename is a removal and an addition:
  nothing is compared any more) -- ``--allow-removed CASE[/VARIANT]``;
* a slowdown beyond the limit whose noise is unknown (a side has no timing interval),
  or that is within noise only because the head's interval widened to cover it (with
  the base's spread around the head's time, the intervals would not overlap) --
  ``--allow-noise CASE[/VARIANT]``;
* a change of context: the settings file, the rules file, or a machine file that a
  compared case runs on -- ``--allow-context settings|rules|machine:ID``.

The policy itself (the limit, the thresholds, the rules) comes from the base or the
command line, never from the head (:mod:`roofgen.review.revision`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from roofgen.review.diff import Change, Diff

ReasonKind = Literal["regression", "removed", "unknown noise", "widened", "context"]


@dataclass(frozen=True)
class ContextChange:
    """A change of what the times are judged by, named as ``--allow-context`` takes it."""

    name: str  # "settings", "rules" or "machine:ID"
    what: str  # in words, e.g. "the settings file roofgen.toml changed"


@dataclass(frozen=True)
class Policy:
    """The gate's limit (a fraction: 0.05 for 5%) and what the command line allows."""

    limit: float
    removed: frozenset[str] = frozenset()  # CASE or CASE/VARIANT
    noise: frozenset[str] = frozenset()  # CASE or CASE/VARIANT
    context: frozenset[str] = frozenset()  # settings, rules, machine:ID


@dataclass(frozen=True)
class Reason:
    """One reason for the gate to fail: what (``subject``, quoted from the specs or the
    settings: untrusted), why in words, and the option that allows it (None: nothing
    does) and whether the command line gave it."""

    kind: ReasonKind
    subject: str
    what: str
    allow: str | None
    allowed: bool


def _who(c: Change) -> str:
    if not c.kernel:
        return f"{c.case}/{c.variant}"
    return f"{c.case}/{c.variant}/{c.kernel}" + (f"#{c.occurrence}" if c.occurrence > 1 else "")


def _named(c: Change, names: frozenset[str]) -> bool:
    return c.case in names or f"{c.case}/{c.variant}" in names


def _one_per_variant(changes: list[Change]) -> list[Change]:
    """Launches, and a variant only where none of its launches is listed: one reason
    per thing a reader can act on."""
    launched = {(c.case, c.variant) for c in changes if c.kernel}
    return [c for c in changes if c.kernel or (c.case, c.variant) not in launched]


def widened(c: Change) -> bool:
    """Whether a slowdown is within noise only because the head's interval is wider than
    the base's: with the base's relative spread around the head's time, the two
    intervals would not overlap."""
    a, b = c.base_interval, c.head_interval
    if a is None or b is None or not c.base_s or not c.head_s or c.head_s <= c.base_s:
        return False
    if a.low_s <= 0 or b.low_s <= 0 or b.high_s / b.low_s <= a.high_s / a.low_s:
        return False
    return c.head_s * a.low_s / c.base_s > a.high_s


def _removed(d: Diff, policy: Policy) -> list[Reason]:
    out = [Reason("removed", case, "case removed at head (not compared any more)",
                  f"--allow-removed {case}", case in policy.removed)
           for case in d.cases_removed]  # fmt: skip
    gone = set(d.cases_removed)
    for c in (*d.variants, *d.launches):
        if c.status != "removed" or c.case in gone:
            continue
        what = "kernel launch removed at head" if c.kernel else "variant removed at head"
        out.append(Reason("removed", _who(c), what + " (a rename is a removal: not compared)",
                          f"--allow-removed {c.case}/{c.variant}",
                          _named(c, policy.removed)))  # fmt: skip
    return out


def _slower(d: Diff, policy: Policy) -> list[Reason]:
    limit = policy.limit
    out = [Reason("regression", _who(c), f"{c.slowdown():.0%} slower, a significant regression "
                  f"beyond the limit of {limit * 100:g}%", None, False)
           for c in _one_per_variant(d.regressions(limit))]  # fmt: skip
    moved = [c for c in (*d.variants, *d.launches)
             if c.status == "changed" and c.slowdown() > limit]  # fmt: skip
    for c in _one_per_variant([c for c in moved if c.verdict == "unknown noise"]):
        what = (f"{c.slowdown():.0%} slower with unknown noise (no timing interval at "
                f"{'base' if c.base_interval is None else 'head'}): nothing shows the move "
                "is noise")  # fmt: skip
        out.append(Reason("unknown noise", _who(c), what, f"--allow-noise {c.case}/{c.variant}",
                          _named(c, policy.noise)))  # fmt: skip
    for c in _one_per_variant([c for c in moved if c.verdict == "within noise" and widened(c)]):
        what = (f"{c.slowdown():.0%} slower, within noise only because the head's timing "
                "interval widened to cover it")  # fmt: skip
        out.append(Reason("widened", _who(c), what, f"--allow-noise {c.case}/{c.variant}",
                          _named(c, policy.noise)))  # fmt: skip
    return out


def reasons(d: Diff, context: tuple[ContextChange, ...], policy: Policy) -> list[Reason]:
    """Every reason for the gate to fail, allowed or not, regressions first."""
    out = _slower(d, policy)
    out += _removed(d, policy)
    out += [Reason("context", ch.name, ch.what + " (the gate's context)",
                   f"--allow-context {ch.name}", ch.name in policy.context)
            for ch in context]  # fmt: skip
    return out


def failures(rs: list[Reason]) -> list[Reason]:
    """The reasons the command line did not allow: the gate fails on any."""
    return [r for r in rs if not r.allowed]
