"""Time the site build at scale, and one very large hierarchical chart.

Run from the repository root::

    python bench/bench_site.py [--modes 100] [--rounds 3] [--cases 10 100 500] [--kernels 1000]

First it compares the two chart modes: ``--modes`` cases (0: skip) built cold, each
build a fresh ``roofgen build`` process with an empty cache folder, charts drawn in
the browser only (the default) against ``--static-charts`` (SVGs rendered too). The
modes alternate, in turns of both orders, since a shared machine drifts; it prints
each turn's wall and CPU seconds (the build and its renderer processes) and the
browser/static ratios, then their medians.

For each case count it writes synthetic specs (one machine; every case has 10
kernels x 2 variants) into a temporary folder and builds the site twice in this
process: cold (empty chart cache) and warm (nothing changed). It reports roofgen's
own time per step, MkDocs' build time separately, and the warm/cold ratio of
roofgen's time. Target: a warm rebuild spends under 10% of the cold build's roofgen
time in roofgen.

Then it times one hierarchical chart of ``--kernels`` kernels (2 variants, 3 memory
levels: 6 points per kernel) from specs to Vega-Lite and SVG, in a warm process
(after one warm-up run). Target: under 1 s.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roofgen.analysis.bounds import Thresholds  # noqa: E402
from roofgen.api import (
    build_site,  # noqa: E402
    check,  # noqa: E402
)
from roofgen.charts import hierarchical_chart, to_svg  # noqa: E402
from roofgen.config import Settings  # noqa: E402
from roofgen.site.build import BuildResult  # noqa: E402
from roofgen.site.charts import case_chart_inputs  # noqa: E402
from roofgen.site.context import resource_names  # noqa: E402

MACHINE = """\
roofgen: 1
kind: machine
id: bench-gpu
name: Bench GPU
clocks: {sm: 1410 MHz}
compute:
  - id: tensor
    name: Tensor cores
    kind: tensor
    peaks: {bf16: {datasheet: 312 TFLOP/s, measured: 280 TFLOP/s}}
  - id: fp32
    name: FP32 pipe
    kind: fp32
    peaks: {fp32: 19.5 TFLOP/s}
    ceilings: [{id: no-fma, name: FP32 no FMA, precision: fp32, value: 9.75 TFLOP/s}]
memory:
  - {id: hbm, name: HBM, role: device, bandwidth: {datasheet: 1.555 TB/s, measured: 1.4 TB/s}}
  - {id: l2, name: L2, role: llc, bandwidth: 7 TB/s}
  - {id: l1, name: L1, role: l1, bandwidth: 19.5 TB/s}
"""

KINDS = ("gemm", "softmax", "layernorm", "elementwise", "reduction", "attention")


def _measurement(rng: random.Random, unit: str, precision: str, speed: float) -> str:
    hbm = 10 ** rng.uniform(6.5, 9.5)
    ai = 10 ** rng.uniform(-1.5, 3.0)
    flop = hbm * ai
    l2 = hbm * 10 ** rng.uniform(0.05, 0.6)
    l1 = l2 * 10 ** rng.uniform(0.05, 0.6)
    peak = 280e12 if unit == "tensor" else 19.5e12
    bound = max(flop / peak, hbm / 1.4e12, l2 / 7e12, l1 / 19.5e12)
    median = bound / (rng.uniform(0.3, 0.95) * speed)
    return (
        f"          time: {{median: {median:.6g} s, q1: {median * 0.99:.6g} s, "
        f"q3: {median * 1.01:.6g} s, repeats: 100, warmup: 10}}\n"
        f"          timing: cuda-events\n"
        f"          flops: {{{unit}: {{{precision}: {flop:.6g} FLOP}}}}\n"
        f"          bytes: {{hbm: {hbm:.6g} B, l2: {l2:.6g} B, l1: {l1:.6g} B}}\n"
    )


def case_yaml(index: int, kernels: int, seed: int) -> str:
    rng = random.Random(seed * 100_003 + index)
    day = 1 + index % 28
    lines = [
        "roofgen: 1",
        "kind: case",
        f"id: case-{index:04d}",
        f"title: Synthetic case {index}",
        f"summary: {kernels} kernels before and after a change.",
        f"date: 2026-{1 + index % 12:02d}-{day:02d}",
        "owners: [bench]",
        "status: merged",
        f"tags: [bench, group-{index % 7}]",
        "machines: [bench-gpu]",
        "narrative: {context: Synthetic., result: Faster.}",
        "end_to_end:",
        "  base: {time: 100 ms}",
        f"  tuned: {{time: {100 / rng.uniform(1.0, 1.5):.4f} ms}}",
        "kernels:",
    ]
    units = []
    for k in range(kernels):
        kind = KINDS[k % len(KINDS)]
        unit, precision = ("tensor", "bf16") if kind in ("gemm", "attention") else ("fp32", "fp32")
        units.append((unit, precision))
        lines.append(f"  - {{id: k{k:04d}, name: kernel_{k}, operator: {{kind: {kind}}}}}")
    lines.append("variants:")
    for variant, speed in (("base", 1.0), ("tuned", 1.3)):
        lines += [f"  - id: {variant}", "    launches:"]
        for k, (unit, precision) in enumerate(units):
            lines += [f"      - kernel: k{k:04d}", "        measurement:"]
            lines.append(_measurement(rng, unit, precision, speed).rstrip("\n"))
    return "\n".join(lines) + "\n"


def write_specs(folder: Path, cases: int, kernels: int = 10, seed: int = 1) -> Path:
    (folder / "machines").mkdir(parents=True, exist_ok=True)
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    (folder / "machines" / "bench-gpu.yaml").write_text(MACHINE, encoding="utf-8")
    for i in range(cases):
        (folder / "cases" / f"case-{i:04d}.yaml").write_text(
            case_yaml(i, kernels, seed), encoding="utf-8"
        )
    return folder


def settings(root: Path) -> Settings:
    return Settings(
        root=root,
        file=None,
        specs=(root / "specs",),
        output=root / "site",
        rules=None,
        thresholds=Thresholds(),
        site={"name": "Bench", "url": "https://bench.example/"},
    )


def _row(label: str, result: BuildResult, wall: float) -> str:
    steps = ", ".join(
        f"{step} {seconds:.2f}" for step, seconds in result.timings.items() if step != "mkdocs"
    )
    stats = result.chart_stats
    return (
        f"  {label:<5} roofgen {result.roofgen_s:7.2f} s  mkdocs {result.mkdocs_s:7.2f} s  "
        f"wall {wall:7.2f} s  (charts rendered {stats.svgs_rendered}, cached "
        f"{stats.svgs_cached}; {steps})"
    )


def bench_site(cases: int, workdir: Path) -> tuple[float, float]:
    root = workdir / f"site-{cases}"
    specs = write_specs(root / "specs", cases)
    cfg = settings(root)
    results = []
    for label in ("cold", "warm"):
        start = time.perf_counter()
        result = build_site([specs], cfg, root / "site", cache_dir=root / "cache", quiet=True)
        wall = time.perf_counter() - start
        if not result.ok:
            raise SystemExit("\n".join(p.format() for p in result.problems))
        print(_row(label, result, wall), flush=True)
        results.append(result)
    cold, warm = results
    ratio = warm.roofgen_s / cold.roofgen_s
    verdict = "meets" if ratio < 0.10 else "MISSES"
    print(
        f"  warm/cold roofgen time: {ratio:.1%} ({verdict} the 10% target); "
        f"{results[0].pages} pages",
        flush=True,
    )
    return cold.roofgen_s, warm.roofgen_s


def _cold_build(specs: Path, out: Path, static: bool) -> tuple[float, float]:
    """Wall and CPU seconds (its renderers included) of one ``roofgen build`` process
    with an empty cache folder."""
    root = Path(__file__).resolve().parents[1]
    flags = ["--static-charts"] if static else []
    cmd = [sys.executable, "-c", "from roofgen.cli import entry; entry()", "build", "-q"]
    cmd += [*flags, "-o", str(out / "site"), "--cache-dir", str(out / "cache"), str(specs)]
    env = {**os.environ, "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=out, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def bench_modes(cases: int, workdir: Path, rounds: int) -> None:
    """Cold builds with charts drawn in the browser only and with static SVGs."""
    specs = write_specs(workdir / f"modes-{cases}" / "specs", cases)
    walls: list[float] = []
    cpus: list[float] = []
    for turn in range(rounds):
        order = (False, True) if turn % 2 == 0 else (True, False)
        got: dict[bool, tuple[float, float]] = {}
        for static in order:
            out = workdir / f"modes-{cases}" / f"turn{turn}-{'static' if static else 'browser'}"
            out.mkdir(parents=True)
            got[static] = _cold_build(specs, out, static)
            shutil.rmtree(out, ignore_errors=True)
        (bw, bc), (sw, sc) = got[False], got[True]
        walls.append(bw / sw)
        cpus.append(bc / sc)
        print(
            f"  turn {turn + 1}: browser wall {bw:6.2f} s cpu {bc:6.2f} s; static wall "
            f"{sw:6.2f} s cpu {sc:6.2f} s; browser/static wall {walls[-1]:.2f}x "
            f"cpu {cpus[-1]:.2f}x",
            flush=True,
        )
    print(
        f"  median browser/static over {rounds} turns: wall {statistics.median(walls):.2f}x, "
        f"cpu {statistics.median(cpus):.2f}x",
        flush=True,
    )


def bench_big_chart(kernels: int, workdir: Path, repeat: int = 3) -> None:
    specs = write_specs(workdir / f"chart-{kernels}", cases=1, kernels=kernels, seed=7)

    def once() -> tuple[float, float, float, int]:
        t0 = time.perf_counter()
        checked = check([specs])
        assert checked.analysis is not None and checked.specs is not None
        machines = checked.specs.machines
        names = resource_names(machines["bench-gpu"])
        t1 = time.perf_counter()
        [(_, inp)] = case_chart_inputs(checked.analysis.cases[0], machines, names)
        spec = hierarchical_chart(inp)
        t2 = time.perf_counter()
        svg = to_svg(spec)
        t3 = time.perf_counter()
        assert svg.startswith("<svg")
        return t1 - t0, t2 - t1, t3 - t2, len(inp.points)

    once()  # warm-up: imports, schema compilation, the Vega runtime
    runs = [once() for _ in range(repeat)]
    load = statistics.median(r[0] for r in runs)
    spec = statistics.median(r[1] for r in runs)
    svg = statistics.median(r[2] for r in runs)
    chart = spec + svg
    verdict = "meets" if chart < 1.0 else "MISSES"
    print(
        f"  {kernels} kernels ({runs[0][3]} points), median of {repeat}: specs -> analysis "
        f"{load:.2f} s; analysis -> Vega-Lite {spec:.2f} s; SVG {svg:.2f} s; "
        f"Vega-Lite + SVG {chart:.2f} s ({verdict} the 1 s target); "
        f"all from specs {load + chart:.2f} s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--modes", type=int, default=100,
                        help="Cases of the chart-mode comparison (0: skip it).")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="Turns of that comparison.")
    parser.add_argument("--cases", type=int, nargs="*", default=[10, 100, 500])
    parser.add_argument("--kernels", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it.")
    args = parser.parse_args()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="roofgen-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        if args.modes > 0:
            print(f"cold builds of {args.modes} cases, charts in the browser vs static:")
            bench_modes(args.modes, workdir, args.rounds)
        for cases in args.cases:
            print(f"site with {cases} cases x 10 kernels x 2 variants:", flush=True)
            bench_site(cases, workdir)
        print("one hierarchical chart:", flush=True)
        bench_big_chart(args.kernels, workdir)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
