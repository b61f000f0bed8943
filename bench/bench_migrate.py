"""How ``roofgen migrate`` and the history's in-memory migration grow with a file's size.

A version-0 case of N launches (each a measurement with flat ``bytes_<level>`` keys,
five lines, the first line of each the same), at N and 4N launches, in a folder of its
own:

    python bench/bench_migrate.py [--launches 1200] [--runs 3]

Printed for each size: the file's size, the CPU time (user + system) of the whole
``roofgen migrate FILE`` process (this checkout first on ``PYTHONPATH``), and of
``migrate_text`` in this process (what ``roofgen history`` does with an old blob);
then the ratio of the two sizes' times. Linear cost gives a ratio near 4 (the
process's start-up, about a second, pulls the first ratio lower). 1,200 launches
make some 150 KB: before the line-ending step was made linear, its ``migrate``
took 141 s of CPU, the 600 KB file some forty minutes.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def version_0_case(launches: int) -> str:
    """A version-0 case: one kernel, one variant, ``launches`` launches."""
    lines = [
        "roofgen: 0",
        "kind: case",
        "id: big",
        "title: A large case in the draft format",
        "machines: [a100-40gb-sxm]",
        "kernels:",
        "  - {id: low, operator: {kind: other}}",
        "variants:",
        "  - id: base",
        "    launches:",
    ]
    for i in range(launches):
        lines += [
            "      - kernel: low",
            "        measurement:",
            f"          time: {i + 1} us",
            "          bytes_hbm: 1.5 GB   # dram__bytes.sum",
            "          bytes_l2: 2 GB",
        ]
    return "\n".join(lines) + "\n"


def process_cpu(path: Path) -> float:
    """CPU seconds of one ``roofgen migrate -q PATH`` process."""
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    command = [sys.executable, "-c", "from roofgen.cli import entry; entry()"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*command, "migrate", "-q", str(path)], cwd=path.parent, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_memory_cpu(text: str) -> float:
    from roofgen.spec.migrate import migrate_text

    start = time.process_time()
    migrate_text(text)
    return time.process_time() - start


def measure(launches: int, runs: int, work: Path) -> tuple[int, float, float]:
    text = version_0_case(launches)
    command, memory = [], []
    for run in range(runs):
        path = work / f"case-{launches}-{run}.yaml"
        path.write_text(text, encoding="utf-8")
        command.append(process_cpu(path))
        memory.append(in_memory_cpu(text))
    return len(text.encode()), statistics.median(command), statistics.median(memory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=1200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="roofgen-bench-migrate-") as folder:
        small = measure(args.launches, args.runs, Path(folder))
        large = measure(4 * args.launches, args.runs, Path(folder))
    for launches, (size, command, memory) in ((args.launches, small), (4 * args.launches, large)):
        print(f"{launches:>6} launches, {size / 1000:6.0f} KB: roofgen migrate "
              f"{command:6.2f} s CPU, migrate_text {memory:6.2f} s CPU")  # fmt: skip
    print(f"4x the size: roofgen migrate {large[1] / small[1]:.2f}x the CPU time, "
          f"migrate_text {large[2] / small[2]:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
