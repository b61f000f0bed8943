"""MkDocs against Zensical on the same generated site, measured in one run.

Run from the repository root, with Zensical installed in a virtual environment of its
own (it is not one of roofgen's dependencies)::

    python -m venv /tmp/zensical && /tmp/zensical/bin/pip install zensical
    python bench/bench_zensical.py --zensical /tmp/zensical/bin/zensical [--cases 100]

It writes the synthetic specs of ``bench/bench_site.py`` (one machine; every case has
10 kernels x 2 variants), builds the site with roofgen, keeping a copy of the MkDocs
project roofgen generated (``mkdocs.yml`` and ``docs/``), and times MkDocs' step of that
build (CPU and wall seconds; it runs in this process). Then it builds the kept project
with ``zensical build`` in a child process (CPU seconds of the child, all its threads,
and wall seconds) and prints both, their ratios, and whether Zensical built every page
MkDocs built (or why it could not build the site); then Zensical once more, from its
cache. Zensical runs no MkDocs plugin: its search indexes every page whole, and the
roofgen search excerpt does not apply to it.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parent))

import bench_site  # noqa: E402

import roofgen.site.build as site_build  # noqa: E402
from roofgen.api import build_site  # noqa: E402


def mkdocs_build(cases: int, root: Path) -> tuple[float, float, Path]:
    """CPU and wall seconds of MkDocs' step, and the kept copy of its project."""
    specs = bench_site.write_specs(root / "specs", cases)
    kept = root / "project"
    spent: dict[str, float] = {}
    inner = site_build.run_mkdocs

    def timed(config_file: Path, site_dir: Path, **kwargs: object) -> list[str]:
        shutil.copytree(config_file.parent / "docs", kept / "docs")
        shutil.copyfile(config_file, kept / "mkdocs.yml")
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return inner(config_file, site_dir, **kwargs)  # type: ignore[arg-type]
        finally:
            spent["cpu"], spent["wall"] = time.process_time() - cpu, time.perf_counter() - wall

    site_build.run_mkdocs = timed  # type: ignore[assignment]
    cfg = bench_site.settings(root)
    result = build_site([specs], cfg, root / "site", cache_dir=root / "cache", quiet=True)
    if not result.ok:
        raise SystemExit("\n".join(p.format() for p in result.problems))
    return spent["cpu"], spent["wall"], kept


def zensical_build(
    zensical: str, project: Path, clean: bool = True
) -> tuple[float, float, str, int]:
    """CPU (the child's) and wall seconds of ``zensical build`` (``--clean``: without
    its cache), its output's tail and its exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [zensical, "build", *(["--clean"] if clean else []), "-f", "mkdocs.yml"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, (done.stdout + done.stderr)[-2000:], done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--zensical", default="zensical", help="The zensical command.")
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        m_cpu, m_wall, project = mkdocs_build(args.cases, root)
        pages = len(list((root / "site").rglob("*.html")))
        print(f"{args.cases} cases, {pages} HTML pages")
        print(f"  MkDocs    cpu {m_cpu:8.2f} s  wall {m_wall:8.2f} s")
        if shutil.which(args.zensical) is None:
            print(f"  Zensical  not run: {args.zensical} not found")
            return
        z_cpu, z_wall, tail, status = zensical_build(args.zensical, project)
        if status != 0:
            print(f"  Zensical  could not build the site (exit status {status}):\n{tail}")
            return
        built = len(list((project / "site").rglob("*.html")))
        print(f"  Zensical  cpu {z_cpu:8.2f} s  wall {z_wall:8.2f} s  ({built} HTML pages)")
        print(f"  Zensical / MkDocs: cpu {z_cpu / m_cpu:.2f}x, wall {z_wall / m_wall:.2f}x")
        w_cpu, w_wall, _, w_status = zensical_build(args.zensical, project, clean=False)
        if w_status == 0:  # MkDocs has no cache: roofgen runs it only when a page changed
            print(f"  Zensical again, from its cache: cpu {w_cpu:8.2f} s  wall {w_wall:8.2f} s")
        if built < pages:
            print(f"  Zensical wrote {pages - built} pages fewer; its output:\n{tail}")


if __name__ == "__main__":
    main()
