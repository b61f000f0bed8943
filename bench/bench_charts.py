"""Time the hierarchical roofline chart at scale: Vega-Lite spec build and SVG render.

Run from the repository root::

    python bench/bench_charts.py [--kernels 1000] [--repeat 3]

Builds a synthetic input (``--kernels`` kernels, 3 memory levels, 2 variants each, so
6 points per kernel), renders one warm-up SVG, then times the spec build and the SVG
render in the same (warm) process and prints the best and median of ``--repeat`` runs.
Target: spec + SVG under 1 s at 1,000 kernels.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from roofgen.charts import (  # noqa: E402
    ChartPoint,
    RoofLine,
    RooflineInput,
    hierarchical_chart,
    to_svg,
)

G = 1e9
T = 1e12
LEVELS = (("L1", "l1", 14336 * G), ("L2", "llc", 2996.77 * G), ("HBM", "device", 828.758 * G))
ROOFS = (
    RoofLine("l1", "L1", "memory", 14336 * G, "measured", "l1"),
    RoofLine("l2", "L2", "memory", 2996.77 * G, "measured", "llc"),
    RoofLine("hbm", "HBM", "memory", 828.758 * G, "measured", "device"),
    RoofLine("hbm-ds", "HBM", "memory", 900 * G, "datasheet", "device"),
    RoofLine("fma", "FP64 FMA", "compute", 7.06886 * T, "measured", "compute"),
    RoofLine("fp64-ds", "FP64", "compute", 7.8 * T, "datasheet", "compute"),
    RoofLine("nofma", "FP64 no-FMA", "compute", 3.53579 * T, "measured", "compute", True),
)


def synthetic_input(kernels: int, seed: int = 1) -> RooflineInput:
    """``kernels`` kernels x 2 variants x 3 levels, under the V100 roofs."""
    rng = random.Random(seed)
    points = []
    for k in range(kernels):
        hbm_ai = 10 ** rng.uniform(-1.5, 2.0)
        for variant, boost in (("baseline", 1.0), ("optimised", 10 ** rng.uniform(0, 0.6))):
            ai = {"device": hbm_ai * boost}
            ai["llc"] = ai["device"] / 10 ** rng.uniform(0.05, 0.6)
            ai["l1"] = ai["llc"] / 10 ** rng.uniform(0.05, 0.6)
            bound = min(7.06886 * T, min(bw * ai[role] for _, role, bw in LEVELS))
            flops = bound * 10 ** rng.uniform(-1.2, -0.02)
            for level, role, _ in LEVELS:
                points.append(
                    ChartPoint(
                        case=f"case{k % 7}",
                        kernel=f"kernel{k:04d}",
                        variant=variant,
                        level=level,
                        level_role=role,
                        intensity_flop_per_byte=ai[role],
                        flop_per_s=flops,
                        efficiency=flops / bound,
                        klass="memory-bound" if bound < 7.06886 * T else "compute-bound",
                        binding="HBM" if bound < 7.06886 * T else "FP64 FMA",
                    )
                )
    return RooflineInput(
        title=f"{kernels} kernels",
        roofs=ROOFS,
        points=tuple(points),
        variant_order=("baseline", "optimised"),
    )


def _time(fn: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    inp = synthetic_input(args.kernels)
    spec = hierarchical_chart(inp)
    svg = to_svg(spec)  # warm-up: starts the JavaScript runtime, compiles Vega-Lite
    spec_t = _time(lambda: hierarchical_chart(inp), args.repeat)
    svg_t = _time(lambda: to_svg(spec), args.repeat)
    both_t = _time(lambda: to_svg(hierarchical_chart(inp)), args.repeat)

    def show(name: str, ts: list[float]) -> None:
        print(f"{name:<14} best {min(ts):7.3f} s   median {statistics.median(ts):7.3f} s")

    print(f"{args.kernels} kernels, {len(inp.points)} points, SVG {len(svg) / 1e6:.2f} MB")
    show("spec build", spec_t)
    show("SVG render", svg_t)
    show("spec + SVG", both_t)
    verdict = "meets" if statistics.median(both_t) < 1.0 else "MISSES"
    print(f"spec + SVG median {verdict} the 1 s target")


if __name__ == "__main__":
    main()
