"""Whether a site build's cost grows in proportion to one case's size.

Run from the repository root::

    python bench/bench_case_size.py [--variants 800 3200] [--kernels 4] [--profile]

For each count it writes one case of ``--variants`` variants (each variant one
launch of one of ``--kernels`` kernels, on the benchmark machine of
``bench/bench_site.py``) into a temporary folder and builds the site cold in a fresh
``roofgen build`` process (an empty cache folder). It prints the CPU seconds of that
process and its children, its peak memory, the case file's and the case page's sizes,
and the ratio of each figure to the smallest count's, beside the ratio of the counts:
a build linear in the case's size has ratios near the counts' ratio. ``--profile``
runs each build under cProfile instead and prints the top functions by cumulative
and by own time.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("gemm", "softmax", "layernorm", "reduction")
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
memory:
  - {id: hbm, name: HBM, role: device, bandwidth: {datasheet: 1.555 TB/s, measured: 1.4 TB/s}}
  - {id: l2, name: L2, role: llc, bandwidth: 7 TB/s}
"""


def _measurement(rng: random.Random, unit: str, precision: str, speed: float) -> str:
    """A launch's measurement below every roof of the machine (as bench/bench_site.py)."""
    hbm = 10 ** rng.uniform(6.5, 9.5)
    flop = hbm * 10 ** rng.uniform(-1.5, 3.0)
    l2 = hbm * 10 ** rng.uniform(0.05, 0.6)
    peak = 280e12 if unit == "tensor" else 19.5e12
    bound = max(flop / peak, hbm / 1.4e12, l2 / 7e12)
    median = bound / (rng.uniform(0.3, 0.95) * speed)
    return (
        f"          time: {{median: {median:.6g} s, q1: {median * 0.99:.6g} s, "
        f"q3: {median * 1.01:.6g} s, repeats: 100, warmup: 10}}\n"
        f"          timing: cuda-events\n"
        f"          flops: {{{unit}: {{{precision}: {flop:.6g} FLOP}}}}\n"
        f"          bytes: {{hbm: {hbm:.6g} B, l2: {l2:.6g} B}}\n"
    )


def case_yaml(variants: int, kernels: int, seed: int = 3) -> str:
    """One case of ``variants`` variants, each one launch of one of ``kernels`` kernels."""
    rng = random.Random(seed)
    lines = [
        "roofgen: 1",
        "kind: case",
        "id: big-case",
        "title: A case of many variants",
        f"summary: {variants} variants of {kernels} kernels.",
        "date: 2026-01-01",
        "owners: [bench]",
        "status: merged",
        "tags: [bench]",
        "machines: [bench-gpu]",
        "narrative: {context: Synthetic., result: Faster.}",
        "kernels:",
    ]
    units = []
    for k in range(kernels):
        kind = KINDS[k % len(KINDS)]
        unit, precision = ("tensor", "bf16") if kind == "gemm" else ("fp32", "fp32")
        units.append((unit, precision))
        lines.append(f"  - {{id: k{k:04d}, name: kernel_{k}, operator: {{kind: {kind}}}}}")
    lines.append("variants:")
    for v in range(variants):
        k = v % kernels
        unit, precision = units[k]
        lines += [f"  - id: v{v:05d}", "    launches:"]
        lines += [f"      - kernel: k{k:04d}", "        measurement:"]
        speed = 1.0 + v / variants
        lines.append(_measurement(rng, unit, precision, speed).rstrip("\n"))
    return "\n".join(lines) + "\n"


def write_case(folder: Path, variants: int, kernels: int = 1) -> Path:
    """A project of one machine and one case of ``variants`` variants; its specs folder."""
    specs = folder / "specs"
    (specs / "machines").mkdir(parents=True, exist_ok=True)
    (specs / "cases").mkdir(parents=True, exist_ok=True)
    (specs / "machines" / "bench-gpu.yaml").write_text(MACHINE, encoding="utf-8")
    (specs / "cases" / "big-case.yaml").write_text(case_yaml(variants, kernels), "utf-8")
    return specs


def build(folder: Path, specs: Path, profile: bool) -> tuple[float, float]:
    """CPU seconds and peak memory (MB) of one cold ``roofgen build`` process."""
    run = "from roofgen.cli import entry; entry()"
    cmd = [sys.executable]
    if profile:
        script = folder / "run_roofgen.py"
        script.write_text(run + "\n", encoding="utf-8")
        cmd += ["-m", "cProfile", "-o", str(folder / "build.prof"), str(script)]
    else:
        cmd += ["-c", run]
    cmd += ["build", "-q", "-o", str(folder / "site"), "--cache-dir", str(folder / "cache")]
    cmd.append(str(specs))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROOFGEN_NO_CACHE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if profile:
        import pstats

        stats = pstats.Stats(str(folder / "build.prof"))
        stats.sort_stats("cumulative").print_stats(40)
        stats.sort_stats("tottime").print_stats(25)
    return cpu, after.ru_maxrss / 1024


def page_size(site: Path) -> int:
    """Bytes of the case's page (the largest HTML page of the site)."""
    return max(p.stat().st_size for p in site.rglob("*.html"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variants", type=int, nargs="+", default=[800, 3200])
    parser.add_argument("--kernels", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="roofgen-bench-size-") as tmp:
        for n in args.variants:
            folder = Path(tmp) / f"v{n}"
            specs = write_case(folder, n, args.kernels)
            size = (specs / "cases" / "big-case.yaml").stat().st_size
            cpu, rss = build(folder, specs, args.profile)
            page = page_size(folder / "site")
            rows.append((n, size, cpu, rss, page))
            print(
                f"{n:6d} variants ({size / 1e3:7.1f} KB): CPU {cpu:7.2f} s, peak "
                f"{rss:7.1f} MB, largest page {page / 1e6:6.2f} MB",
                flush=True,
            )
    n0, s0, c0, _, p0 = rows[0]
    for n, size, cpu, _, page in rows[1:]:
        print(
            f"{n} / {n0}: size x{size / s0:.2f}, CPU x{cpu / c0:.2f}, page x{page / p0:.2f} "
            "(linear: the CPU and page ratios near the size's)",
            flush=True,
        )


if __name__ == "__main__":
    main()
