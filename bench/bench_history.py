"""How long ``roofgen history`` takes over a generated repository.

The repository: one machine file and 100 case files (two kernels, two variants each)
in a first commit, then 200 commits that each change the measured times of 1 to 3
cases (a fixed random seed: the same repository every run). The full history is 201
commits and 500 case analyses (100 at the first commit, 400 after).

    python bench/bench_history.py [--rounds 3] [--cases 100] [--commits 200]

Each timing is a new process, ``roofgen history --format json -o FILE`` run in the
repository with this checkout first on ``PYTHONPATH``: cold (an empty user cache
folder, ``XDG_CACHE_HOME``: every case analysed) and warm (the same folder again:
every outcome read from the cache). It prints the median of each, in seconds of
wall-clock time and of CPU time (user + system, roofgen's process and its git
processes together; on a loaded machine it varies less than the wall-clock time).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
ENTRY = "from roofgen.cli import entry; entry()"
IDENTITY = ["-c", "user.name=bench", "-c", "user.email=bench@example.com"]

MACHINE = """roofgen: 1
kind: machine
id: bench
name: Bench machine
clocks: {sm: 1410 MHz}
compute:
  - id: tensor
    kind: tensor
    peaks: {fp16: 312 TFLOP/s}
memory:
  - id: hbm
    role: device
    bandwidth: 1.5 TB/s
"""


def case_text(i: int, times_ms: list[float]) -> str:
    launches = []
    for v, variant in enumerate(("base", "fused")):
        body = []
        for k, kernel in enumerate(("load", "mma")):
            t = times_ms[2 * v + k]
            body.append(
                f"      - kernel: {kernel}\n"
                f"        measurement:\n"
                f"          time: {{median: {t:.4f} ms, warmup: 10, repeats: 100}}\n"
                f"          flops: {{tensor: {{fp16: {1.5e9 * (k + 1):.6g} FLOP}}}}\n"
                f"          bytes: {{hbm: {1.5 / (k + 1):.6g} GB}}\n"
            )
        launches.append(f"  - id: {variant}\n    launches:\n" + "".join(body))
    return (
        "roofgen: 1\nkind: case\n"
        f"id: case-{i:03d}\ntitle: Case {i}\nmachines: [bench]\n"
        "kernels:\n"
        "  - {id: load, operator: {kind: elementwise}}\n"
        "  - {id: mma, operator: {kind: elementwise}}\n"
        "variants:\n" + "".join(launches)
    )


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *IDENTITY, *args], cwd=repo, check=True, capture_output=True)


def generate(repo: Path, cases: int, commits: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    specs = repo / "specs"
    (specs / "cases").mkdir(parents=True)
    (specs / "machines").mkdir()
    (specs / "machines" / "bench.yaml").write_text(MACHINE)
    times = {i: [1.2, 0.6, 1.0, 0.5] for i in range(cases)}
    for i in range(cases):
        (specs / "cases" / f"case-{i:03d}.yaml").write_text(case_text(i, times[i]))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Add the cases")
    for n in range(commits):
        changed = rng.sample(range(cases), rng.randint(1, 3))
        for i in changed:
            times[i] = [t * rng.uniform(0.9, 1.1) for t in times[i]]
            (specs / "cases" / f"case-{i:03d}.yaml").write_text(case_text(i, times[i]))
        git(repo, "commit", "-qam", f"Tune {', '.join(f'case-{i:03d}' for i in changed)} ({n})")


def run(repo: Path, cache: Path) -> tuple[float, float]:
    """Wall-clock seconds of one run, and the CPU seconds (user + system) it and the
    git processes it started used: on a loaded machine the CPU time varies less."""
    env = {**os.environ, "PYTHONPATH": str(HERE), "XDG_CACHE_HOME": str(cache)}
    out = repo.parent / "history.json"
    out.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", ENTRY, "history", "--format", "json", "-o", str(out)],
        cwd=repo,
        env=env,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        start = time.perf_counter()
        generate(repo, args.cases, args.commits)
        print(f"generated {args.cases} cases, {args.commits + 1} commits "
              f"in {time.perf_counter() - start:.1f} s")  # fmt: skip
        runs: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": []}
        for r in range(args.rounds):
            cache = Path(tmp) / f"cache-{r}"
            runs["cold"].append(run(repo, cache))
            runs["warm"].append(run(repo, cache))
        for name, timings in runs.items():
            walls = [w for w, _ in timings]
            cpus = [c for _, c in timings]
            print(f"roofgen history, full history, {name} cache: "
                  f"median {statistics.median(walls):.2f} s wall "
                  f"({', '.join(f'{t:.2f}' for t in walls)}), "
                  f"{statistics.median(cpus):.2f} s CPU")  # fmt: skip


if __name__ == "__main__":
    main()
