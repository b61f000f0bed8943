"""What keeping every cache inert and out of the repository costs: this checkout
against an older roofgen, measured in one run.

Give it a checkout of the older roofgen (for example ``git worktree add ../before
8c48581``, the last commit with caches beside the settings file, pickles and
marshalled validators)::

    python bench/bench_cache.py --before ../before [--rounds 5]

Each timing is a new process, ``python -c "from roofgen.cli import entry; entry()"``
with ``PYTHONPATH`` naming one checkout; both use this interpreter and its packages,
and the runs of the two checkouts are interleaved, so a busy machine slows both
alike. It times:

* a one-file ``roofgen check specs/cases/vector-add.yaml`` (its machine comes from
  roofgen's library): cold (an empty user cache folder, ``XDG_CACHE_HOME``) and
  warm (the same folder again). ``roofgen check`` keeps no cache in either checkout,
  so cold and warm differ by the file system's caches only; the older one compiles
  the case schema's validator in every process;
* a warm rebuild of the example site (a copy of the repository's ``specs/``, built
  once untimed): the whole command, and roofgen's own check step (``-v`` timings,
  to 10 ms);
* the check a warm rebuild runs, in a new process, timed inside it (after the
  imports) to the microsecond. The older one reads its whole check result back from
  a pickle; this one loads every document from its JSON cache and runs the checks
  across files and the analysis again.

It prints the medians and the ratios this checkout / the older one.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AFTER = Path(__file__).resolve().parents[1]
ENTRY = "from roofgen.cli import entry; entry()"
ONE_FILE = Path("specs") / "cases" / "vector-add.yaml"
# The check of a build, with the cache a build of the current folder uses.
WARM_CHECK = """
import time
from pathlib import Path
from roofgen.api import check
try:
    from roofgen.site.cachedir import project_folder
    cache = project_folder(Path.cwd())
except ImportError:  # the older roofgen: beside the settings file
    cache = Path.cwd() / ".roofgen-cache"
misses = []
start = time.perf_counter()
result = check([Path.cwd() / "specs"], display_root=Path.cwd(), cache_dir=cache,
               on_miss=lambda: misses.append(1))
print(time.perf_counter() - start, len(misses), result.failed())
"""


def run(
    tree: Path, argv: list[str], cwd: Path, cache_home: Path, code: str = ENTRY
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Seconds of one roofgen process from ``tree``, and the process."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PYTHONPATH=str(tree), XDG_CACHE_HOME=str(cache_home), NO_COLOR="1")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{tree}: roofgen {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return seconds, done


def warm_check(tree: Path, cwd: Path, cache_home: Path) -> float:
    _, done = run(tree, [], cwd, cache_home, WARM_CHECK)
    seconds, misses, failed = done.stdout.split()
    if misses != "0" or failed != "False":
        raise SystemExit(f"{tree}: the warm check found a change or failed: {done.stdout}")
    return float(seconds)


def check_step(stderr: str) -> float:
    match = re.search(r"^  check: ([0-9.]+) s$", stderr, re.MULTILINE)
    if match is None:
        raise SystemExit("no check timing in the output of `roofgen build -v`")
    return float(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the older checkout")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "after": AFTER}
    for tree in trees.values():
        if not (tree / "roofgen" / "cli.py").is_file():
            raise SystemExit(f"{tree} is not a roofgen checkout")
    times: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    with tempfile.TemporaryDirectory(prefix="roofgen-bench-cache-") as tmp:
        work = Path(tmp)
        for name, tree in trees.items():  # a project folder each, built once untimed
            shutil.copytree(AFTER / "specs", work / name / "specs")
            run(tree, ["build", "specs", "-q", "-o", "site"], work / name, work / f"{name}-xdg")
            run(tree, [], work / name, work / f"{name}-xdg", WARM_CHECK)
        for i in range(args.rounds):
            for name, tree in trees.items():
                record = times[name]
                cold = work / f"{name}-cold-{i}"
                seconds, _ = run(tree, ["check", str(ONE_FILE)], work / name, cold)
                record.setdefault("check one file, cold", []).append(seconds)
                seconds, _ = run(tree, ["check", str(ONE_FILE)], work / name, cold)
                record.setdefault("check one file, warm", []).append(seconds)
                argv = ["build", "specs", "-q", "-v", "-o", "site"]
                seconds, done = run(tree, argv, work / name, work / f"{name}-xdg")
                record.setdefault("warm rebuild of specs/", []).append(seconds)
                record.setdefault("  its check step", []).append(check_step(done.stderr))
                seconds = warm_check(tree, work / name, work / f"{name}-xdg")
                record.setdefault("  the same check, timed", []).append(seconds)
    print(f"{sys.version.split()[0]}, {args.rounds} rounds, medians in seconds")
    print(f"{'':28} {'before':>8} {'after':>8} {'after/before':>13}")
    for what in times["after"]:
        before = statistics.median(times["before"][what])
        after = statistics.median(times["after"][what])
        print(f"{what:28} {before:8.3f} {after:8.3f} {after / before:13.2f}")


if __name__ == "__main__":
    main()
