"""How long `roofgen import nsys` takes, and how much memory, on a large trace.

Generates, in a temporary folder, an SQLite file shaped like an `nsys export --type
sqlite` (the four tables roofgen reads, created with the column layout, types and
order of a real Nsight Systems 2022.2 export): ``--kernels`` kernel rows (5 million by
default), one ``cudaLaunchKernel`` runtime row each, in ``--steps`` NVTX ranges named
``step`` on the launching thread; 50 kernel names, launches 1.5 us apart, kernels of
1 to 1.9 us (some overlap the next, so the union of intervals is exercised), each
starting 5 us after its launch (the last ones end after their range). The rows are
made by SQL (a recursive CTE), not Python.

Then it runs ``roofgen import nsys FILE --range step`` and, with ``--whole``, the
whole-trace import, each as a subprocess, and prints the wall time, the CPU time
(user + system: what the import costs, whatever else the machine runs) and the peak
resident memory (the child's ``ru_maxrss``) of each against the targets: under 30 s
and 500 MB.

    python bench/bench_nsys.py [--kernels 5000000] [--steps 1000] [--whole] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 30.0
TARGET_MB = 500.0
NAMES = 50

# The tables as a real export declares them (Nsight Systems 2022.2.1, schema 2.9.1;
# comments dropped).
SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
    contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
    correlationId INTEGER REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId),
    globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
    mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
    registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
    gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
    blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
    dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
    localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
    sharedMemoryExecuted INTEGER, graphNodeId INTEGER REFERENCES CUDA_GRAPH_EVENTS(graphNodeId),
    sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL REFERENCES StringIds(id),
    returnValue INTEGER NOT NULL, callchainId INTEGER REFERENCES CUDA_CALLCHAINS(id),
    name TEXT);
CREATE TABLE NVTX_EVENTS (
    start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
    category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
    textId INTEGER REFERENCES StringIds(id), domainId INTEGER, uint64Value INTEGER,
    int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
    floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
"""

TID = 302119224788637  # globalTid and globalPid as a real export encodes them
PID = TID - TID % 2**24
STEP_NS = 10_000_000
LAUNCH_GAP = 1500
LAUNCH_NAME = 1000  # StringIds id of cudaLaunchKernel


def generate(path: Path, kernels: int, steps: int) -> None:
    per = -(-kernels // steps)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    names = [
        (i + 1, f"void kernel_{i}<float, {i % 4}>(float *, const float *, int)")
        for i in range(NAMES)
    ]
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", names)
    db.execute("INSERT INTO StringIds VALUES (?, 'cudaLaunchKernel')", (LAUNCH_NAME,))
    seq = (
        "WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq "
        f"WHERE i < {kernels - 1}) "
    )
    at = f"(i / {per}) * {STEP_NS} + 1000 + (i % {per}) * {LAUNCH_GAP}"
    db.execute(
        seq + "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT "
        f"{at}, {at} + 900, 1, {TID}, i + 1, {LAUNCH_NAME}, 0, NULL, NULL FROM seq"
    )
    name = f"(1 + (i % {per}) % {NAMES})"
    gpu = f"{at} + 5000"
    db.execute(
        seq + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT "
        f"{gpu}, {gpu} + 1000 + (i * 7919) % 900, 0, 1, 7, i + 1, {PID}, {name}, {name}, NULL, "
        f"0, 0, 32, 128 * (1 + {name} % 7), 1, 1, 256, 1, 1, 0, 0, 0, 0, i, 0, NULL, 0 FROM seq"
    )
    db.execute(
        f"WITH RECURSIVE s(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM s WHERE k < {steps - 1}) "
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) SELECT "
        f"k * {STEP_NS}, k * {STEP_NS} + 1000 + {per} * {LAUNCH_GAP} + 500, 59, 'step', {TID}, 0 "
        "FROM s"
    )
    db.commit()
    db.close()


def run(args: list[str], cwd: Path) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS (MB) and exit status of one
    import in a fresh process."""
    code = "from roofgen.cli import entry; entry()"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    begin = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - begin
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=5_000_000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--whole", action="store_true", help="also time the whole-trace import")
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this folder")
    opts = parser.parse_args()
    folder = opts.keep or Path(tempfile.mkdtemp(prefix="roofgen-bench-nsys-"))
    folder.mkdir(parents=True, exist_ok=True)
    trace = folder / "large.sqlite"
    if not trace.exists():
        begin = time.perf_counter()
        generate(trace, opts.kernels, opts.steps)
        print(
            f"generated {opts.kernels:,} kernels in {opts.steps:,} steps: "
            f"{trace.stat().st_size / 2**20:.0f} MiB in {time.perf_counter() - begin:.1f} s"
        )
    failed = False
    runs = [["--range", "step"]] + ([[]] if opts.whole else [])
    for extra in runs:
        out = folder / "case.yaml"
        out.unlink(missing_ok=True)
        args = ["import", "nsys", str(trace), "--machine", "h100-sxm", "-o", str(out), *extra]
        wall, cpu, mb, status = run([*args, "-q"], folder)
        ok = status == 0 and wall < TARGET_S and mb < TARGET_MB
        failed |= not ok
        what = " ".join(extra) or "(whole trace)"
        print(
            f"import nsys {what}: {wall:.1f} s wall (target < {TARGET_S:.0f} s; CPU "
            f"{cpu:.1f} s), peak RSS "
            f"{mb:.0f} MB (target < {TARGET_MB:.0f} MB), exit {status}: "
            f"{'ok' if ok else 'MISSED'}"
        )
    if opts.keep is None:
        for item in folder.iterdir():
            item.unlink()
        folder.rmdir()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
