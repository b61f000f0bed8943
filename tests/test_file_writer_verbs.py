"""Every verb and library function that writes a file, against the same attacks.

The attacks are data: a project (roofgen.toml, specs/, inputs) with links planted where
a writer looks, and a victim outside it. For each writer:

* planted links at the temporary names it may try (the old fixed ``.NAME.tmp``
  and the first name it draws) never receive data; the file is written whole,
  with mode ``0o666 & ~umask`` (0o644 under umask 0o022, 0o600 under 0o077; an
  edited file keeps its 0o640);
* a linked parent folder that leads out of the project (``specs/cases -> outside``)
  is refused: exit status 1 and the message below, pinned word for word; nothing
  outside changes;
* a linked target inside the project is written through: it stays a link, the real
  file gets the new text and keeps its mode (0o640).

The writer itself is tested in test_file_writer.py.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from roofgen import files
from roofgen.cli import main
from roofgen.files import WriteRefused

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = ROOT / "tests" / "cases" / "valid" / "minimal"
SGEMM = ROOT / "tests" / "data" / "ncu" / "01_sgemm.csv"
NSYS = ROOT / "tests" / "data" / "nsys" / "cuda_gpu_trace_rtx5090_head.csv"
TORCH = ROOT / "tests" / "data" / "torch" / "triton_example.json.gz"
VECTOR_ADD = ROOT / "tests" / "cases" / "valid" / "a100-kernels" / "vector-add.yaml"
VICTIM = b"#!/bin/sh\necho the victim script\n"
OLD = b"old text\n"

V0_CASE = """\
roofgen: 0
kind: case
id: old
title: Old   # kept
machines: [seed]
kernels:
  - {id: low, operator: {kind: other}}
variants:
  - id: base
    launches:
      - kernel: low
        measurement:
          time: 1 ms
          flops: {tensor: {fp16: 1e9 FLOP}}
          bytes_hbm: 1 GB   # dram
"""


@dataclass(frozen=True)
class Verb:
    name: str
    args: tuple[str, ...]
    written: str  # the file it writes, relative to the project
    edits: bool = False  # it edits a file that exists (import --into, migrate)


INTO = ("--variant", "profiled", "--kernel-map", "gemm_v1=add", "--only-mapped")
NCU = ("import", "ncu", str(SGEMM), "--machine", "a100-40gb-sxm")
NEW = ("new", "case")
F = "--force"
VERBS = [
    Verb("check", ("check", "--format", "json", "-o", "out/check.json", F), "out/check.json"),
    Verb("analyze", ("analyze", "--format", "json", "-o", "out/a.json", F), "out/a.json"),
    Verb("explain", ("explain", "pts/low", "-o", "out/explain.txt", F), "out/explain.txt"),
    Verb("chart", ("chart", "--kernel", "pts/low", "-o", "out/chart.json", F), "out/chart.json"),
    Verb("diff", ("diff", "base", "specs", "-o", "out/diff.md", F), "out/diff.md"),
    Verb("diff-charts", ("diff", "base", "specs", "--charts", "out/charts"), "out/charts/pts.svg"),
    Verb("import-ncu", (*NCU, "-o", "out/imported.yaml", F), "out/imported.yaml"),
    Verb("import-into", (*NCU, "--into", "edits/into.yaml", *INTO), "edits/into.yaml", True),
    Verb(
        "import-nsys",
        ("import", "nsys", str(NSYS), "--machine", "h100-sxm", "-o", "out/nsys.yaml", F),
        "out/nsys.yaml",
    ),  # fmt: skip
    Verb(
        "import-torch",
        (
            "import",
            "torch-trace",
            str(TORCH),
            "--machine",
            "a100-40gb-sxm",
            "-o",
            "out/torch.yaml",
            F,
        ),
        "out/torch.yaml",
    ),  # fmt: skip
    Verb("migrate", ("migrate", "edits/old.yaml"), "edits/old.yaml", edits=True),
    Verb("new-case", (*NEW, "fresh", "--machine", "a100-40gb-sxm", F), "specs/cases/fresh.yaml"),
    Verb("vendor", ("machines", "vendor", "a100-40gb-sxm", F), "specs/machines/a100-40gb-sxm.yaml"),
    Verb("schema", ("schema", "--write", "out/schemas", F), "out/schemas/machine.schema.json"),
    Verb("init", ("init", ".", F), "specs/cases/example-vector-add.yaml"),
    # history reads git: the project is a repository for these two (see `project`)
    Verb("history", ("history", "--format", "json", "-o", "out/h.json", F), "out/h.json"),
    Verb("history-chart", ("history", "--chart", "out/h.svg", F), "out/h.svg"),
]


@pytest.fixture(autouse=True)
def _quiet_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture
def umask() -> object:
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Path:
    """The project (the current folder) and tmp/outside holding the victim; a git
    repository with one commit for the history verbs."""
    proj = tmp_path / "project"
    for folder in ("specs/cases", "specs/machines", "base", "edits", "out", "real"):
        (proj / folder).mkdir(parents=True)
    (proj / "roofgen.toml").write_text('specs = ["specs"]\n')
    case = (MINIMAL / "case.yaml").read_text()
    shutil.copyfile(MINIMAL / "machine.yaml", proj / "specs" / "machines" / "seed.yaml")
    (proj / "specs" / "cases" / "pts.yaml").write_text(case)
    shutil.copyfile(MINIMAL / "machine.yaml", proj / "base" / "seed.yaml")
    slower = case.replace("1.1 ms, q1: 1.09 ms, q3: 1.12 ms", "2.2 ms, q1: 2.18 ms, q3: 2.24 ms")
    (proj / "base" / "pts.yaml").write_text(slower)
    shutil.copyfile(VECTOR_ADD, proj / "edits" / "into.yaml")
    (proj / "edits" / "old.yaml").write_text(V0_CASE)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.sh").write_bytes(VICTIM)
    monkeypatch.chdir(proj)
    verb = getattr(getattr(request.node, "callspec", None), "params", {}).get("verb")
    if verb is not None and verb.name.startswith("history"):
        for args in (("init", "-q"), ("add", "specs"), ("commit", "-qm", "specs")):
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                           cwd=proj, check=True, capture_output=True)  # fmt: skip
    return proj


def _run(args: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(list(args))
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return status, err


def _snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a file's bytes, a link's target."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            out[key] = os.readlink(path)
        elif path.is_file():
            out[key] = path.read_bytes()
    return out


def _perm(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _propose_planted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer first tries ``.NAME.tmp`` (the name every writer used to write
    through), then ``.NAME.planted.tmp``, then names of its own."""
    draw = files._temp_name
    proposed: dict[str, list[str]] = {}

    def propose(name: str) -> str:
        left = proposed.setdefault(name, [f".{name}.tmp", f".{name}.planted.tmp"])
        return left.pop(0) if left else draw(name)

    monkeypatch.setattr(files, "_temp_name", propose)


# --------------------------------------------------------------------------- the verbs


@pytest.mark.parametrize(("mask", "new_mode"), [(0o022, 0o644), (0o077, 0o600)])
@pytest.mark.parametrize("verb", VERBS, ids=lambda v: v.name)
def test_planted_temporary_names_never_receive_data(
    verb, mask, new_mode, project, tmp_path, capsys, monkeypatch, umask
):
    target = project / verb.written
    target.parent.mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "outside" / "victim.sh"
    planted = [f".{target.name}.tmp", f".{target.name}.planted.tmp"]
    for name in planted:
        (target.parent / name).symlink_to(victim)
    if verb.edits:
        target.chmod(0o640)
    _propose_planted(monkeypatch)
    os.umask(mask)
    status, err = _run(verb.args, capsys)
    assert status == 0, err
    assert victim.read_bytes() == VICTIM
    assert all(os.readlink(target.parent / name) == str(victim) for name in planted)
    assert target.is_file() and not target.is_symlink() and target.stat().st_size > 0
    assert _perm(target) == (0o640 if verb.edits else new_mode)
    left = [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    assert sorted(left) == sorted(planted)  # no temporary file of its own left behind


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: v.name)
def test_a_linked_folder_out_of_the_project_is_refused(verb, project, tmp_path, capsys):
    target = project / verb.written
    folder = target.parent
    outside = tmp_path / "outside"
    if folder.exists():  # what the folder held is now behind the link (the victim's files)
        for entry in folder.iterdir():
            shutil.move(entry, outside / entry.name)
        folder.rmdir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.symlink_to(outside)
    before = _snapshot(outside)
    status, err = _run(verb.args, capsys)
    where = folder.relative_to(project).as_posix()
    expected = (
        f"{verb.written}: not written: {where} is a symbolic link to {outside.resolve()}, "
        f"outside {project.resolve()}"
    )
    assert status == 1
    assert expected in err.splitlines(), err
    assert _snapshot(outside) == before


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: v.name)
def test_a_linked_target_inside_the_project_is_written_through(verb, project, capsys, umask):
    target = project / verb.written
    real = project / "real" / target.name
    if verb.edits:
        shutil.move(target, real)
    else:
        real.write_bytes(OLD)
    real.chmod(0o640)
    target.parent.mkdir(parents=True, exist_ok=True)
    link = os.path.relpath(real, target.parent)
    target.symlink_to(link)
    before = real.read_bytes()
    status, err = _run(verb.args, capsys)
    assert status == 0, err
    assert os.readlink(target) == link
    assert real.read_bytes() != before and real.stat().st_size > 0
    assert _perm(real) == 0o640


# --------------------------------------------------------------------------- edits


CRLF_MIXED = (
    b"roofgen: 0\r\nkind: case\nid: old\r\ntitle: Old   # kept\r\nmachines: [seed]\n"
    b"kernels:\r\n  - {id: low, operator: {kind: other}}\r\nvariants:\r\n  - id: base\r\n"
    b"    launches:\r\n      - kernel: low\r\n        measurement:\r\n          time: 1 ms\r\n"
    b"          flops: {tensor: {fp16: 1e9 FLOP}}\r\n          bytes_hbm: 1 GB   # dram\n"
)
# By hand: line 1 changes in place and keeps CRLF; bytes_hbm (LF) becomes "bytes:" (its
# LF kept) and a new line "hbm:", which takes the file's most common ending, CRLF (12
# CRLF against 3 LF).
CRLF_MIXED_MIGRATED = (
    b"roofgen: 1\r\nkind: case\nid: old\r\ntitle: Old   # kept\r\nmachines: [seed]\n"
    b"kernels:\r\n  - {id: low, operator: {kind: other}}\r\nvariants:\r\n  - id: base\r\n"
    b"    launches:\r\n      - kernel: low\r\n        measurement:\r\n          time: 1 ms\r\n"
    b"          flops: {tensor: {fp16: 1e9 FLOP}}\r\n          bytes:\n"
    b"            hbm: 1 GB       # dram\r\n"
)
CR_ONLY = V0_CASE.replace("\n", "\r").encode()
CR_ONLY_MIGRATED = (
    V0_CASE.replace("roofgen: 0", "roofgen: 1")
    .replace("bytes_hbm: 1 GB   # dram", "bytes:\n            hbm: 1 GB       # dram")
    .replace("\n", "\r")
    .encode()
)
BOM = b"\xef\xbb\xbf" + V0_CASE.encode()
BOM_MIGRATED = b"\xef\xbb\xbf" + CR_ONLY_MIGRATED.replace(b"\r", b"\n")


@pytest.mark.parametrize(
    ("before", "after"),
    [(CRLF_MIXED, CRLF_MIXED_MIGRATED), (CR_ONLY, CR_ONLY_MIGRATED), (BOM, BOM_MIGRATED)],
    ids=["crlf-mixed", "cr-only", "bom"],
)
def test_migrate_keeps_line_endings_and_the_bom(before, after, project, capsys):
    case = project / "edits" / "old.yaml"
    case.write_bytes(before)
    case.chmod(0o640)
    status, err = _run(("migrate", "edits/old.yaml"), capsys)
    assert status == 0, err
    assert case.read_bytes() == after
    assert _perm(case) == 0o640


@pytest.mark.parametrize(
    ("ending", "bom"),
    [(b"\r\n", b""), (b"\r", b""), (b"\n", b"\xef\xbb\xbf")],
    ids=["crlf", "cr", "bom"],
)
def test_import_into_keeps_line_endings_and_the_bom(ending, bom, project, capsys):
    """The lines of the case stay byte for byte; the added lines end as the file's."""
    case = project / "edits" / "into.yaml"
    original = VECTOR_ADD.read_bytes()
    # Mixed: the first line keeps LF, every other line takes ``ending``.
    first, rest = original.split(b"\n", 1)
    case.write_bytes(bom + first + b"\n" + rest.replace(b"\n", ending))
    status, err = _run((*NCU, "--into", "edits/into.yaml", *INTO), capsys)
    assert status == 0, err
    raw = case.read_bytes()
    assert raw.startswith(bom + first + b"\n" + rest.replace(b"\n", ending))  # all kept
    added = raw[len(bom + first) + 1 + len(rest.replace(b"\n", ending)) :]
    assert added.startswith(b"  - id: profiled" + ending)
    assert added.count(ending) == len(added.decode().splitlines()) > 10
    if ending == b"\r":
        assert b"\n" not in added
    data = yaml.safe_load(raw.decode("utf-8-sig").replace("\r", "\n"))
    assert [v["id"] for v in data["variants"]][-1] == "profiled"


# --------------------------------------------------------------------------- the library


def _chart(path: str) -> None:
    from roofgen.api import write_chart

    write_chart({"mark": "point", "data": {"values": []}}, Path(path))


def _dump_case(path: str) -> None:
    from roofgen import dump_case

    dump_case(yaml.safe_load((MINIMAL / "case.yaml").read_text()), path)


def _write_case(path: str) -> None:
    import roofgen

    roofgen.load("specs").write_case("pts", path)


LIBRARY: list[tuple[str, Callable[[str], None]]] = [
    ("api.write_chart", _chart),
    ("dump_case", _dump_case),
    ("Workspace.write_case", _write_case),
]


@pytest.mark.parametrize(("name", "write"), LIBRARY, ids=[n for n, _ in LIBRARY])
def test_library_writers(name, write, project, tmp_path, monkeypatch, umask):
    victim = tmp_path / "outside" / "victim.sh"
    for planted in (".w.yaml.tmp", ".w.yaml.planted.tmp"):
        (project / "out" / planted).symlink_to(victim)
    _propose_planted(monkeypatch)
    os.umask(0o077)
    write("out/w.yaml")
    assert _perm(project / "out" / "w.yaml") == 0o600
    (project / "real" / "w.yaml").write_bytes(b"id: pts\n")  # linked, inside: through
    (project / "real" / "w.yaml").chmod(0o640)
    (project / "out" / "through.yaml").symlink_to("../real/w.yaml")
    write("out/through.yaml")
    assert (project / "out" / "through.yaml").is_symlink()
    assert _perm(project / "real" / "w.yaml") == 0o640
    assert (project / "real" / "w.yaml").read_bytes() != b"id: pts\n"
    (project / "cases").symlink_to(tmp_path / "outside")  # out of the project: refused
    with pytest.raises(WriteRefused) as caught:
        write("cases/victim.sh")
    assert str(caught.value) == (
        f"cases/victim.sh: not written: cases is a symbolic link to "
        f"{(tmp_path / 'outside').resolve()}, outside {project.resolve()}"
    )
    assert victim.read_bytes() == VICTIM
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["victim.sh"]


# --------------------------------------------------------------------------- the build


def _fake_mkdocs(plant: Callable[[Path], None]) -> Callable[..., list[str]]:
    def run_mkdocs(config: Path, tree: Path, **_: object) -> list[str]:
        tree.mkdir()
        (tree / "index.html").write_text("<html></html>\n")
        plant(tree)
        return []

    return run_mkdocs


@pytest.fixture(scope="module")
def build_args(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """``roofgen build`` with one chart cache for the module: the Vega bundle and the
    charts are made once."""
    return ("build", "-j", "0", "--cache-dir", str(tmp_path_factory.mktemp("cache")))


def _stage_free(err: str) -> str:
    return re.sub(r"\.site\.tmp-\d+-[^/ )]+", ".site.tmp-STAGE", err)


def test_a_planted_marker_link_is_refused(project, tmp_path, capsys, monkeypatch, build_args):
    victim = tmp_path / "outside" / "victim.sh"

    def plant(tree: Path) -> None:
        (tree / ".roofgen-site").symlink_to(victim)

    monkeypatch.setattr("roofgen.site.build.run_mkdocs", _fake_mkdocs(plant))
    status, err = _run(build_args, capsys)
    stage = f"{project.resolve()}/.site.tmp-STAGE"
    assert status == 1
    assert (
        f"{project.resolve()}/site: cannot write the site: it is a symbolic link to "
        f"{victim.resolve()}, outside {stage}/site ({stage}/site/.roofgen-site)"
    ) in _stage_free(err).splitlines(), err
    assert victim.read_bytes() == VICTIM and not (project / "site").exists()


def test_a_planted_config_link_is_refused(project, tmp_path, capsys, monkeypatch, build_args):
    import roofgen.site.build as build

    victim = tmp_path / "outside" / "victim.sh"
    write_docs = build._write_docs

    def write_docs_then_plant(docs: Path, *args: object) -> object:
        made = write_docs(docs, *args)  # type: ignore[arg-type]
        (docs.parent / "mkdocs.yml").symlink_to(victim)
        (docs.parent / ".mkdocs.yml.tmp").symlink_to(victim)
        return made

    monkeypatch.setattr(build, "_write_docs", write_docs_then_plant)
    monkeypatch.setattr(build, "run_mkdocs", _fake_mkdocs(lambda tree: None))
    status, err = _run(build_args, capsys)
    stage = f"{project.resolve()}/.site.tmp-STAGE"
    assert status == 1
    assert (
        f"{project.resolve()}/site: cannot write the site: it is a symbolic link to "
        f"{victim.resolve()}, outside {stage} ({stage}/mkdocs.yml)"
    ) in _stage_free(err).splitlines(), err
    assert victim.read_bytes() == VICTIM


def test_a_build_writes_its_config_and_marker(project, capsys, monkeypatch, umask, build_args):
    monkeypatch.setattr("roofgen.site.build.run_mkdocs", _fake_mkdocs(lambda tree: None))
    os.umask(0o022)
    status, err = _run(build_args, capsys)
    assert status == 0, err
    marker = project / "site" / ".roofgen-site"
    assert marker.read_text().startswith("generated by roofgen")
    assert _perm(marker) == 0o644


# --------------------------------------------------------------------------- a full disk


class _FullDisk:
    """A file opened for writing on a full disk: every write fails with ENOSPC (as the
    kernel's write(2) does), closing works."""

    def __init__(self, handle: object) -> None:
        self.handle = handle

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()  # type: ignore[attr-defined]

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def fileno(self) -> int:
        return self.handle.fileno()  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: v.name)
def test_a_full_disk_is_an_error_of_input_naming_the_file(verb, project, capsys, monkeypatch):
    target = project / verb.written
    target.parent.mkdir(parents=True, exist_ok=True)
    if not verb.edits:
        target.write_bytes(OLD)
    before = target.read_bytes()
    real_fdopen = os.fdopen

    def full(fd: int, mode: str = "r", *args: object, **kwargs: object) -> object:
        handle = real_fdopen(fd, mode, *args, **kwargs)  # type: ignore[call-overload]
        return _FullDisk(handle) if "w" in mode else handle

    monkeypatch.setattr(os, "fdopen", full)
    status, err = _run(verb.args, capsys)
    monkeypatch.undo()
    assert status == 1, err
    lines = [line for line in err.splitlines() if "not written" in line]
    assert len(lines) == 1, err
    written, _, why = lines[0].partition(": not written: ")
    assert why == "the disk is full: free some space and run again"
    if verb.name in MANY_FILES:  # the first file of several
        assert (project / written).resolve().is_relative_to(project.resolve()), written
    elif verb.name == "new-case":  # its text is checked first, as a temporary copy
        assert Path(written).name == target.name, written
    else:
        assert (project / written).resolve() == target.resolve()
    assert target.read_bytes() == before  # the old file whole: nothing half-written
    assert not [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")]


#: Verbs that write several files: the first one the disk refuses is named.
MANY_FILES = {"init", "schema", "diff-charts"}


def test_a_full_disk_met_while_making_a_folder_is_an_error_of_input(project, capsys, monkeypatch):
    def full(path: object, *args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(Path, "mkdir", full)
    status, err = _run(("init", "fresh"), capsys)
    monkeypatch.undo()
    assert status == 1
    assert "fresh: not written: the disk is full: free some space and run again" in err


@pytest.fixture
def small_disk(tmp_path: Path) -> object:
    """A 64 KiB tmpfs mounted at tmp/disk (skipped where mounting is not permitted)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                           capture_output=True, check=False)  # fmt: skip
    if mount.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield disk
    finally:
        # lazily: the test may still be in it (its folder is restored after this runs)
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, check=False)


def test_a_really_full_disk(small_disk: Path, capsys, monkeypatch) -> None:
    proj = small_disk / "project"
    (proj / "specs" / "cases").mkdir(parents=True)
    (proj / "roofgen.toml").write_text('specs = ["specs"]\n')
    shutil.copyfile(MINIMAL / "machine.yaml", proj / "specs" / "seed.yaml")
    shutil.copyfile(MINIMAL / "case.yaml", proj / "specs" / "cases" / "pts.yaml")
    (proj / "a.json").write_bytes(OLD)
    filler = proj / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as f:  # fill the disk
        while True:
            f.write(b"x" * 512)
            f.flush()
    monkeypatch.chdir(proj)
    monkeypatch.setenv("ROOFGEN_NO_CACHE", "1")
    status, err = _run(("analyze", "--format", "json", "-o", "a.json", "--force"), capsys)
    assert status == 1
    assert "a.json: not written: the disk is full: free some space and run again" in err
    assert (proj / "a.json").read_bytes() == OLD
    assert sorted(p.name for p in proj.iterdir()) == ["a.json", "filler", "roofgen.toml", "specs"]
