"""How much `roofgen check` costs over reading the same YAML with PyYAML's C loader.

Generates a machine file and 100 case files holding 1,000 kernel variants (10 per
file, one launch each, with full measurements: time statistics, clocks, FLOPs by
unit and precision, bytes per level) in a temporary folder, then times, in one
run with the repeats interleaved:

(a) ``yaml.load(text, Loader=yaml.CSafeLoader)`` over every file (read and decoded);
(b) ``roofgen.api.check(paths)`` in-process, warm (after one untimed call).

and prints the median of each, their ratio (the target is at most 3x) and the time
of one cold ``roofgen check`` as a subprocess. When the ratio is above the target,
or with ``--profile``, it prints the 15 functions with the largest cumulative time
in ``check``.

    python bench/bench_check.py [--files 100] [--variants 10] [--rounds 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from roofgen.api import check
from roofgen.problems import Severity

TARGET_RATIO = 3.0

MACHINE = """\
roofgen: 1
kind: machine
id: bench-gpu
name: Bench GPU
clocks: {sm: 1410 MHz, memory: 1215 MHz}
compute:
  - id: tensor
    kind: tensor
    peaks: {fp16: 312 TFLOP/s, bf16: 312 TFLOP/s, tf32: 156 TFLOP/s, int8: 624 TOP/s}
  - id: fp32
    kind: fp32
    peaks: {fp32: 19.5 TFLOP/s}
  - id: sfu
    kind: sfu
    peaks: {transcendental: 3.9 TOP/s}
memory:
  - id: hbm
    role: device
    bandwidth: 1.555 TB/s
    capacity: 40 GiB
  - id: l2
    role: llc
    bandwidth: 5.1 TB/s
  - id: l1
    role: l1
    bandwidth: 19 TB/s
"""


def case_text(index: int, variants: int) -> str:
    lines = [
        "roofgen: 1",
        "kind: case",
        f"id: bench-case-{index:03d}",
        f"title: Benchmark case {index}",
        "machines: [bench-gpu]",
        "kernels:",
        "  - id: gemm",
        "    operator: {kind: gemm, shape: {m: 4096, n: 4096, k: 4096}}",
        "    units: [tensor]",
        "  - id: softmax",
        "    operator: {kind: softmax, shape: {rows: 32768, cols: 4096}}",
        "variants:",
    ]
    for v in range(variants):
        k = index * variants + v
        median = 2.0 + (k % 97) * 0.01  # ms
        kernel = "gemm" if v % 2 == 0 else "softmax"
        lines += [
            f"  - id: v{v}",
            f"    name: Variant {v}",
            "    launches:",
            f"      - kernel: {kernel}",
            "        calls: 1",
            "        measurement:",
            "          time:",
            f"            median: {median:.3f} ms",
            f"            q1: {median * 0.995:.4f} ms",
            f"            q3: {median * 1.005:.4f} ms",
            f"            min: {median * 0.99:.4f} ms",
            f"            max: {median * 1.03:.4f} ms",
            "            warmup: 10",
            "            repeats: 100",
            "          timing: cuda-events",
            "          clocks: {sm: 1410 MHz, memory: 1215 MHz}",
            "          flops:",
            f"            tensor: {{fp16: {1.1e11 + k * 1e7:.6g} FLOP, bf16: {2.0e10 + k:.6g}}}",
            f"            fp32: {{fp32: {3.5e8 + k * 1e3:.6g} FLOP}}",
            f"            sfu: {{transcendental: {1.3e7 + k:.6g} OP}}",
            "          bytes:",
            f"            hbm: {{read: {600 + k % 50} MB, write: {200 + k % 30} MB}}",
            f"            l2: {1.1 + (k % 10) * 0.01:.2f} GB",
            f"            l1: {2.5e9 + k * 1e5:.6g}",
            f"          instructions: {1.2e9 + k:.6g} inst",
        ]
    return "\n".join(lines) + "\n"


def generate(folder: Path, files: int, variants: int) -> list[Path]:
    (folder / "machine.yaml").write_text(MACHINE, encoding="utf-8")
    for i in range(files):
        (folder / f"case-{i:03d}.yaml").write_text(case_text(i, variants), encoding="utf-8")
    return sorted(folder.glob("*.yaml"))


def load_with_pyyaml(paths: list[Path]) -> None:
    for path in paths:
        yaml.load(path.read_bytes().decode("utf-8"), Loader=yaml.CSafeLoader)


def run_check(folder: Path) -> None:
    result = check([folder], display_root=folder)
    errors = [p for p in result.problems if p.severity is Severity.ERROR]
    if errors:
        raise SystemExit("generated specs are invalid:\n" + "\n".join(p.format() for p in errors))


def timed(func: Callable[..., object], *args: object) -> float:
    start = time.perf_counter()
    func(*args)
    return time.perf_counter() - start


def roofgen_command() -> list[str]:
    script = Path(sys.executable).with_name("roofgen")
    if script.exists():
        return [str(script)]
    found = shutil.which("roofgen")
    if found:
        return [found]
    return [sys.executable, "-c", "from roofgen.cli import entry; entry()"]


def profile(folder: Path) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    run_check(folder)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(15)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--variants", type=int, default=10, help="variants per case file")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="always print the profile")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="roofgen-bench-") as tmp:
        folder = Path(tmp)
        paths = generate(folder, args.files, args.variants)
        size = sum(p.stat().st_size for p in paths)
        print(
            f"{len(paths)} files ({args.files} cases x {args.variants} variants = "
            f"{args.files * args.variants} kernel variants, 1 launch each), {size / 1e6:.2f} MB"
        )
        load_with_pyyaml(paths)  # untimed: warm the page cache
        run_check(folder)  # untimed: imports, schema validators, unit cache

        yaml_times, check_times = [], []
        for _ in range(args.rounds):  # interleaved so drift hits both alike
            yaml_times.append(timed(load_with_pyyaml, paths))
            check_times.append(timed(run_check, folder))
        t_yaml = statistics.median(yaml_times)
        t_check = statistics.median(check_times)
        ratio = t_check / t_yaml

        start = time.perf_counter()
        cold = subprocess.run(
            [*roofgen_command(), "check", "."], cwd=folder, capture_output=True, text=True,
            check=False,
        )  # fmt: skip
        t_cold = time.perf_counter() - start

        print(f"rounds: {args.rounds}, medians taken (all: yaml {_ms(yaml_times)}; ", end="")
        print(f"check {_ms(check_times)})")
        print(f"(a) PyYAML CSafeLoader, all files:   {t_yaml * 1e3:8.1f} ms")
        print(f"(b) roofgen.api.check, warm:         {t_check * 1e3:8.1f} ms")
        print(f"ratio (b)/(a): {ratio:.2f}x (target <= {TARGET_RATIO:g}x): "
              f"{'OK' if ratio <= TARGET_RATIO else 'ABOVE TARGET'}")  # fmt: skip
        last = (cold.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"cold `roofgen check .` subprocess:   {t_cold * 1e3:8.1f} ms "
              f"(exit {cold.returncode}; {last})")  # fmt: skip
        if ratio > TARGET_RATIO or args.profile:
            print("\ntop 15 functions by cumulative time in check():")
            print(profile(folder))
        return 0 if cold.returncode == 0 else 1


def _ms(values: list[float]) -> str:
    return ", ".join(f"{v * 1e3:.0f}" for v in values) + " ms"


if __name__ == "__main__":
    sys.exit(main())
