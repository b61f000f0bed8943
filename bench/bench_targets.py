"""Every target of the build-speed work, measured against a baseline roofgen installed
side by side.

Run from the repository root::

    python bench/bench_targets.py [--cases 1000] [--small-cases 100] [--runs 5]
                                  [--scale-runs 1] [--baseline 9ccb7be] [--work DIR]
                                  [--site-packages DIR] [--only TARGET ...]

Two virtual environments are made (or reused) under ``--work`` (default
``roofgen-bench-targets`` in the system's temporary folder): ``base-<commit>`` holds
the baseline commit (``git archive`` of it) and ``now-<digest>`` the working tree as
it is (its files copied), each installed with ``pip install ".[site,bench]" -c constraints.txt``, so
both run the same versions of every dependency; check-jsonschema (the ``bench``
extra) comes with them. ``--site-packages DIR`` installs roofgen alone (``--no-deps``)
and takes every dependency from that site-packages folder instead (another
environment's, holding the same pinned versions: no download of the heavy wheels).

Every figure is of whole processes started as a user starts them (``roofgen ...`` in
the project folder, with the environment's own ``XDG_CACHE_HOME``): CPU time (user +
system, the process and the children it waited for, from ``wait4``), wall time, and
peak memory (``ru_maxrss``). The runs of the two roofgens (and of the peers) are
interleaved, and the median of ``--runs`` runs is taken; targets at ``--cases`` scale
take ``--scale-runs`` runs each (a cold build of 1,000 cases takes minutes).

Targets (issue "site builds at the floor"; the figures are the current roofgen's):

``cold``       cold build of ``--cases`` generated cases (10 kernels x 2 variants a
               case): under 120 s wall, peak memory under 1.5 GB
``cold-small`` cold build of ``--small-cases`` cases: at most 0.45x the baseline's CPU
``unchanged``  build with nothing changed at ``--cases``: under 5 s wall
``one-case``   after a one-case change, roofgen's own time (``build -v``'s steps, MkDocs'
               apart) under 10% of its cold build's; MkDocs' time printed beside it
``hook``       ``roofgen check`` as the pre-commit hook runs it (the whole specs folder
               of a 100-file project, one file changed, warm cache): at most 1.2x
               ``check-jsonschema --schemafile schemas/case.schema.json`` on that file
``check``      ``roofgen check`` of 1,000 variants in 100 files (warm cache): at most 3x
               PyYAML's C loader over the same files, both whole processes
``analyze``    ``roofgen analyze --format json`` at ``--cases``: peak memory under 300 MB
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

MB = 1024**2
TARGETS = ("cold", "cold-small", "unchanged", "one-case", "hook", "check", "analyze")
SETTINGS = 'specs = ["specs"]\n\n[site]\nname = "Bench"\nurl = "https://bench.example/"\n'
PYYAML = (
    "import sys, yaml\n"
    "for name in sys.argv[1:]:\n"
    "    with open(name, 'rb') as f:\n"
    "        yaml.load(f.read().decode('utf-8'), Loader=yaml.CSafeLoader)\n"
)


@dataclass
class Run:
    """One whole process: CPU seconds (user + system, waited-for children included),
    wall seconds, peak resident memory (bytes), exit status and its error output."""

    cpu: float
    wall: float
    maxrss: int
    status: int
    stderr: str


def run(command: list[str], cwd: Path, env: dict[str, str]) -> Run:
    """One whole process, under a small Python parent that reports ``wait4``'s figures
    for it alone (the parent's own start is not counted)."""
    probe = (
        "import os, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "_, status, ru = os.wait4(p.pid, 0)\n"
        "w = time.perf_counter() - t\n"
        "code = os.waitstatus_to_exitcode(status)\n"
        "print(ru.ru_utime + ru.ru_stime, w, ru.ru_maxrss * 1024, code)\n"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", probe, *command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    try:
        cpu, child_wall, rss, status = done.stdout.split()
        return Run(float(cpu), float(child_wall), int(rss), int(status), done.stderr)
    except ValueError:
        return Run(0.0, wall, 0, 99, done.stdout + done.stderr)


# --------------------------------------------------------------------------- installs


@dataclass(frozen=True)
class Roofgen:
    label: str
    venv: Path
    source: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def command(self, *args: str) -> list[str]:
        return [str(self.bin / "roofgen"), *args]

    def env(self, cache_home: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env.update(XDG_CACHE_HOME=str(cache_home), NO_COLOR="1", PATH=f"{self.bin}:{env['PATH']}")
        return env


def _tree_digest() -> str:
    """A digest of the working tree's files (tracked and untracked, not ignored)."""
    names = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    h = hashlib.sha256()
    for name in sorted(n for n in names if n):
        path = ROOT / os.fsdecode(name)
        if path.is_file():
            h.update(name + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def _copy_tree(target: Path) -> None:
    names = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in (os.fsdecode(n) for n in names if n):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)


def _archive(commit: str, target: Path) -> None:
    tar = target.with_suffix(".tar")
    with tar.open("wb") as f:
        subprocess.run(["git", "archive", commit], cwd=ROOT, stdout=f, check=True)
    with tarfile.open(tar) as t:
        t.extractall(target, filter="data")
    tar.unlink()


def install(
    label: str, work: Path, name: str, fill: Callable[[Path], None], site_packages: Path | None
) -> Roofgen:
    """A venv at ``work/name`` with the roofgen ``fill`` writes, reused when present."""
    venv, source = work / name, work / f"{name}-src"
    if (venv / "bin" / "roofgen").exists():
        return Roofgen(label, venv, source)
    shutil.rmtree(venv, ignore_errors=True)
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    fill(source)
    print(f"installing {label} into {venv} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    constraints = ["-c", str(ROOT / "constraints.txt")]
    if site_packages is not None:
        inner = next((venv / "lib").glob("python*/site-packages"))
        (inner / "shared-deps.pth").write_text(str(site_packages.resolve()) + "\n")
        subprocess.run([*pip, "--no-deps", str(source)], check=True)
    else:
        subprocess.run([*pip, *constraints, f"{source}[site,bench]"], check=True)
        subprocess.run([*pip, *constraints, "check-jsonschema"], check=True)
    made = Roofgen(label, venv, source)
    run(made.command("--version"), work, made.env(work / "cache-home"))  # compiles bytecode
    return made


# --------------------------------------------------------------------------- projects


def site_project(folder: Path, cases: int) -> Path:
    """``cases`` generated cases (10 kernels x 2 variants) with a settings file."""
    from bench_site import write_specs

    if not (folder / "roofgen.toml").exists():
        shutil.rmtree(folder, ignore_errors=True)
        write_specs(folder / "specs", cases)
        (folder / "roofgen.toml").write_text(SETTINGS, encoding="utf-8")
    return folder


def check_project(folder: Path) -> list[Path]:
    """bench_check's 100 case files of 10 variants each, and their machine."""
    from bench_check import generate

    (folder / "specs").mkdir(parents=True, exist_ok=True)
    paths = generate(folder / "specs", 100, 10)
    (folder / "roofgen.toml").write_text(SETTINGS, encoding="utf-8")
    return paths


_MEDIAN = re.compile(r"median: ([0-9.e+-]+) (m?s)")


_ORIGINAL: dict[Path, str] = {}


def edit_one(path: Path, turn: int) -> None:
    """A real change to one case: its first time median, a different value each turn
    (a few parts per million slower than the generated one, so still within its
    quartiles)."""
    text = _ORIGINAL.setdefault(path, path.read_text(encoding="utf-8"))
    found = _MEDIAN.search(text)
    assert found is not None, path
    value = f"median: {float(found.group(1)) * (1 + (turn + 1) * 1e-6):.12g} {found.group(2)}"
    path.write_text(text[: found.start()] + value + text[found.end() :], encoding="utf-8")


def forget(cache_home: Path, project: Path) -> None:
    """A cold start: no cache of either roofgen, no site."""
    shutil.rmtree(cache_home, ignore_errors=True)
    shutil.rmtree(project / ".roofgen-cache", ignore_errors=True)
    shutil.rmtree(project / "site", ignore_errors=True)


def steps(stderr: str) -> tuple[float, float]:
    """(roofgen's seconds, MkDocs' seconds) from ``build -v``'s step lines."""
    own = mkdocs = 0.0
    for name, seconds in re.findall(r"^\s+([a-z_ -]+): ([0-9.]+) s$", stderr, re.MULTILINE):
        if name == "mkdocs":
            mkdocs += float(seconds)
        else:
            own += float(seconds)
    return own, mkdocs


def ok(r: Run, what: str) -> Run:
    if r.status != 0:
        raise SystemExit(f"{what} failed ({r.status}):\n{r.stderr[-3000:]}")
    return r


# --------------------------------------------------------------------------- targets


@dataclass
class Line:
    target: str
    now: str
    base: str
    met: bool | None

    def __str__(self) -> str:
        verdict = {True: "met", False: "MISSED", None: "-"}[self.met]
        return f"{self.target:<66} {self.now:>34} {self.base:>34}  {verdict}"


def _med(values: list[float]) -> float:
    return statistics.median(values)


def build_targets(
    pair: list[Roofgen], work: Path, cases: int, runs: int, only: set[str]
) -> list[Line]:
    """cold, unchanged and one-case at ``cases``: one project per roofgen, so that each
    keeps its own cache and site between the steps."""
    fig: dict[str, dict[str, list[Run]]] = {r.label: {} for r in pair}
    own: dict[str, dict[str, list[tuple[float, float]]]] = {r.label: {} for r in pair}
    for turn in range(runs):
        for r in pair:
            project = site_project(work / f"{r.label}-site-{cases}", cases)
            home = project / "cache-home"
            env = r.env(home)
            forget(home, project)
            cold = ok(run(r.command("build", "-v"), project, env), f"{r.label} cold build")
            fig[r.label].setdefault("cold", []).append(cold)
            own[r.label].setdefault("cold", []).append(steps(cold.stderr))
            if only & {"unchanged", "one-case"}:
                same = ok(run(r.command("build", "-v"), project, env), "unchanged build")
                fig[r.label].setdefault("unchanged", []).append(same)
                edit_one(sorted((project / "specs" / "cases").glob("*.yaml"))[0], turn)
                changed = ok(run(r.command("build", "-v"), project, env), "one-case build")
                fig[r.label].setdefault("changed", []).append(changed)
                own[r.label].setdefault("changed", []).append(steps(changed.stderr))
    return _build_lines(pair, fig, own, cases, only)


def _build_lines(
    pair: list[Roofgen],
    fig: dict[str, dict[str, list[Run]]],
    own: dict[str, dict[str, list[tuple[float, float]]]],
    cases: int,
    only: set[str],
) -> list[Line]:
    lines: list[Line] = []
    now, base = pair[0].label, pair[1].label if len(pair) > 1 else None

    def figure(label: str | None, step: str, what: Callable[[list[Run]], str]) -> str:
        if label is None or step not in fig[label]:
            return "not run"
        return what(fig[label][step])

    def wall_mem(rs: list[Run]) -> str:
        return f"{_med([r.wall for r in rs]):.1f} s, {max(r.maxrss for r in rs) / MB:.0f} MB"

    if "cold" in only:
        rs = fig[now]["cold"]
        met = _med([r.wall for r in rs]) < 120 and max(r.maxrss for r in rs) < 1.5 * 1024**3
        lines.append(
            Line(
                f"cold build, {cases} cases: < 120 s wall, < 1.5 GB",
                wall_mem(rs),
                figure(base, "cold", wall_mem),
                met,
            )
        )
    if "unchanged" in only:
        rs = fig[now]["unchanged"]

        def wall(rs: list[Run]) -> str:
            cpu = _med([r.cpu for r in rs])
            return f"{_med([r.wall for r in rs]):.2f} s (cpu {cpu:.2f} s)"

        met = _med([r.wall for r in rs]) < 5
        lines.append(
            Line(
                f"build, nothing changed, {cases} cases: < 5 s wall",
                wall(rs),
                figure(base, "unchanged", wall),
                met,
            )
        )
    if "one-case" in only:

        def share(label: str | None) -> tuple[str, float]:
            if label is None or "changed" not in own[label]:
                return "not run", 1.0
            cold_own = _med([s[0] for s in own[label]["cold"]])
            changed_own = _med([s[0] for s in own[label]["changed"]])
            mkdocs = _med([s[1] for s in own[label]["changed"]])
            ratio = changed_own / cold_own if cold_own else 1.0
            return f"{ratio:.1%} ({changed_own:.1f}/{cold_own:.1f} s; mkdocs {mkdocs:.1f} s)", ratio

        text, ratio = share(now)
        lines.append(
            Line(
                "one-case change: roofgen's time < 10% of its cold build's",
                text,
                share(base)[0],
                ratio < 0.10,
            )
        )
    return lines


def cold_small(pair: list[Roofgen], work: Path, cases: int, runs: int) -> Line:
    cpu: dict[str, list[float]] = {r.label: [] for r in pair}
    for _ in range(runs):
        for r in pair:
            project = site_project(work / f"{r.label}-site-{cases}", cases)
            home = project / "cache-home"
            forget(home, project)
            cpu[r.label].append(ok(run(r.command("build"), project, r.env(home)), "cold build").cpu)
    now = _med(cpu[pair[0].label])
    if len(pair) == 1:
        return Line(
            f"cold build, {cases} cases: <= 0.45x baseline CPU", f"{now:.1f} s", "not run", None
        )
    base = _med(cpu[pair[1].label])
    return Line(
        f"cold build, {cases} cases: <= 0.45x baseline CPU",
        f"{now:.1f} s = {now / base:.2f}x",
        f"{base:.1f} s",
        now / base <= 0.45,
    )


def hook_and_check(pair: list[Roofgen], work: Path, runs: int, only: set[str]) -> list[Line]:
    """hook (one file changed, warm cache, against check-jsonschema on that file) and
    check (nothing changed, warm cache, against PyYAML's C loader)."""
    projects = {}
    for r in pair:
        project = work / f"{r.label}-check"
        shutil.rmtree(project, ignore_errors=True)
        paths = check_project(project)
        home = project / "cache-home"
        ok(run(r.command("check", "-q"), project, r.env(home)), f"{r.label} check")  # warm it
        projects[r.label] = (project, paths, home)
    now = pair[0]
    schema = str(ROOT / "schemas" / "case.schema.json")
    hook: dict[str, list[float]] = {r.label: [] for r in pair}
    check: dict[str, list[float]] = {r.label: [] for r in pair}
    peer_hook: list[float] = []
    peer_yaml: list[float] = []
    for turn in range(runs):
        for r in pair:
            project, paths, home = projects[r.label]
            if "hook" in only:
                edit_one(paths[1], turn)  # the first case file (paths[0] is the machine)
                hook[r.label].append(
                    ok(run(r.command("check", "-q"), project, r.env(home)), "hook check").cpu
                )
            if "check" in only:
                check[r.label].append(
                    ok(run(r.command("check", "-q"), project, r.env(home)), "check").cpu
                )
        project, paths, home = projects[now.label]
        if "hook" in only:
            cj = [
                str(now.bin / "python"),
                "-m",
                "check_jsonschema",
                "--schemafile",
                schema,
                str(paths[1]),
            ]
            peer_hook.append(ok(run(cj, project, now.env(home)), "check-jsonschema").cpu)
        if "check" in only:
            py = [str(now.bin / "python"), "-c", PYYAML, *map(str, paths)]
            peer_yaml.append(ok(run(py, project, now.env(home)), "PyYAML").cpu)
    base = pair[1].label if len(pair) > 1 else None
    lines = []
    if "hook" in only:
        peer = _med(peer_hook)
        mine = _med(hook[now.label])
        other = f"{_med(hook[base]):.2f} s = {_med(hook[base]) / peer:.2f}x" if base else "not run"
        lines.append(
            Line(
                f"hook check, 1 of 100 files changed: <= 1.2x check-jsonschema ({peer:.2f} s)",
                f"{mine:.2f} s = {mine / peer:.2f}x",
                other,
                mine / peer <= 1.2,
            )
        )
    if "check" in only:
        peer = _med(peer_yaml)
        mine = _med(check[now.label])
        other = (
            f"{_med(check[base]):.2f} s = {_med(check[base]) / peer:.2f}x" if base else "not run"
        )
        lines.append(
            Line(
                f"check, 1,000 variants in 100 files: <= 3x PyYAML C ({peer:.2f} s)",
                f"{mine:.2f} s = {mine / peer:.2f}x",
                other,
                mine / peer <= 3,
            )
        )
    return lines


def analyze(pair: list[Roofgen], work: Path, cases: int, runs: int) -> Line:
    rss: dict[str, list[int]] = {r.label: [] for r in pair}
    for _ in range(runs):
        for r in pair:
            project = site_project(work / f"{r.label}-site-{cases}", cases)
            env = r.env(project / "cache-home")
            command = r.command(
                "analyze", "--format", "json", "-q", "--force", "-o", str(project / "analysis.json")
            )
            rss[r.label].append(ok(run(command, project, env), "analyze").maxrss)
    now = max(rss[pair[0].label])
    base = f"{max(rss[pair[1].label]) / MB:.0f} MB" if len(pair) > 1 else "not run"
    return Line(
        f"analyze --format json, {cases} cases: peak < 300 MB",
        f"{now / MB:.0f} MB",
        base,
        now < 300 * MB,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--small-cases", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs (median)")
    parser.add_argument("--scale-runs", type=int, default=1, help="runs at --cases")
    parser.add_argument("--baseline", default="9ccb7be", help="commit ('none': no baseline)")
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "roofgen-bench-targets"
    )
    parser.add_argument(
        "--site-packages", type=Path, help="take every dependency from this site-packages folder"
    )
    parser.add_argument("--only", nargs="+", choices=TARGETS, default=list(TARGETS))
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    only = set(args.only)
    pair = [install("now", work, f"now-{_tree_digest()}", _copy_tree, args.site_packages)]
    if args.baseline != "none":
        commit = subprocess.run(
            ["git", "rev-parse", "--short", args.baseline],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        pair.append(
            install(
                "base", work, f"base-{commit}", lambda t: _archive(commit, t), args.site_packages
            )
        )
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; runs {args.runs}, "
        f"at {args.cases} cases {args.scale_runs}; CPU = user + system of the whole "
        "process, median of interleaved runs",
        flush=True,
    )
    lines: list[Line] = []
    if only & {"cold", "unchanged", "one-case"}:
        lines += build_targets(pair, work, args.cases, args.scale_runs, only)
    if "cold-small" in only:
        lines.append(cold_small(pair, work, args.small_cases, args.runs))
    if only & {"hook", "check"}:
        lines += hook_and_check(pair, work, args.runs, only)
    if "analyze" in only:
        lines.append(analyze(pair, work, args.cases, args.scale_runs))
    print(f"{'target':<66} {'now':>34} {'baseline ' + args.baseline:>34}  verdict")
    for line in lines:
        print(line, flush=True)


if __name__ == "__main__":
    main()
