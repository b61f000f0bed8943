"""The MkDocs step of a site build at N generated cases: its CPU time and the bytes
of what it writes per page.

Run from the repository root (or with another checkout first on ``PYTHONPATH`` to
measure it on the same specs)::

    python bench/bench_pages.py [--cases 100] [--keep DIR] [--profile]

It writes the synthetic specs of ``bench/bench_site.py`` (one machine; every case has
10 kernels x 2 variants), builds the site once in this process, and prints the CPU
seconds (user + system, of this process: MkDocs runs in it) and wall seconds of the
MkDocs step alone, roofgen's own seconds, the mean bytes of a case page's HTML, the
bytes of its navigation (the primary ``<nav>``, up to the table of contents), and the
search index's size (JSON and script together).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parent))

import bench_site  # noqa: E402

import roofgen.site.build as site_build  # noqa: E402
from roofgen.api import build_site  # noqa: E402

_NAV = re.compile(
    r'<nav class="md-nav md-nav--primary".*?<div class="md-sidebar md-sidebar--secondary"',
    re.DOTALL,
)


def measure(cases: int, root: Path, profile: bool = False) -> dict[str, float]:
    specs = bench_site.write_specs(root / "specs", cases)
    spent: dict[str, float] = {}
    inner = site_build.run_mkdocs

    def timed(*args: object, **kwargs: object) -> list[str]:
        cpu, wall = time.process_time(), time.perf_counter()
        profiler = cProfile.Profile() if profile else None
        try:
            if profiler is not None:
                profiler.enable()
            return inner(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            if profiler is not None:
                profiler.disable()
                pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
            spent["cpu"] = time.process_time() - cpu
            spent["wall"] = time.perf_counter() - wall

    site_build.run_mkdocs = timed  # type: ignore[assignment]
    cfg = bench_site.settings(root)
    result = build_site([specs], cfg, root / "site", cache_dir=root / "cache", quiet=True)
    if not result.ok:
        raise SystemExit("\n".join(p.format() for p in result.problems))
    pages = sorted((root / "site" / "cases").glob("*/index.html"))
    texts = [p.read_text(encoding="utf-8") for p in pages]
    navs = [len(m.group(0).encode()) if (m := _NAV.search(t)) else 0 for t in texts]
    index = root / "site" / "search"
    return {
        "mkdocs_cpu_s": spent["cpu"],
        "mkdocs_wall_s": spent["wall"],
        "roofgen_s": result.roofgen_s,
        "html_pages": float(len(list((root / "site").rglob("*.html")))),
        "case_page_bytes": sum(len(t.encode()) for t in texts) / len(texts),
        "nav_bytes_per_case_page": sum(navs) / len(navs),
        "search_json_bytes": float(sum(f.stat().st_size for f in index.glob("search_index.*"))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it.")
    parser.add_argument("--profile", action="store_true", help="Profile the MkDocs step.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        figures = measure(args.cases, root, args.profile)
    print(f"{args.cases} cases:")
    for key, value in figures.items():
        print(f"  {key:<26} {value:14,.2f}")
    per_page = 1000 * figures["mkdocs_cpu_s"] / figures["html_pages"]
    print(f"  {'mkdocs_cpu_ms_per_page':<26} {per_page:14,.1f}")


if __name__ == "__main__":
    main()
