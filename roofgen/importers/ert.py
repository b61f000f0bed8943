"""``roofgen import ert``: an Empirical Roofline Toolkit ``roofline.json`` as a machine.

ERT (Berkeley Lab's CS Roofline Toolkit) writes ``roofline.json`` as::

    {"empirical": {"metadata": {...},
                   "gflops": {"data": [["FP64 GFLOPs", 4258.4]], "metadata": {...}},
                   "gbytes": {"data": [["L1", 1723.76], ["L2", 1301.09], ["DRAM", 508.35]],
                              "metadata": {...}}},
     "spec": {"gflops": {"data": []}, "gbytes": {"data": []}}}

ERT 1.0 and the Python 2 releases of 1.1 name the compute entry ``"GFLOPs"`` (the
precision is then the config's ``ERT_PRECISION``, or ``--precision``) and keep the
metadata as a mapping; later 1.1 builds name it per precision (``"FP64 GFLOPs"``)
and keep the metadata as raw ``"KEY  value"`` lines under an empty key. Both are
read. ``spec`` holds values the person running ERT typed into its config
(``ERT_SPEC_GFLOPS``, ``ERT_SPEC_GBYTES_*``): they become datasheet values marked
as such.

Every ERT figure becomes a ``measured`` roof with a ``measured_source``. ERT does
not record the SM clock, so ``--sm-clock`` is required when nothing else gives
it, and ``--id``/``--name`` name the machine: nothing is invented.

On a GPU, ERT names the first cache level it finds "L1": it is really the L2
(ERT does not find the GPU's L1), so it becomes the last-level cache here. ERT
levels that cannot be placed on a role (device, last-level cache, L1) are kept
as comments, not roofs.
"""

from __future__ import annotations

import ast
import datetime
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roofgen.importers import Imported, ImportFailure

_PRECISIONS = {
    "FP64": ("fp64", "fp64", "FP64 pipe"),
    "FP32": ("fp32", "fp32", "FP32 pipe"),
    "FP16": ("fp16", "fp16", "FP16 pipe"),
}


@dataclass
class ErtRun:
    compute: list[tuple[str, float]]  # (ERT name, GFLOP/s)
    levels: list[tuple[str, float]]  # (ERT name, GB/s), near to far as ERT lists them
    spec_compute: list[tuple[str, float]]
    spec_levels: list[tuple[str, float]]
    meta: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)

    def config_value(self, key: str) -> str | None:
        value = self.config.get(key)
        if isinstance(value, list):
            value = value[0] if value else None
        return None if value is None else str(value)


MAX_ERT_BYTES = 64 * 1024 * 1024  # a roofline.json is a few kB


def _number(text: str) -> float | int:
    """A JSON number, as ``json`` reads it; refused past 100 characters (no measurement
    has them, and Python's int refuses 4,300 digits with an error of its own)."""
    if len(text) > 100:
        raise ValueError(f"a number of {len(text):,} characters")
    return float(text) if any(c in text for c in ".eE") else int(text)


def _load_json(path: Path) -> Any:
    """The JSON of ``path``; anything that is not a JSON file of sane size, encoding,
    depth and numbers is an :class:`ImportFailure` that says what it is."""
    try:
        if path.stat().st_size > MAX_ERT_BYTES:
            raise ImportFailure(f"{path}: over {MAX_ERT_BYTES // 2**20} MiB: not a roofline.json")
        text = path.read_bytes().decode("utf-8-sig")
        return json.loads(text, parse_int=_number, parse_float=_number)
    except OSError as exc:
        raise ImportFailure(f"{path}: cannot read the file: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ImportFailure(
            f"{path}: not UTF-8 text (byte {exc.start} is 0x{exc.object[exc.start]:02x}): "
            "ERT writes its roofline.json in UTF-8"
        ) from None
    except json.JSONDecodeError as exc:
        raise ImportFailure(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except RecursionError:
        raise ImportFailure(f"{path}: nested too deeply to be an ERT roofline.json") from None
    except ValueError as exc:
        raise ImportFailure(f"{path}: not an ERT roofline.json: {exc}") from None


def read_ert(path: Path) -> ErtRun:
    data = _load_json(path)
    empirical = data.get("empirical") if isinstance(data, dict) else None
    if not isinstance(empirical, dict):
        raise ImportFailure(
            f"{path}: not an ERT roofline.json: no 'empirical' section (ERT writes it to "
            "Results.*/Run.NNN/roofline.json)"
        )
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    run = ErtRun(
        compute=_pairs(empirical, "gflops", path),
        levels=_pairs(empirical, "gbytes", path),
        spec_compute=_pairs(spec, "gflops", path, required=False),
        spec_levels=_pairs(spec, "gbytes", path, required=False),
    )
    for section in (empirical, empirical.get("gflops"), empirical.get("gbytes")):
        if isinstance(section, dict):
            _metadata(section.get("metadata"), run.meta)
    config = run.meta.get("CONFIG")
    if isinstance(config, str):
        try:
            config = ast.literal_eval(config)
        except (ValueError, SyntaxError):
            config = None
    run.config = config if isinstance(config, dict) else {}
    if not run.compute and not run.levels:
        raise ImportFailure(f"{path}: the ERT file holds no GFLOP/s or GB/s results")
    return run


def _pairs(section: Any, key: str, path: Path, required: bool = True) -> list[tuple[str, float]]:
    block = section.get(key) if isinstance(section, dict) else None
    rows = block.get("data") if isinstance(block, dict) else None
    if rows is None:
        if required:
            raise ImportFailure(f"{path}: no {key}.data in the ERT file")
        return []
    if not isinstance(rows, list):
        raise ImportFailure(f"{path}: {key}.data is not a list of [name, value] entries")
    out = []
    for row in rows:
        if (
            isinstance(row, list)
            and len(row) == 2
            and isinstance(row[0], str)
            and isinstance(row[1], int | float)
            and not isinstance(row[1], bool)
        ):
            name = _text(row[0].strip())
            out.append((name, _rate(float(row[1]), key, name, path)))
        else:
            raise ImportFailure(f"{path}: {key}.data entry {row!r} is not [name, value]")
    return out


def _rate(value: float, key: str, name: str, path: Path) -> float:
    """``value`` if it is a rate a machine file can hold: positive, finite, and finite
    in FLOP/s or B/s too (else the machine roofgen writes would not check)."""
    from roofgen.spec.quantity import QuantityError, parse_quantity

    unit, dimension = ("GFLOP/s", "flop_rate") if key == "gflops" else ("GB/s", "bandwidth")
    try:
        if not (math.isfinite(value) and value > 0):
            raise QuantityError(f"'{value:g} {unit}' is not a rate: not a positive, finite number")
        parse_quantity(f"{value!r} {unit}", dimension)
    except QuantityError as exc:
        raise ImportFailure(f"{path}: {key}.data entry {_shown(name)}: {exc}") from None
    return value


def _shown(name: str) -> str:
    text = repr(name)
    return text if len(text) <= 60 else text[:56] + "...'"


def _metadata(meta: Any, out: dict[str, Any]) -> None:
    if not isinstance(meta, dict):
        return
    for key, value in meta.items():
        if key == "" and isinstance(value, list):  # raw "KEY  value" lines
            for line in value:
                name, _, rest = str(line).strip().partition(" ")
                if name and name != "META_DATA":
                    out.setdefault(name, _text(rest.strip(), None))
        else:
            out.setdefault(key, _text(value, None) if isinstance(value, str) else value)


def _text(value: str, limit: int | None = 200) -> str:
    """Text from the ERT file as the machine file may hold it: control characters (which
    a spec refuses, even escaped) replaced by U+FFFD, and at most ``limit`` characters
    (a spec's texts are bounded; None: the metadata, which is parsed, not written)."""
    from roofgen.spec.yamlscalar import UNPRINTABLE

    clean = UNPRINTABLE.sub("\ufffd", value)
    return clean if limit is None or len(clean) <= limit else clean[: limit - 1] + "\u2026"


def _precision(name: str, run: ErtRun, given: str | None) -> str:
    match = re.match(r"^(FP\d+)\s+GFLOPs", name, re.IGNORECASE)
    if match:
        return match.group(1).upper()
    configured = run.config.get("ERT_PRECISION")
    if given:
        return given.upper()
    if isinstance(configured, list) and len(configured) == 1:
        return str(configured[0]).upper()
    raise ImportFailure(
        f"the ERT result {name!r} does not say its precision, nor does the ERT config: "
        "pass --precision FP64 (or FP32, FP16)"
    )


def _is_gpu(run: ErtRun, given: bool | None) -> bool:
    if given is not None:
        return given
    value = run.config_value("ERT_GPU")
    if value is None:
        raise ImportFailure(
            "the ERT file does not say whether it ran on a GPU: pass --gpu or --cpu"
        )
    return value.lower() == "true"


def _provenance(run: ErtRun, path: Path) -> str:
    parts = [f"ERT {run.meta.get('ERT_VERSION', '(version not recorded)')}"]
    host = run.meta.get("HOSTNAME")
    if host:
        match = re.match(r"\('([^']+)'", str(host))
        parts.append(f"on {match.group(1) if match else host}")
    stamp = run.meta.get("TIMESTAMP_DATA")
    try:
        seconds = float(str(stamp))
        when = datetime.datetime.fromtimestamp(seconds, datetime.UTC).date().isoformat()
        parts.append(f"run {when}")
    except (TypeError, ValueError, OverflowError, OSError):
        pass
    return _text(" ".join(parts) + f", {path.name}", 400)


def _run_shape(run: ErtRun) -> str:
    keys = ("GPU_BLOCKS", "GPU_THREADS", "FLOPS")
    found = [f"{k} {run.meta[k]}" for k in keys if k in run.meta]
    return f" (best run: {', '.join(found)})" if found else ""


@dataclass
class Placement:
    roles: dict[str, tuple[str, float]]  # role -> (ERT name, GB/s)
    dropped: list[tuple[str, float]]


def place_levels(levels: list[tuple[str, float]], gpu: bool) -> Placement:
    """ERT levels on roofgen roles. ERT lists caches near to far, then DRAM."""
    device = [lv for lv in levels if lv[0].upper() in ("DRAM", "HBM", "MEMORY", "MCDRAM")]
    caches = [lv for lv in levels if lv not in device]
    roles: dict[str, tuple[str, float]] = {}
    dropped: list[tuple[str, float]] = []
    if device:
        roles["device"] = device[-1]
        dropped += device[:-1]
    if gpu:
        if caches:  # ERT's "L1" on a GPU is the L2
            roles["llc"] = caches[0]
            dropped += caches[1:]
    elif caches:
        roles["l1"] = caches[0]
        if len(caches) > 1:
            roles["llc"] = caches[-1]
            dropped += caches[1:-1]
    return Placement(roles, dropped)


def build_machine(
    run: ErtRun,
    path: Path,
    *,
    ident: str,
    name: str,
    sm_clock: str,
    gpu: bool | None,
    precision: str | None,
    version: int,
    target: Path | None,
) -> Imported:
    """The machine file's text and the warnings."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from roofgen.spec.roundtrip import dump, eol, make_yaml, schema_comment

    on_gpu = _is_gpu(run, gpu)
    source = _provenance(run, path)
    warnings: list[str] = []
    root = CommentedMap([("roofgen", 1), ("kind", "machine"), ("id", ident), ("name", name)])
    root["version"] = version
    root["description"] = _description(source, on_gpu)
    root["clocks"] = CommentedMap([("sm", sm_clock)])
    eol(root["clocks"], "sm", "given with --sm-clock: ERT does not record the clock it ran at")
    units = CommentedSeq()
    for entry_name, gflops in run.compute:
        units.append(_unit(entry_name, gflops, run, precision, source))
    if not units:
        raise ImportFailure(f"{path}: no GFLOP/s result: a machine needs at least one compute roof")
    root["compute"] = units
    placement = place_levels(run.levels, on_gpu)
    if "device" not in placement.roles:
        warnings.append("ERT reported no DRAM level: the machine has no device-memory roof")
    if not placement.roles:
        raise ImportFailure(f"{path}: no bandwidth result: a machine needs a memory roof")
    root["memory"] = CommentedSeq(
        _level(role, placement.roles[role], run, source, on_gpu)
        for role in ("device", "llc", "l1")
        if role in placement.roles
    )
    root.yaml_set_start_comment(schema_comment(target or Path.cwd() / "m.yaml", "machine")[2:])
    root.yaml_set_comment_before_after_key("id", before=_header(source, on_gpu, placement))
    for ert_name, value in placement.dropped:
        warnings.append(f"ERT level {ert_name!r} ({value} GB/s) has no roofgen role: left out")
    return Imported(dump(make_yaml(), root), warnings)


def _description(source: str, gpu: bool) -> Any:
    import textwrap

    from ruamel.yaml.scalarstring import LiteralScalarString

    text = (
        f"Roofs measured by the Empirical Roofline Toolkit ({source}). Every roof is a "
        "**measured** value; the file holds no datasheet figure unless ERT's config "
        "gave one."
    )
    if gpu:
        text += ' On this GPU, ERT\'s "L1" is the **L2** cache.'
    return LiteralScalarString(textwrap.fill(text, 78, break_on_hyphens=False) + "\n")


def _header(source: str, gpu: bool, placement: Placement) -> str:
    import textwrap

    lines = [
        *textwrap.wrap(
            f"Imported by `roofgen import ert` from {source}.", 86, break_on_hyphens=False
        ),
        "Every roof is an ERT measurement (measured:), with measured_source; ERT reads no",
        "datasheet, so add datasheet values (datasheet:, source:) beside them by hand.",
    ]
    if gpu:
        lines += [
            'On GPUs, ERT names the first cache level it finds "L1": it is really the L2',
            "(ERT does not detect the GPU's L1), so it is the last-level cache (role llc) here.",
        ]
    for ert_name, value in placement.dropped:
        lines += textwrap.wrap(
            f"ERT also reported {ert_name!r} at {value} GB/s; it has no place among roofgen's "
            "roles (device, llc, l1), so it is not a roof here.",
            86,
            break_on_hyphens=False,
        )
    return "\n".join(lines)


def _spec_value(pairs: list[tuple[str, float]], wanted: str) -> float | None:
    for name, value in pairs:
        if name.upper() == wanted.upper():
            return value
    return None


def _unit(entry_name: str, gflops: float, run: ErtRun, given: str | None, source: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    ert_precision = _precision(entry_name, run, given)
    if ert_precision not in _PRECISIONS:
        raise ImportFailure(
            f"ERT precision {ert_precision!r} is not one roofgen reads (FP64, FP32, FP16)"
        )
    unit_id, kind, label = _PRECISIONS[ert_precision]
    roof = CommentedMap([("measured", f"{gflops:g} GFLOP/s")])
    roof["measured_source"] = f"ERT {entry_name!r}: {source}{_run_shape(run)}"
    spec = _spec_value(run.spec_compute, "GFLOPs")
    if spec is not None:
        roof.insert(0, "datasheet", f"{spec:g} GFLOP/s")
        roof.insert(1, "source", "ERT config ERT_SPEC_GFLOPS (typed in by whoever ran ERT)")
    peaks = CommentedMap([(unit_id, roof)])
    return CommentedMap([("id", unit_id), ("name", label), ("kind", kind), ("peaks", peaks)])


_ROLE_NAMES = {
    "device": ("dram", "Device memory"),
    "llc": ("l2", "L2 cache"),
    "l1": ("l1", "L1 cache"),
}


def _level(role: str, entry: tuple[str, float], run: ErtRun, source: str, gpu: bool) -> Any:
    from ruamel.yaml.comments import CommentedMap

    from roofgen.spec.roundtrip import eol

    ert_name, gbytes = entry
    ident, label = _ROLE_NAMES[role]
    if not gpu and role == "llc":
        ident, label = ert_name.lower(), f"{ert_name} cache (last level)"
    if role != "device" and (gpu or role == "l1"):
        label = f"{label} (ERT's {ert_name!r})"
    bandwidth = CommentedMap([("measured", f"{gbytes:g} GB/s")])
    bandwidth["measured_source"] = f"ERT level {ert_name!r}: {source}"
    spec = _spec_value(run.spec_levels, ert_name)
    if spec is not None:
        bandwidth.insert(0, "datasheet", f"{spec:g} GB/s")
        bandwidth.insert(
            1, "source", f"ERT config ERT_SPEC_GBYTES_{ert_name} (typed in by whoever ran ERT)"
        )
    level = CommentedMap([("id", ident), ("name", label), ("role", role)])
    level["bandwidth"] = bandwidth
    if gpu and role == "llc":
        eol(level, "role", 'ERT calls this level "L1": on a GPU it is the L2')
    return level


def validate(text: str) -> list[str]:
    """Problems of the machine text as roofgen checks a machine file."""
    from roofgen.spec import crossrefs, schema
    from roofgen.spec.yamlload import load_text

    doc, problems = load_text(text, "machine")
    if doc is None:
        return [p.format() for p in problems]
    problems = schema.validate(doc, "machine") or crossrefs.check_machine(doc)
    return [p.format() for p in problems]
