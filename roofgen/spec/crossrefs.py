"""Checks across documents: ids, and references to machines, units, levels, links."""

from __future__ import annotations

from typing import Any

from roofgen.problems import Problem, Severity
from roofgen.spec.ids import check_date, check_ids, check_texts, check_titles
from roofgen.spec.operators import check_operators
from roofgen.spec.timestats import check_time
from roofgen.spec.yamlload import Document, PathKey


def _dupes(doc: Document, items: list[dict[str, Any]], base: PathKey, what: str) -> list[Problem]:
    seen: dict[str, int] = {}
    problems = []
    for i, item in enumerate(items):
        ident = item["id"]
        if ident in seen:
            problems.append(
                doc.problem(
                    (*base, i, "id"),
                    f"{what} id {ident!r} is used twice (also {base[-1]}[{seen[ident]}]): "
                    "give each a different id",
                    code="ref.duplicate-id",
                )
            )
        else:
            seen[ident] = i
    return problems


def _unknown(name: str, what: str, valid: list[str] | Any) -> str:
    valid = sorted(valid)
    listing = ", ".join(valid) if valid else "none"
    return f"unknown {what} {name!r}; known: {listing}"


def check_machine(doc: Document) -> list[Problem]:
    data = doc.data
    problems = check_ids(doc, ("compute", "memory", "links")) + check_texts(doc)
    problems += _dupes(doc, data["compute"], ("compute",), "compute unit")
    problems += _dupes(doc, data["memory"], ("memory",), "memory level")
    problems += _dupes(doc, data.get("links", []), ("links",), "link")
    for i, unit in enumerate(data["compute"]):
        for j, ceiling in enumerate(unit.get("ceilings", [])):
            problems += _ceiling_dimension(doc, ceiling, ("compute", i, "ceilings", j, "value"))
            if ceiling["precision"] not in unit["peaks"]:
                problems.append(
                    doc.problem(
                        ("compute", i, "ceilings", j, "precision"),
                        _unknown(ceiling["precision"], "precision", unit["peaks"])
                        + f" (the precisions of unit {unit['id']!r})",
                        code="ref.precision",
                    )
                )
        for precision in unit.get("energy_per_flop", {}):
            if precision not in unit["peaks"]:
                problems.append(
                    doc.problem(
                        ("compute", i, "energy_per_flop", precision),
                        _unknown(precision, "precision", unit["peaks"])
                        + f" (the precisions of unit {unit['id']!r})",
                        key=True,
                        code="ref.precision",
                    )
                )
    problems += _unscaled_clocks(doc, data)
    problems += _constant_power(doc, data.get("power", {}))
    levels = {m["id"] for m in data["memory"]}
    for level in data.get("power", {}).get("energy_per_byte", {}):
        if level not in levels:
            problems.append(
                doc.problem(
                    ("power", "energy_per_byte", level),
                    _unknown(level, "memory level", levels),
                    key=True,
                    code="ref.level",
                )
            )
    return problems


def _constant_power(doc: Document, power: dict[str, Any]) -> list[Problem]:
    """``power.idle`` is the older name of ``power.constant``: Choi's constant power
    under load, which is not idle power."""
    if "idle" not in power:
        return []
    if "constant" in power:
        return [
            doc.problem(
                ("power", "idle"),
                "both 'idle' and 'constant' are given: 'idle' is the older name of "
                "'constant'; delete it",
                key=True,
                code="spec.renamed",
            )
        ]
    return [
        doc.problem(
            ("power", "idle"),
            "'idle' is renamed 'constant' (the constant power drawn under load, which is "
            "not idle power): write 'constant:' or run `roofgen migrate`",
            key=True,
            severity=Severity.WARNING,
            code="spec.renamed",
        )
    ]


def _unscaled_clocks(doc: Document, data: dict[str, Any]) -> list[Problem]:
    """A ``clock`` says which SM clock a roof is stated at; on a roof that does not follow
    the SM clock it would be silently ignored, so it is an error."""
    places: list[tuple[PathKey, str]] = []
    for i, unit in enumerate(data["compute"]):
        if unit.get("clock_scaled", True):
            continue
        what = f"unit {unit['id']!r} has clock_scaled: false"
        if "clock" in unit:
            places.append((("compute", i, "clock"), what))
        for p, roof in unit["peaks"].items():
            if isinstance(roof, dict) and "clock" in roof:
                places.append((("compute", i, "peaks", p, "clock"), what))
        for j, ceiling in enumerate(unit.get("ceilings", [])):
            if isinstance(ceiling["value"], dict) and "clock" in ceiling["value"]:
                places.append((("compute", i, "ceilings", j, "value", "clock"), what))
    for i, level in enumerate(data["memory"]):
        bandwidth = level["bandwidth"]
        scaled = level.get("clock_scaled", level["role"] != "device")
        if not scaled and isinstance(bandwidth, dict) and "clock" in bandwidth:
            why = (
                "device memory follows the memory clock, clocks.memory"
                if level["role"] == "device" and "clock_scaled" not in level
                else f"level {level['id']!r} has clock_scaled: false"
            )
            places.append((("memory", i, "bandwidth", "clock"), why))
    return [
        doc.problem(
            path,
            f"'clock' is the SM clock a roof is stated at, and this roof does not follow the "
            f"SM clock ({why}): remove it, or set clock_scaled: true",
            key=True,
            code="ref.clock",
        )
        for path, why in places
    ]


def _ceiling_dimension(doc: Document, ceiling: dict[str, Any], path: PathKey) -> list[Problem]:
    """A sub-ceiling's rate has the dimension of its precision (FLOP/s or OP/s)."""
    from roofgen.spec.build import precision_dimension
    from roofgen.spec.quantity import QuantityError, parse_quantity

    value = ceiling["value"]
    dimension = precision_dimension(ceiling["precision"], count=False)
    problems = []
    for key, item in value.items() if isinstance(value, dict) else [(None, value)]:
        if key not in (None, "datasheet", "measured"):
            continue
        try:
            parse_quantity(item, dimension)
        except QuantityError as exc:
            where = path if key is None else (*path, key)
            problems.append(
                doc.problem(where, f"{exc} (precision {ceiling['precision']!r})", code="ref.unit")
            )
    return problems


def _check_machine_refs(
    doc: Document, refs: list[str], machines: dict[str, dict[str, Any]], broken: set[str]
) -> list[Problem]:
    data = doc.data
    problems: list[Problem] = []
    for i, ref in enumerate(data["machines"]):
        ident = refs[i]
        if ident in broken:
            continue
        if ident not in machines:
            problems.append(
                doc.problem(
                    ("machines", i),
                    _unknown(ident, "machine", machines) + " (add its machine file to the specs)",
                    code="ref.machine",
                )
            )
            continue
        pinned = ref.get("version") if isinstance(ref, dict) else None
        actual = machines[ident].get("version")
        if pinned is not None and pinned != actual:
            problems.append(
                doc.problem(
                    ("machines", i, "version"),
                    f"the case is pinned to version {pinned} of machine {ident!r}, "
                    f"but the specs hold version {actual}: re-check the case against the "
                    "new roofs and update the pin",
                    code="ref.machine-version",
                )
            )
        problems += _check_content_pin(doc, ref, i, ident, machines[ident])
    return problems


def _check_content_pin(
    doc: Document, ref: Any, i: int, ident: str, machine: dict[str, Any]
) -> list[Problem]:
    """A ``sha256:`` pin must match the content hash of the machine's data."""
    from roofgen.spec.library import content_hash

    pinned = ref.get("sha256") if isinstance(ref, dict) else None
    if pinned is None or pinned == (actual := content_hash(machine)):
        return []
    return [
        doc.problem(
            ("machines", i, "sha256"),
            f"the case pins machine {ident!r} to content sha256 {pinned[:12]}..., but the "
            f"machine now hashes to {actual[:12]}...: its roofs changed since the case was "
            f"pinned; re-check the case and update the pin (`roofgen machines show {ident}`)",
            code="ref.machine-hash",
        )
    ]


def check_case(
    doc: Document, machines: dict[str, dict[str, Any]], broken: set[str] | None = None
) -> list[Problem]:
    """Problems of one case document against the machines known by id.

    ``broken`` holds ids of machine files that have errors of their own: a case naming
    one is not checked against it (its errors are reported at the machine file).
    """
    broken = broken or set()
    data = doc.data
    problems = check_ids(doc, ("kernels", "variants")) + check_titles(doc) + check_date(doc)
    problems += check_texts(doc)
    problems += _dupes(doc, data["kernels"], ("kernels",), "kernel")
    problems += _dupes(doc, data["variants"], ("variants",), "variant")
    refs = [r if isinstance(r, str) else r["id"] for r in data["machines"]]
    problems += _check_machine_refs(doc, refs, machines, broken)
    problems += check_operators(doc)
    kernels = {k["id"]: k for k in data["kernels"]}
    variant_ids = {v["id"] for v in data["variants"]}
    for v_index, variant in enumerate(data["variants"]):
        problems += _check_variant(doc, variant, v_index, refs, machines, kernels)
    for variant_id in data.get("end_to_end", {}):
        if variant_id not in variant_ids:
            problems.append(
                doc.problem(
                    ("end_to_end", variant_id),
                    _unknown(variant_id, "variant", variant_ids),
                    key=True,
                    code="ref.variant",
                )
            )
    for k_index, kernel in enumerate(data["kernels"]):
        for machine_id in refs:
            machine = machines.get(machine_id)
            if machine is None:
                continue
            units = {u["id"] for u in machine["compute"]}
            for u_index, unit in enumerate(kernel.get("units", [])):
                if unit not in units:
                    problems.append(
                        doc.problem(
                            ("kernels", k_index, "units", u_index),
                            _unknown(unit, "compute unit", units) + f" on machine {machine_id!r}",
                            code="ref.unit",
                        )
                    )
    return problems


def _check_variant(
    doc: Document,
    variant: dict[str, Any],
    v_index: int,
    refs: list[str],
    machines: dict[str, dict[str, Any]],
    kernels: dict[str, Any],
) -> list[Problem]:
    base: PathKey = ("variants", v_index)
    problems = []
    machine_id = variant.get("machine")
    if machine_id is None:
        if len(refs) > 1:
            problems.append(
                doc.problem(
                    base,
                    "the case lists several machines: say which one this variant ran on "
                    f"with 'machine: ID' (one of {', '.join(refs)})",
                    code="ref.machine",
                )
            )
            return problems
        machine_id = refs[0]
    elif machine_id not in refs:
        problems.append(
            doc.problem(
                (*base, "machine"),
                _unknown(machine_id, "machine", refs) + " (list it under the case's 'machines')",
                code="ref.machine",
            )
        )
        return problems
    machine = machines.get(machine_id)
    for l_index, launch in enumerate(variant["launches"]):
        path: PathKey = (*base, "launches", l_index)
        if launch["kernel"] not in kernels:
            problems.append(
                doc.problem(
                    (*path, "kernel"),
                    _unknown(launch["kernel"], "kernel", kernels),
                    code="ref.kernel",
                )
            )
        for where, m in _measurements(launch, path):
            problems += check_time(doc, m, where)
            if machine is not None:
                problems += _check_measurement(doc, m, where, machine)
    return problems


def _measurements(launch: dict[str, Any], path: PathKey) -> list[tuple[PathKey, dict[str, Any]]]:
    """The launch's measurement, or those of its sweep's points."""
    if "measurement" in launch:
        return [((*path, "measurement"), launch["measurement"])]
    return [
        ((*path, "sweep", i, "measurement"), point["measurement"])
        for i, point in enumerate(launch.get("sweep", []))
    ]


def _check_measurement(
    doc: Document, m: dict[str, Any], path: PathKey, machine: dict[str, Any]
) -> list[Problem]:
    problems = []
    units: dict[str, Any] = {}
    for unit in machine["compute"]:  # the first of duplicated ids, as check_machine keeps
        units.setdefault(unit["id"], unit)
    levels = {lvl["id"] for lvl in machine["memory"]}
    links = {k["id"] for k in machine.get("links", [])}
    for field in ("flops", "model_flops"):
        for unit_id, by_precision in (m.get(field) or {}).items():
            if unit_id not in units:
                problems.append(
                    doc.problem(
                        (*path, field, unit_id),
                        _unknown(unit_id, "compute unit", units) + f" on machine {machine['id']!r}",
                        key=True,
                        code="ref.unit",
                    )
                )
                continue
            peaks = units[unit_id]["peaks"]
            for precision in by_precision:
                if precision not in peaks:
                    problems.append(
                        doc.problem(
                            (*path, field, unit_id, precision),
                            f"unit {unit_id!r} of machine {machine['id']!r} has no {precision!r} "
                            f"peak; its precisions: {', '.join(sorted(peaks))}",
                            key=True,
                            code="ref.precision",
                        )
                    )
    for field, known, what in (
        ("bytes", levels, "memory level"),
        ("transactions", levels, "memory level"),
        ("link_bytes", links, "link"),
    ):
        for name in m.get(field) or {}:
            if name not in known:
                problems.append(
                    doc.problem(
                        (*path, field, name),
                        _unknown(name, what, known) + f" on machine {machine['id']!r}",
                        key=True,
                        code="ref.level" if what != "link" else "ref.link",
                    )
                )
    problems += _check_collectives(doc, m, path, machine["id"], links)
    problems += _check_sparsity(doc, m, path)
    return problems


# Collectives with an algorithm other than ring (the latency steps of analysis.comm).
_ALGORITHMS = {
    "tree": ("all-reduce", "broadcast", "reduce", "send-recv"),
    "in-network": (
        "all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce", "send-recv"
    ),
}  # fmt: skip


def _check_collectives(
    doc: Document, m: dict[str, Any], path: PathKey, machine_id: str, links: set[str]
) -> list[Problem]:
    problems = []
    for i, collective in enumerate(m.get("collectives") or []):
        if collective["link"] not in links:
            problems.append(
                doc.problem(
                    (*path, "collectives", i, "link"),
                    _unknown(collective["link"], "link", links) + f" on machine {machine_id!r}",
                    code="ref.link",
                )
            )
        algorithm = collective.get("algorithm", "ring")
        if algorithm != "ring" and collective["kind"] not in _ALGORITHMS[algorithm]:
            problems.append(
                doc.problem(
                    (*path, "collectives", i, "algorithm"),
                    f"{collective['kind']} has no {algorithm} algorithm: write "
                    "'algorithm: ring' (or leave it out)",
                    code="ref.collective-algorithm",
                )
            )
    return problems


def _check_sparsity(doc: Document, m: dict[str, Any], path: PathKey) -> list[Problem]:
    """A launch that declares sparsity must have '-sparse' work to apply it to."""
    if "sparsity" not in m:
        return []
    sparse = any(p.endswith("-sparse") for by in (m.get("flops") or {}).values() for p in by)
    if sparse:
        return []
    return [
        doc.problem(
            (*path, "sparsity"),
            "the launch declares sparsity but has no '-sparse' FLOPs: record its tensor-core "
            "work under a sparse precision (e.g. 'bf16-sparse', dense-equivalent FLOPs)",
            code="ref.sparsity",
        )
    ]
