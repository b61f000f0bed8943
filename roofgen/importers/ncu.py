"""``roofgen import ncu``: Nsight Compute profiles into a new case or a new variant."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from roofgen.importers import Imported, ImportFailure
from roofgen.importers.ncu_case import (
    Built,
    Options,
    build_variant,
    group_launches,
    method_text,
)
from roofgen.importers.ncu_csv import Profile, read_profiles
from roofgen.importers.ncu_metrics import MachineView
from roofgen.machines.lookup import FoundMachine
from roofgen.spec.library import pin_text
from roofgen.spec.roundtrip import (
    dump,
    lf_text,
    load_round_trip,
    make_yaml,
    only_added,
    schema_comment,
)

REPORT_SUFFIXES = (".ncu-rep", ".ncu-repz")


def read(paths: Sequence[Path]) -> Profile:
    """CSV exports, or .ncu-rep reports through NVIDIA's ncu_report package."""
    reports = [p for p in paths if p.suffix in REPORT_SUFFIXES]
    if reports and len(reports) != len(paths):
        raise ImportFailure("import either .ncu-rep reports or CSV files, not both at once")
    if reports:
        from roofgen.importers.ncu_rep import read_reports

        return read_reports(reports)
    return read_profiles(paths)


def _ref(machine: FoundMachine) -> Any:
    from roofgen.importers.ncu_case import _flow

    if machine.version is not None:
        return _flow(("id", machine.id), ("version", machine.version))
    return machine.id


def _profile_warnings(profile: Profile) -> list[str]:
    out = [f"Nsight Compute said: {m}" for m in profile.tool_messages]
    out += [f"files disagree: {c}" for c in profile.conflicts]
    return out


def new_case(
    paths: Sequence[Path],
    machine: FoundMachine,
    target: Path | None,
    options: Options,
    case_id: str,
    title: str | None,
    only_mapped: bool = False,
) -> Imported:
    from ruamel.yaml.comments import CommentedSeq

    from roofgen.importers.ncu_case import _cm

    profile = read(paths)
    groups = group_launches(profile, options.kernel_map, only_mapped)
    view = MachineView(machine.data)
    built = build_variant(groups, view, None, set(), options)
    root = _cm(("roofgen", 1), ("kind", "case"), ("id", case_id))
    root["title"] = title or f"Nsight Compute profile: {', '.join(p.name for p in paths)}"
    root["machines"] = CommentedSeq([_ref(machine)])
    clocks, caches = method_text(options, built.sm_clock, built.clock_moved)
    root["method"] = _cm(
        (
            "description",
            "Nsight Compute replay (`ncu --csv`); each figure's comment names "
            "the metric it came from.",
        ),
        ("clock_control", clocks),
        ("cache_control", caches),
    )
    root["kernels"] = CommentedSeq(built.kernels)
    root["variants"] = CommentedSeq([built.variant])
    schema_line = _schema_line(target or Path.cwd() / "case.yaml")
    root.yaml_set_start_comment(schema_line.removeprefix("# "))
    root.yaml_set_comment_before_after_key("id", before=_header(paths, machine))
    _fits(root, built)
    text = dump(make_yaml(), root)
    _validate(text, machine, None)
    return Imported(text, _profile_warnings(profile) + built.warnings, _kernel_ids(built))


def _schema_line(target: Path) -> str:
    """The editor line ``roofgen new case`` writes: the nearest ``.roofgen/`` schema that
    ``roofgen init`` writes (read offline), else the nearest ``schemas/`` one, else the
    published id."""
    import os

    folder = target.resolve().parent
    for parent in (folder, *folder.parents):
        candidate = parent / ".roofgen" / "case.schema.json"
        if candidate.is_file():
            relative = os.path.relpath(candidate, folder).replace(os.sep, "/")
            return f"# yaml-language-server: $schema={relative}"
    return schema_comment(target, "case")


def _fits(case: Any, built: Built) -> None:
    """Refuse, before the slow write, a case with more values than a spec file may hold
    (10,000 kernels made one that took minutes to write and then did not check)."""
    from roofgen.spec.yamlload import MAX_NODES

    count, stack = 0, [case]
    while stack and count <= MAX_NODES:  # values as YAML counts them: keys, items, nodes
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            count += 1 + len(item)  # its start and end, and each key
            stack += item.values()
        elif isinstance(item, list):
            count += 1
            stack += item
    if count > MAX_NODES:
        launches = len(built.variant["launches"])
        raise ImportFailure(
            f"the profile makes {launches:,} launch entries, more than one case file may "
            f"hold ({MAX_NODES:,} values): import fewer kernels (--kernel-map REGEX=ID "
            "--only-mapped, or ncu --kernel-name and --launch-count when profiling)"
        )


def _kernel_ids(built: Built) -> list[str]:
    return [launch["kernel"] for launch in built.variant["launches"]]


def _header(paths: Sequence[Path], machine: FoundMachine) -> str:
    import textwrap

    text = (
        f"Imported by `roofgen import ncu` from {', '.join(p.name for p in paths)} for "
        f"machine {machine.id} ({machine.origin}). Each figure's comment names the Nsight "
        "Compute metric it came from. roofgen cannot tell what a kernel computes: set each "
        "kernel's operator kind and shape."
    )
    return "\n".join(textwrap.wrap(text, 86, break_on_hyphens=False))


def into_case(
    paths: Sequence[Path],
    machine: FoundMachine,
    case_path: Path,
    options: Options,
    only_mapped: bool = False,
    other_machines: dict[str, dict[str, Any]] | None = None,
) -> Imported:
    raw = _case_bytes(case_path)
    before = lf_text(raw)
    yaml, data = _round_trip(before, case_path)
    variants = data.get("variants") or []
    if any(isinstance(v, dict) and v.get("id") == options.variant for v in variants):
        raise ImportFailure(
            f"{case_path}: the case already has a variant {options.variant!r}: choose another "
            "name with --variant (roofgen only adds to a case, it never replaces a variant)"
        )
    refs = data.get("machines") or []
    ids = [r if isinstance(r, str) else r.get("id") for r in refs]
    if machine.id not in ids:
        plain = refs and all(isinstance(r, str) for r in refs)
        refs.append(machine.id if plain and machine.version is None else _ref(machine))
        if len(ids) == 1:  # the case now lists two machines: say which the old variants ran on
            _name_machine(variants, str(ids[0]))
        ids.append(machine.id)
    variant_machine = machine.id if len(ids) > 1 else None
    known = {str(k.get("id")) for k in data.get("kernels") or [] if isinstance(k, dict)}
    profile = read(paths)
    groups = group_launches(profile, options.kernel_map, only_mapped)
    built = build_variant(groups, MachineView(machine.data), variant_machine, known, options)
    built.warnings += _taken_as(groups, data.get("kernels") or [])
    data["kernels"].extend(built.kernels)
    data["variants"].append(built.variant)
    _fits(data, built)
    after = dump(yaml, data)
    changed = only_added(before, after)
    if changed:
        raise ImportFailure(
            f"{case_path}: adding the variant would rewrite lines that are already there "
            f"({'; '.join(changed[:3])}): nothing was written; add the variant by hand or "
            "write it to a new file with -o"
        )
    _validate(after, machine, before, other_machines or {})
    return Imported(after, _profile_warnings(profile) + built.warnings, _kernel_ids(built))


# Where a problem stops --into: the lists it reads and extends, and the machines in them.
_EDITED = re.compile(r"^(machines|kernels|variants)$|^machines\[\d+\]$")
_EDITED_MISSING = re.compile(r"^missing required key '(machines|kernels|variants)'")


def _case_bytes(case_path: Path) -> bytes:
    """The case file's bytes, once roofgen reads it as a case whose machines, kernels
    and variants are lists: a duplicate key, Latin-1 bytes, ``kernels: null`` or
    ``machines: a100`` ended in an internal error."""
    from roofgen.problems import Severity
    from roofgen.spec import schema
    from roofgen.spec.yamlload import load_bytes

    try:
        raw = case_path.read_bytes()
    except OSError as exc:
        raise ImportFailure(f"{case_path}: cannot read the file: {exc.strerror}") from None
    doc, problems = load_bytes(raw, str(case_path))
    if doc is not None and not problems:
        if not isinstance(doc.data, dict) or doc.data.get("kind") != "case":
            raise ImportFailure(f"{case_path}: not a case file (kind: case)")
        problems = [
            p
            for p in schema.validate(doc, "case")
            if p.severity is Severity.ERROR
            and (_EDITED.match(p.path) or _EDITED_MISSING.match(p.message) and not p.path)
        ]
    if problems:
        raise ImportFailure(
            *[p.format() for p in problems],
            f"{case_path}: --into adds a variant to a case roofgen can read: fix the "
            f"case first (roofgen check {case_path})",
        )
    return raw


def _round_trip(text: str, case_path: Path) -> tuple[Any, Any]:
    """The case loaded by ruamel.yaml, which keeps its comments and layout; a line it
    cannot read (a tab before a comment, which YAML allows) is refused with its place."""
    from ruamel.yaml.error import MarkedYAMLError

    try:
        return load_round_trip(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{case_path}:{mark.line + 1}:{mark.column + 1}" if mark else str(case_path)
        problem = exc.problem or exc.context or "unreadable"
        hint = "replace the tab with spaces" if "'\\t'" in problem else "write it another way"
        raise ImportFailure(
            f"{where}: roofgen adds lines to a case with ruamel.yaml, which cannot read "
            f"this line ({problem}): {hint}"
        ) from None


def _taken_as(groups: list[Any], kernels: list[Any]) -> list[str]:
    """Profiled kernels matched to a case kernel by a made-up id, not by --kernel-map."""
    names = {str(k.get("id")): k.get("name") for k in kernels if isinstance(k, dict)}
    out = []
    for group in groups:
        if group.mapped or group.kernel not in names or names[group.kernel] in (None, group.name):
            continue
        out.append(
            f"the profile's {group.name!r} was taken as the case's kernel {group.kernel!r} "
            f"({names[group.kernel]!r}) by its name; use --kernel-map to choose"
        )
    return out


def _name_machine(variants: list[Any], machine_id: str) -> None:
    from ruamel.yaml.comments import CommentedMap

    for variant in variants:
        if isinstance(variant, CommentedMap) and "machine" not in variant:
            keys = list(variant)
            position = keys.index("id") + 1 if "id" in keys else 0
            variant.insert(position, "machine", machine_id)


def _validate(
    text: str,
    machine: FoundMachine,
    before: str | None,
    others: dict[str, dict[str, Any]] | None = None,
) -> None:
    """The case written must check clean (problems already in the file are not ours)."""
    new = _problems(text, machine, others or {})
    if before is not None:
        old = {(p.path, p.message) for p in _problems(before, machine, others or {})}
        new = [p for p in new if (p.path, p.message) not in old]
    if new:
        raise ImportFailure(
            "the case roofgen built does not check; nothing was written. Please report this:",
            *[p.format() for p in new],
        )


def _problems(text: str, machine: FoundMachine, others: dict[str, dict[str, Any]]) -> list[Any]:
    from roofgen.problems import Severity
    from roofgen.spec import crossrefs, schema
    from roofgen.spec.yamlload import load_text

    doc, problems = load_text(text, "case")
    if doc is None:
        return problems
    problems = schema.validate(doc, "case")
    if problems:
        return problems
    machines = {**others, machine.id: machine.data}
    refs = {r if isinstance(r, str) else r["id"] for r in doc.data["machines"]}
    broken = refs - set(machines)
    found = crossrefs.check_case(doc, machines, broken)
    return [p for p in found if p.severity is Severity.ERROR]


def pin_hint(machine: FoundMachine) -> str | None:
    if machine.from_library and machine.version is not None:
        return pin_text(machine.id, machine.version)
    return None
