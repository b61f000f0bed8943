"""The site's roofline charts: inputs from the analysis; specs and SVGs cached on disk.

* :func:`case_chart_inputs` - one hierarchical roofline per machine a case ran on:
  the roofs of the compute units and precisions the case has work on (with their
  sub-ceilings) and every memory level, datasheet and measured values both where
  both exist; one point per launch and memory level with a known intensity.
* :func:`machine_chart_input` - a machine's roofs without points.
* :class:`ChartStore` - Vega-Lite specs cached by a hash of the chart input, SVGs by
  a hash of the spec; only cache misses are rendered, on the build's renderer
  processes (:mod:`roofgen.site.renderers`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from roofgen.analysis.analyse import CaseResult, LaunchResult
from roofgen.charts import ChartPoint, RoofLine, RooflineInput
from roofgen.charts.kinds import ChartInput, build_chart
from roofgen.files import write_cache_entry
from roofgen.model import ComputeUnit, Machine, Roof
from roofgen.report.chartinputs import launch_points
from roofgen.site.renderers import Renderers
from roofgen.units import counts_ops
from roofgen.version import versions

__all__ = [
    "Chart",
    "ChartStore",
    "case_chart_inputs",
    "chart_digest",
    "kernel_chart_input",
    "machine_chart_input",
    "machine_roofs",
    "precision_label",
]

BASIS_ORDER = ("measured", "datasheet")
SUBTITLE = "Measured roofs solid, datasheet roofs dashed"
Progress = Callable[[int, int], None]


def precision_label(precision: str) -> str:
    """``bf16`` -> ``BF16``, ``fp16-sparse`` -> ``FP16 sparse``."""
    base, sparse, _ = precision.partition("-sparse")
    return base.upper() + (" sparse" if sparse else "")


def _roof_values(roof: Roof) -> list[tuple[str, float]]:
    values = [("measured", roof.measured), ("datasheet", roof.datasheet)]
    return [(basis, value) for basis, value in values if value is not None and value > 0]


def _unit_roofs(
    unit: ComputeUnit, precisions: Sequence[str], include_ceilings: bool
) -> list[RoofLine]:
    """Peaks of ``precisions`` on ``unit``; equal peaks share one roof and label."""
    grouped: dict[tuple[str, float], list[str]] = {}
    for precision in precisions:
        for basis, value in _roof_values(unit.peaks[precision]):
            grouped.setdefault((basis, value), []).append(precision)
    roofs = [
        RoofLine(
            id=f"compute.{unit.id}.{'+'.join(precs)}.{basis}",
            label=f"{unit.name} {'/'.join(precision_label(p) for p in precs)}",
            kind="compute",
            value=value,
            basis=basis,  # type: ignore[arg-type]
            role="compute",
        )
        for (basis, value), precs in grouped.items()
    ]
    if include_ceilings:
        for ceiling in unit.ceilings:
            if ceiling.precision not in precisions:
                continue
            for basis, value in _roof_values(ceiling.value):
                roofs.append(
                    RoofLine(
                        id=f"ceiling.{unit.id}.{ceiling.id}.{basis}",
                        label=ceiling.name,
                        kind="compute",
                        value=value,
                        basis=basis,  # type: ignore[arg-type]
                        role="compute",
                        sub_ceiling=True,
                    )
                )
    return roofs


def machine_roofs(
    machine: Machine, used: Mapping[str, Iterable[str]] | None = None
) -> tuple[RoofLine, ...]:
    """Roofs of ``machine``: compute peaks (of ``used`` unit -> precisions, or every
    dense floating-point peak), their sub-ceilings, and every memory level. Peaks counted
    in OP/s (integer, transcendental) are not drawn: the chart's axis is FLOP/s."""
    roofs: list[RoofLine] = []
    for unit in machine.compute:
        if used is None:
            precisions = [p for p in unit.peaks if not counts_ops(p) and not p.endswith("-sparse")]
        else:
            wanted = set(used.get(unit.id, ()))
            precisions = [p for p in unit.peaks if p in wanted and not counts_ops(p)]
        if precisions:
            roofs += _unit_roofs(unit, precisions, include_ceilings=True)
    for level in machine.memory:
        for basis, value in _roof_values(level.bandwidth):
            roofs.append(
                RoofLine(
                    id=f"memory.{level.id}.{basis}",
                    label=level.name,
                    kind="memory",
                    value=value,
                    basis=basis,  # type: ignore[arg-type]
                    role=level.role,
                )
            )
    return tuple(roofs)


def machine_chart_input(machine: Machine) -> RooflineInput:
    """The empty roofline of ``machine``: its roofs, no points."""
    return RooflineInput(
        title=machine.name, roofs=machine_roofs(machine), points=(), subtitle=SUBTITLE
    )


def _used_precisions(launches: Iterable[LaunchResult], case: CaseResult) -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    wanted = {(r.variant, r.index) for r in launches}
    for variant in case.case.variants:
        for index, launch in enumerate(variant.launches):
            if (variant.id, index) not in wanted or launch.measurement.flops is None:
                continue
            for unit, by_precision in launch.measurement.flops.items():
                for precision, work in by_precision.items():
                    if work > 0:
                        used.setdefault(unit, set()).add(precision)
    return used


def _shown(r: LaunchResult, number: int) -> list[tuple[LaunchResult, str, int | None, str]]:
    """What a launch puts on the chart: itself, or each shape of its sweep in order."""
    if not r.sweep:
        return [(r, str(number), None, "")]
    return [(p.result, f"{number} {p.label}", i, p.label) for i, p in enumerate(r.sweep)]


def _spread(r: LaunchResult) -> dict[str, float]:
    """The FLOP/s at the measured time's third and first quartile, where both are known."""
    t = r.launch.measurement.time
    if r.flop is None or r.sweep or t.q1_s is None or t.q3_s is None or t.q1_s <= 0:
        return {}
    return {"flop_per_s_q3": r.flop / t.q3_s, "flop_per_s_q1": r.flop / t.q1_s}


def _points(case: CaseResult, machine: Machine, names: Mapping[str, str]) -> tuple[ChartPoint, ...]:
    points: list[ChartPoint] = []
    for variant in case.variants:
        if variant.machine != machine.id:
            continue
        for launch in variant.launches:
            for r, label, order, shape in _shown(launch, launch.occurrence):
                binding = names.get(r.binding, r.binding) if r.binding else None
                points += launch_points(
                    r,
                    machine,
                    case=case.case.id,
                    kernel=r.kernel,
                    variant=variant.variant,
                    binding=binding,
                    launch=label,
                    sweep_index=order,
                    shape=shape,
                    **_spread(r),
                )
    return tuple(points)


def case_chart_inputs(
    case: CaseResult, machines: Mapping[str, Machine], names: Mapping[str, str] | None = None
) -> list[tuple[Machine, RooflineInput]]:
    """One chart input per machine the case's variants ran on, in variant order."""
    out: list[tuple[Machine, RooflineInput]] = []
    order = tuple(v.id for v in case.case.variants)
    for machine_id in dict.fromkeys(v.machine for v in case.variants):
        machine = machines[machine_id]
        launches = [r for v in case.variants if v.machine == machine_id for r in v.launches]
        roofs = machine_roofs(machine, _used_precisions(launches, case))
        inp = RooflineInput(
            title=case.case.title,
            roofs=roofs,
            points=_points(case, machine, names or {}),
            variant_order=order,
            subtitle=f"{machine.name}. {SUBTITLE}",
            labelled=tuple(v.id for v in case.case.variants if v.label),
        )
        out.append((machine, inp))
    return out


# --------------------------------------------------------------------------- cache


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@cache
def _versions() -> list[str]:
    return versions("altair", "vl-convert-python")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@cache
def _salt() -> str:
    """What, besides the input, decides a chart's spec and SVG bytes."""
    import roofgen.charts
    import roofgen.units

    # Every module of the charts package, and the number formatter they write labels with.
    sources = sorted(Path(str(roofgen.charts.__file__)).parent.rglob("*.py"))
    return "\0".join(_versions() + [_digest(p) for p in [*sources, Path(roofgen.units.__file__)]])


@cache
def _render_salt() -> str:
    """What, besides the spec, decides a chart's SVG bytes: the renderer and its versions
    (not the code that writes specs, so that a change to it renames only the SVGs whose
    specs it changes)."""
    import roofgen.charts.render as render

    return "\0".join([*_versions(), _digest(Path(str(render.__file__)))])


def input_digest(inp: ChartInput, width: int, height: int) -> str:
    text = f"{_salt()}\0{width}x{height}\0{inp!r}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def chart_digest(spec: dict[str, Any]) -> str:
    """Hash of a Vega-Lite spec (and of the renderer): the name of its SVG."""
    return hashlib.sha256(_render_salt().encode() + b"\0" + _canonical(spec)).hexdigest()[:16]


_DIGEST = re.compile(r"[0-9a-f]{16}")


def _cached_chart(path: Path) -> Chart | None:
    """The chart of a spec entry as :meth:`ChartStore.chart` writes it (a mapping of
    exactly its digest and its Vega-Lite spec), or None: a damaged entry is built again."""
    try:
        entry = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.keys() != {"digest", "spec"}:
        return None
    digest, spec = entry["digest"], entry["spec"]
    if not (isinstance(digest, str) and _DIGEST.fullmatch(digest) and isinstance(spec, dict)):
        return None
    return Chart(spec, digest)


def _whole_svg(path: Path) -> bool:
    """Whether the cached file is a whole SVG as roofgen writes them (a truncated or
    damaged entry is rendered again, never copied into the site)."""
    try:
        with path.open("rb") as f:
            head = f.read(5)
            f.seek(0, 2)
            f.seek(max(f.tell() - 16, 0))
            tail = f.read()
    except OSError:
        return False
    return head == b"<svg " and tail.rstrip().endswith(b"</svg>")


def without_links(spec: Any) -> Any:
    """``spec`` without its ``href`` channels: a static SVG is shown as an image, where a
    link cannot be followed, and its renderer would resolve a relative link against a
    host of its own."""
    if isinstance(spec, dict):
        return {k: without_links(v) for k, v in spec.items() if k != "href"}
    if isinstance(spec, list):
        return [without_links(v) for v in spec]
    return spec


def render_svg(spec: dict[str, Any]) -> str:
    """The byte-stable SVG of one spec, rendered in this process."""
    from roofgen.charts.render import to_svg

    return to_svg(spec)


@dataclass(frozen=True)
class Chart:
    """A Vega-Lite spec and its :func:`chart_digest` (the name of its SVG)."""

    spec: dict[str, Any]
    digest: str


@dataclass
class ChartStats:
    specs_built: int = 0
    specs_cached: int = 0
    svgs_rendered: int = 0
    svgs_cached: int = 0


class ChartStore:
    """Vega-Lite specs and SVGs, cached under ``cache_dir`` (no cache when None)."""

    def __init__(
        self,
        cache_dir: Path | None,
        renderers: Renderers | None = None,
        width: int = 640,
        height: int = 440,
    ) -> None:
        self.dir = cache_dir / "charts" if cache_dir is not None else None
        self.renderers = renderers
        self.width = width
        self.height = height
        self.stats = ChartStats()

    def chart(self, inp: ChartInput) -> Chart:
        """The Vega-Lite spec of ``inp`` and its digest, from the cache when present."""
        path = None
        if self.dir is not None:
            path = self.dir / f"spec-{input_digest(inp, self.width, self.height)}.json"
            cached = _cached_chart(path)
            if cached is not None:
                self.stats.specs_cached += 1
                return cached
        spec = build_chart(inp, width=self.width, height=self.height)
        chart = Chart(spec, chart_digest(spec))
        self.stats.specs_built += 1
        if path is not None:
            entry = {"digest": chart.digest, "spec": spec}
            # A cache that cannot be written costs time, never the build.
            write_cache_entry(path, json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
        return chart

    def svgs(
        self, charts: Sequence[Chart], progress: Progress | None = None
    ) -> dict[str, Path | str]:
        """The SVG of every chart by digest: its cache file, or its text without a cache.

        Only charts missing from the cache are rendered, in parallel.
        """
        return self.start(charts).finish(progress)

    def start(self, charts: Sequence[Chart]) -> PendingSvgs:
        """Start rendering the charts missing from the cache; :meth:`PendingSvgs.finish`
        waits for them (the caller may write its pages meanwhile)."""
        out: dict[str, Path | str] = {}
        missing: dict[str, dict[str, Any]] = {}
        for chart in charts:
            digest, spec = chart.digest, chart.spec
            if digest in out or digest in missing:
                continue
            path = self.dir / f"svg-{digest}.svg" if self.dir is not None else None
            if path is not None and _whole_svg(path):
                out[digest] = path
                self.stats.svgs_cached += 1
            else:
                missing[digest] = without_links(spec)
        return PendingSvgs(self, out, len(missing), self._render(missing))

    def _render(self, missing: dict[str, dict[str, Any]]) -> Iterator[tuple[str, str]]:
        """Render on the renderer processes (starting now); without them, or for a chart
        a lost renderer hands back, in this process."""
        from roofgen.charts.render import stable_svg

        if self.renderers is None:
            return ((digest, render_svg(spec)) for digest, spec in missing.items())
        results = self.renderers.render(missing)
        return (
            (
                digest,
                render_svg(missing[digest]) if svg is None else stable_svg(missing[digest], svg),
            )
            for digest, svg in results
        )


@dataclass
class PendingSvgs:
    """Charts being rendered; see :meth:`ChartStore.start`."""

    store: ChartStore
    out: dict[str, Path | str]
    total: int
    results: Iterator[tuple[str, str]]

    def finish(self, progress: Progress | None = None) -> dict[str, Path | str]:
        folder = self.store.dir
        for done, (digest, svg) in enumerate(self.results, start=1):
            self.out[digest] = svg
            self.store.stats.svgs_rendered += 1
            if folder is not None:
                cached = folder / f"svg-{digest}.svg"
                write_cache_entry(cached, svg)  # skipped where the cache cannot be written
                if cached.is_file():
                    self.out[digest] = cached
            if progress is not None:
                progress(done, self.total)
        return self.out


def kernel_chart_input(
    case: CaseResult,
    machines: Mapping[str, Machine],
    kernel: str,
    variant: str | None = None,
    names: Mapping[str, str] | None = None,
) -> RooflineInput:
    """The chart of one kernel of a case (all its variants, or one), on one machine.

    Raises ValueError when the kernel or variant is not in the case, or when the
    kernel ran on several machines and no variant says which.
    """
    variants = [v for v in case.variants if variant is None or v.variant == variant]
    if not variants:
        known = ", ".join(v.variant for v in case.variants)
        raise ValueError(f"case {case.case.id!r} has no variant {variant!r} (variants: {known})")
    launches = [r for v in variants for r in v.launches if r.kernel == kernel]
    if not launches:
        known = ", ".join(k.id for k in case.case.kernels)
        where = f" in variant {variant!r}" if variant else ""
        raise ValueError(
            f"case {case.case.id!r} has no launch of kernel {kernel!r}{where} (kernels: {known})"
        )
    on = list(dict.fromkeys(r.machine for r in launches))
    if len(on) > 1:
        raise ValueError(
            f"kernel {kernel!r} ran on several machines ({', '.join(on)}): name a variant"
        )
    machine = machines[on[0]]
    chosen = {v.variant for v in variants}
    only = replace(
        case,
        variants=tuple(
            replace(v, launches=tuple(r for r in v.launches if r.kernel == kernel))
            for v in case.variants
            if v.variant in chosen and v.machine == machine.id
        ),
    )
    kernel_name = next((k.name for k in case.case.kernels if k.id == kernel), kernel)
    return RooflineInput(
        title=f"{kernel_name} ({case.case.title})",
        roofs=machine_roofs(machine, _used_precisions(launches, case)),
        points=_points(only, machine, names or {}),
        variant_order=tuple(v.id for v in case.case.variants),
        subtitle=f"{machine.name}. {SUBTITLE}",
        labelled=tuple(v.id for v in case.case.variants if v.label),
    )
