"""Time and memory of check, analyze and build as the number of cases grows.

Run from the repository root::

    python bench/bench_scale.py [--cases 10 20 100 200 1000] [--steps STEP...]
                                [--baseline DIR] [--keep DIR]

For each case count it writes synthetic specs (one machine; every case has 10
kernels x 2 variants, as bench/bench_site.py writes them) and runs each step in a
child process of its own, so that every step starts cold and its memory is its own:

``check``     ``roofgen.api.check`` (no cache)
``analyze``   ``roofgen analyze --format json`` into a file
``cold``      ``build_site`` with an empty chart and check cache
``warm``      ``build_site`` again, nothing changed
``changed``   ``build_site`` after one case file was edited (one time value)

Each step reports its wall time (imports excluded), the peak of Python allocations
(tracemalloc, measured in a second, traced run of the step: tracing slows
allocation several times, so the timed run is untraced; above 100 cases tracing
grows far slower than the step - minutes for an analysis of 200 cases that takes
3 s - and the traced runs are skipped), and ``ru_maxrss`` of the child and of its
own children (the chart renderers), which the memory target is checked against.
Check and analyze import what the CLI imports, not the site's modules.
Builds split roofgen's own time (``roofgen``: check, context, charts, pages,
writing files) from MkDocs' build (``mkdocs``), which always renders every page.

``--steps`` runs some of the steps only. ``--baseline DIR`` also measures the analyze
step of another roofgen checkout (e.g. ``git worktree add /tmp/base 9ccb7be``) on the
same specs in the same run, and prints the ratios of time and peak memory.

Targets, checked at the end:

* 20 -> 200 cases costs at most 12x the total cold build time;
* after a one-case change, roofgen's own time is under 15% of its cold build's;
* the peak memory of every process stays under 2 GB at 1,000 cases;
* analyze's peak memory (``maxrss``) stays under 300 MB at 1,000 cases.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

GB = 1024**3
SCALING = (20, 200, 12.0)  # from, to, at most this many times the total build time
CHANGE_SHARE = 0.15  # roofgen's time after a one-case change, of its cold build
MEMORY_LIMIT = 2 * GB
ANALYZE_LIMIT = 300 * 1024**2  # analyze's maxrss at 1,000 cases
BASELINE = "analyze@baseline"  # the analyze step of --baseline's checkout
STEPS = ("check", "analyze", "cold", "warm", "changed")
TRACE_MAX = 100  # cases; above, no traced runs (see the module's docstring)


# --------------------------------------------------------------------------- child


def _settings(root: Path) -> Any:
    from bench_site import settings

    return settings(root)


def _run_step(step: str, root: Path) -> dict[str, Any]:
    """One step in this (child) process; returns what it measured."""
    specs = root / "specs"
    out: dict[str, Any] = {}
    if step == "check":
        from roofgen.api import check

        start = time.perf_counter()
        result = check([specs])
        out["seconds"] = time.perf_counter() - start
        out["ok"] = not result.failed()
    elif step == "analyze":
        from roofgen.cli import main

        start = time.perf_counter()
        status = main(["analyze", "--format", "json", "-q", "--force",
                       "-o", str(root / "analysis.json"), str(specs)])  # fmt: skip
        out["seconds"] = time.perf_counter() - start
        out["ok"] = status == 0
    else:
        from roofgen.api import build_site

        start = time.perf_counter()
        result = build_site([specs], _settings(root), root / "site", cache_dir=root / "cache",
                            quiet=True)  # fmt: skip
        out["seconds"] = time.perf_counter() - start
        out["ok"] = result.ok
        out["roofgen"] = result.roofgen_s
        out["mkdocs"] = result.mkdocs_s
        out["timings"] = result.timings
        out["rendered"] = result.chart_stats.svgs_rendered
        out["pages"] = result.pages
        if not result.ok:
            out["problems"] = [p.format() for p in result.problems[:5]]
    return out


def child(step: str, root: Path, trace: bool, source: Path | None) -> None:
    if source is not None:  # another checkout's roofgen (--baseline)
        sys.path.insert(0, str(source))
    import_start = time.perf_counter()
    import roofgen.api  # noqa: F401 - imports are timed apart from the step
    import roofgen.cli  # noqa: F401

    if step not in ("check", "analyze"):  # they hold only what the CLI imports
        import roofgen.site.build  # noqa: F401
    imports = time.perf_counter() - import_start
    if trace:
        tracemalloc.start()
    out = _run_step(step, root)
    if trace:
        out["python_peak"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    out["imports"] = imports
    out["maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out["children_maxrss"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print("RESULT " + json.dumps(out), flush=True)


# --------------------------------------------------------------------------- parent


def _spawn(step: str, root: Path, trace: bool, source: Path | None = None) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", step, "--root", str(root)]
    if trace:
        command.append("--trace")
    if source is not None:
        command += ["--source", str(source)]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT,
                          env={**os.environ, "NO_COLOR": "1"})  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{step} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT "))
    if not result["ok"]:
        raise SystemExit(f"{step}: not ok: {result}")
    return result


def _edit_one_case(root: Path) -> None:
    """Make the first launch of one case 1% slower: a real change, so the check cache
    misses and that case's charts are rendered again."""
    path = sorted((root / "specs" / "cases").glob("*.yaml"))[0]
    text = path.read_text(encoding="utf-8")
    median = re.search(r"median: ([0-9.e+-]+) s", text)
    assert median is not None, path
    slower = f"median: {float(median.group(1)) * 1.01:.6g} s"
    path.write_text(text[: median.start()] + slower + text[median.end() :], encoding="utf-8")


def _mb(value: float | None) -> str:
    return "    n/a" if value is None else f"{value / 1024**2:7.0f}"


def _row(step: str, timed: dict[str, Any], traced: dict[str, Any] | None) -> str:
    line = f"  {step:<8} {timed['seconds']:8.2f} s"
    if "roofgen" in timed:
        line += f"  roofgen {timed['roofgen']:7.2f} s  mkdocs {timed['mkdocs']:6.2f} s"
    else:
        line += " " * 35
    peak = traced.get("python_peak") if traced else None
    line += f"  python peak {_mb(peak)} MB  maxrss {_mb(timed['maxrss'])} MB"
    line += f"  renderers {_mb(timed['children_maxrss'])} MB"
    if "timings" in timed:
        steps = ", ".join(f"{k} {v:.2f}" for k, v in timed["timings"].items() if k != "mkdocs")
        line += f"  ({timed['rendered']} charts rendered; {steps})"
    return line


def bench(
    cases: int, workdir: Path, steps: tuple[str, ...] = STEPS, baseline: Path | None = None
) -> dict[str, dict[str, Any]]:
    from bench_site import write_specs

    root = workdir / f"cases-{cases}"
    shutil.rmtree(root, ignore_errors=True)
    write_specs(root / "specs", cases)
    files = len(list((root / "specs").rglob("*.yaml")))
    print(f"{cases} cases x 10 kernels x 2 variants ({files} files):", flush=True)
    results: dict[str, dict[str, Any]] = {}
    for step in steps:
        if step == "changed":
            _edit_one_case(root)
        timed = _spawn(step, root, trace=False)
        traced = None
        if cases <= TRACE_MAX:  # the step again, traced, from the same starting state
            if step == "cold":
                shutil.rmtree(root / "cache", ignore_errors=True)
            elif step == "changed":
                _edit_one_case(root)
            traced = _spawn(step, root, trace=True)
        results[step] = {**timed, "python_peak": (traced or {}).get("python_peak")}
        print(_row(step, timed, traced), flush=True)
        if step == "analyze" and baseline is not None:
            results[BASELINE] = {**_spawn(step, root, trace=False, source=baseline),
                                 "python_peak": None}  # fmt: skip
            print(_row("baseline", results[BASELINE], None), flush=True)
    if "cold" in results and "changed" in results:
        cold, changed = results["cold"], results["changed"]
        share = changed["roofgen"] / cold["roofgen"]
        print(f"  after a one-case change roofgen takes {share:.1%} of its cold build's time "
              f"({_meets(share < CHANGE_SHARE)} the {CHANGE_SHARE:.0%} target); "
              f"MkDocs {changed['mkdocs']:.2f} s", flush=True)  # fmt: skip
    return results


def _peak(results: dict[str, dict[str, Any]]) -> int:
    return max(
        max(r["maxrss"], r["children_maxrss"], r.get("python_peak") or 0)
        for step, r in results.items()
        if step != BASELINE
    )


def _meets(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def _analyze_verdict(n: int, results: dict[str, dict[str, Any]]) -> str:
    """analyze's time and peak memory, against the target and the baseline's."""
    now = results["analyze"]
    line = (f"{n} cases: analyze {now['seconds']:.2f} s, peak {_mb(now['maxrss']).strip()} MB "
            f"({_meets(now['maxrss'] < ANALYZE_LIMIT)} the {_mb(ANALYZE_LIMIT).strip()} MB "
            "target)")  # fmt: skip
    if "check" in results:  # the floor: analyze checks first, and holds the analysis
        line += f"; check alone {_mb(results['check']['maxrss']).strip()} MB"
    base = results.get(BASELINE)
    if base is not None:
        line += (f"; baseline {base['seconds']:.2f} s, {_mb(base['maxrss']).strip()} MB: "
                 f"time x{now['seconds'] / base['seconds']:.2f}, "
                 f"peak x{now['maxrss'] / base['maxrss']:.2f}")  # fmt: skip
    return line


def verdicts(all_results: dict[int, dict[str, dict[str, Any]]]) -> list[str]:
    lines = []
    low, high, limit = SCALING
    if all("cold" in all_results.get(n, {}) for n in (low, high)):

        def total(n: int) -> float:
            cold = all_results[n]["cold"]
            return float(cold["roofgen"] + cold["mkdocs"])

        ratio = total(high) / total(low)
        lines.append(
            f"{low} -> {high} cases: cold build {total(low):.1f} s -> {total(high):.1f} s, "
            f"{ratio:.1f}x ({_meets(ratio <= limit)} the {limit:g}x target)"
        )
    for n, results in sorted(all_results.items()):
        line = f"{n} cases: "
        if "cold" in results and "changed" in results:
            share = results["changed"]["roofgen"] / results["cold"]["roofgen"]
            line += (f"one-case change {share:.1%} of the cold build's roofgen time "
                     f"({_meets(share < CHANGE_SHARE)} {CHANGE_SHARE:.0%}); ")  # fmt: skip
        line += f"peak memory of a process {_peak(results) / GB:.2f} GB"
        if n >= 1000:
            line += f" ({_meets(_peak(results) < MEMORY_LIMIT)} the 2 GB target)"
        lines.append(line)
        if n >= 1000 and "analyze" in results:
            lines.append(_analyze_verdict(n, results))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[10, 20, 100, 200, 1000])
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=list(STEPS),
                        help="Run these steps only (in the usual order).")  # fmt: skip
    parser.add_argument("--baseline", type=Path,
                        help="Also measure the analyze step of this roofgen checkout.")  # fmt: skip
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it.")
    parser.add_argument("--json", type=Path, help="Also write every measurement here.")
    parser.add_argument("--child", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--source", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.root, args.trace, args.source)
        return
    steps = tuple(step for step in STEPS if step in args.steps)
    baseline = args.baseline.resolve() if args.baseline else None
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="roofgen-scale-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs", flush=True)
    all_results: dict[int, dict[str, dict[str, Any]]] = {}
    try:
        for cases in args.cases:
            all_results[cases] = bench(cases, workdir, steps, baseline)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print("targets:")
    for line in verdicts(all_results):
        print("  " + line)
    if args.json:
        args.json.write_text(json.dumps(all_results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
