"""Spec format versions and the migrations between them.

Every spec file starts with its format version (``roofgen: 1``). When the format
changes, the version goes up and a migration moves files from the old version to
the new one: :data:`MIGRATIONS` maps each old version to the function that turns
a document of that version into one of the next. ``roofgen migrate`` applies them
in order, editing each file round-trip with ruamel.yaml, so comments, key order,
quoting and indentation stay as the author wrote them; only the lines a
migration has to change change.

Version 0 is the layout of roofgen's pre-release drafts, the one older format
this roofgen can migrate:

* a measurement wrote the bytes of each memory level as flat keys,
  ``bytes_hbm: 805 MB``; version 1 groups them, ``bytes: {hbm: 805 MB}``;
* a compute unit's ``peaks`` were a list of ``{precision: bf16, value: 312 TFLOP/s}``
  entries; version 1 maps each precision to its roof, ``peaks: {bf16: 312 TFLOP/s}``.

Within the current version, a renamed key is moved to its new name too (its old name
still loads, with a warning): :data:`RENAMES`.

* ``power.idle`` of a machine is ``power.constant``: Choi's constant power under load,
  which is not idle power.

This module imports ruamel.yaml only when it migrates, so the loader can ask it
which versions are migratable at no cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from roofgen.version import SPEC_FORMAT_VERSION

__all__ = [
    "CURRENT",
    "MIGRATIONS",
    "Migration",
    "MigrationError",
    "Result",
    "can_migrate",
    "migrate_text",
    "read_version",
]

CURRENT = SPEC_FORMAT_VERSION


class MigrationError(Exception):
    """A file cannot be migrated; the message says why."""


@dataclass(frozen=True)
class Migration:
    """Moves a document from format version ``source`` to ``source + 1``.

    ``apply(data, kind)`` edits the ruamel.yaml document in place and returns one
    line per change, for the report.
    """

    source: int
    summary: str
    apply: Callable[[Any, str], list[str]]

    @property
    def target(self) -> int:
        return self.source + 1


# --------------------------------------------------------------------------- 0 -> 1

_FLAT_BYTES = re.compile(r"^bytes_([a-z0-9][a-z0-9._-]*)$")


def _v0_to_v1(data: Any, kind: str) -> list[str]:
    notes: list[str] = []
    if kind == "case":
        for v, variant in enumerate(_seq(data.get("variants"))):
            for i, launch in enumerate(_seq(variant.get("launches") if _is_map(variant) else None)):
                if not _is_map(launch):
                    continue
                where = f"variants[{v}].launches[{i}]"
                notes += _fold_bytes(launch.get("measurement"), f"{where}.measurement")
                for p, point in enumerate(_seq(launch.get("sweep"))):
                    if _is_map(point):
                        notes += _fold_bytes(
                            point.get("measurement"), f"{where}.sweep[{p}].measurement"
                        )
    elif kind == "machine":
        for u, unit in enumerate(_seq(data.get("compute"))):
            if _is_map(unit):
                notes += _peaks_to_mapping(unit, f"compute[{u}].peaks")
    return notes


def _fold_bytes(measurement: Any, where: str) -> list[str]:
    """``bytes_<level>: V`` keys -> one ``bytes: {<level>: V}`` mapping, in place."""
    from ruamel.yaml.comments import CommentedMap

    if not _is_map(measurement):
        return []
    flat = [k for k in measurement if isinstance(k, str) and _FLAT_BYTES.match(k)]
    if not flat:
        return []
    if "bytes" in measurement:
        raise MigrationError(f"{where}: has both 'bytes' and {', '.join(flat)}: merge them by hand")
    grouped = CommentedMap()
    if measurement.fa.flow_style():
        grouped.fa.set_flow_style()
    position = list(measurement).index(flat[0])
    for key in flat:
        level = key.removeprefix("bytes_")
        grouped[level] = measurement[key]
        comment = measurement.ca.items.pop(key, None)
        if comment is not None:
            grouped.ca.items[level] = comment
        del measurement[key]
    measurement.insert(position, "bytes", grouped)
    return [f"{where}: {', '.join(flat)} -> bytes: {{{', '.join(grouped)}}}"]


def _peaks_to_mapping(unit: Any, where: str) -> list[str]:
    """``peaks: [{precision: P, value: V}, ...]`` -> ``peaks: {P: V, ...}``, in place."""
    from ruamel.yaml.comments import CommentedMap

    peaks = unit.get("peaks")
    if not isinstance(peaks, list):
        return []
    mapping = CommentedMap()
    style = getattr(peaks, "fa", None)
    if style is not None and style.flow_style():
        mapping.fa.set_flow_style()
    for i, entry in enumerate(peaks):
        if not _is_map(entry) or "precision" not in entry or "value" not in entry:
            raise MigrationError(
                f"{where}[{i}]: a version-0 peak is {{precision: P, value: ROOF}}; "
                "fix this entry by hand"
            )
        extra = sorted(set(entry) - {"precision", "value"})
        if extra:
            raise MigrationError(f"{where}[{i}]: unexpected keys {', '.join(extra)}")
        precision = str(entry["precision"])
        if precision in mapping:
            raise MigrationError(f"{where}[{i}]: precision {precision!r} is listed twice")
        mapping[precision] = entry["value"]
        comment = _entry_comment(peaks, i, entry)
        if comment is not None:
            mapping.ca.items[precision] = [None, None, comment, None]
    position = list(unit).index("peaks")
    key_comment = unit.ca.items.get("peaks")
    del unit["peaks"]
    unit.insert(position, "peaks", mapping)
    if key_comment is not None:
        unit.ca.items["peaks"] = key_comment
    return [f"{where}: a list of {{precision, value}} -> a mapping {{{', '.join(mapping)}}}"]


def _entry_comment(seq: Any, index: int, entry: Any) -> Any:
    """The comment after a list entry (on its line, and whole lines below it)."""
    comment = None
    items = getattr(seq, "ca", None)
    if items is not None and index in items.items and items.items[index]:
        comment = items.items[index][0]
    inner = entry.ca.items.get("value") or entry.ca.items.get("precision")
    if inner is not None and inner[2] is not None:
        comment = inner[2]
    return comment


def _is_map(value: Any) -> bool:
    return isinstance(value, dict)


def _seq(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


#: from version -> the migration to the next version.
MIGRATIONS: dict[int, Migration] = {
    0: Migration(
        0,
        "flat bytes_<level> keys become a 'bytes' mapping; a unit's list of peaks "
        "becomes a mapping of precision to roof",
        _v0_to_v1,
    ),
}


def _rename_idle(data: Any, kind: str) -> list[str]:
    power: Any = data.get("power") if kind == "machine" else None
    if not _is_map(power) or "idle" not in power or "constant" in power:
        return []
    position = list(power).index("idle")
    comment = power.ca.items.pop("idle", None)
    value = power.pop("idle")
    power.insert(position, "constant", value)
    if comment is not None:
        power.ca.items["constant"] = comment
    return ["power.idle -> power.constant (constant power under load, not idle power)"]


#: renames within the current version: (a quick test on the text, the edit).
RENAMES: tuple[tuple[re.Pattern[str], Callable[[Any, str], list[str]]], ...] = (
    (re.compile(r"^[ \t]*idle[ \t]*:", re.MULTILINE), _rename_idle),
)


def pending_renames(text: str) -> bool:
    """Whether a file of the current version may hold a key that has been renamed."""
    return any(pattern.search(text) for pattern, _ in RENAMES)


def can_migrate(version: object) -> bool:
    """Whether ``migrate`` can bring a file of ``version`` to :data:`CURRENT`."""
    if not isinstance(version, int) or isinstance(version, bool) or version >= CURRENT:
        return False
    return all(v in MIGRATIONS for v in range(version, CURRENT))


# --------------------------------------------------------------------------- files


@dataclass
class Result:
    """One file's migration: versions before and after, the new text, the changes."""

    before: int
    after: int
    text: str
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.before != self.after or bool(self.notes)


_VERSION_LINE = re.compile(r"^roofgen:[ \t]*(\S+)", re.MULTILINE)


def read_version(text: str) -> object:
    """The format version a spec file declares (its ``roofgen:`` key), read without
    loading the file; None when there is none."""
    import yaml

    match = _VERSION_LINE.search(text)
    if match is None:
        return None
    try:
        return yaml.safe_load(match.group(1).split("#")[0])
    except (yaml.YAMLError, ValueError, IndexError, RecursionError):  # 5,000 digits; a deep nest
        return match.group(1)


def migrate_text(text: str) -> Result:
    """``text`` moved to the current format version (unchanged when it is already)."""
    from roofgen.spec.roundtrip import dump, load_round_trip

    version = read_version(text)
    if version == CURRENT and not pending_renames(text):
        return Result(CURRENT, CURRENT, text)
    if version != CURRENT and not can_migrate(version):
        raise MigrationError(_cannot(version))
    try:
        yaml, data = load_round_trip(text)
    except Exception as exc:  # ruamel's errors carry the position in their text
        raise MigrationError(f"not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict) or data.get("kind") not in ("machine", "case"):
        raise MigrationError("not a spec file: 'kind' must be 'machine' or 'case'")
    assert isinstance(version, int)
    result = Result(version, version, text)
    while result.after < CURRENT:
        migration = MIGRATIONS[result.after]
        result.notes += migration.apply(data, str(data["kind"]))
        result.after = migration.target
        data["roofgen"] = result.after
    for _, rename in RENAMES:
        result.notes += rename(data, str(data["kind"]))
    if result.changed:
        result.text = dump(yaml, data)
    return result


def _cannot(version: object) -> str:
    if version is None:
        return "no 'roofgen:' version key: not a spec file"
    if isinstance(version, int) and not isinstance(version, bool) and version > CURRENT:
        return (
            f"spec format version {version} is newer than this roofgen's ({CURRENT}): "
            "upgrade roofgen"
        )
    oldest = min(MIGRATIONS, default=CURRENT)
    shown = repr(version) if len(repr(version)) <= 40 else repr(version)[:36] + "...'"
    return f"spec format version {shown} cannot be migrated (from {oldest} to {CURRENT} only)"
