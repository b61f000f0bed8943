"""A failed or interrupted build leaves the previous site whole; builds are
byte-identical on other days and on other machines.

tests/test_site.py covers an invalid spec, a KeyboardInterrupt raised by MkDocs,
and two builds in one folder with other hash seeds and cache states. This module
adds MkDocs stopping (abort, configuration error), a full disk at each stage
(pages, MkDocs, the final rename), a KeyboardInterrupt in the middle of writing
pages and between the two renames of the swap, a real SIGINT to a build in another
process, and builds on different days (SOURCE_DATE_EPOCH, a shifted clock, time
zones) from different folders and temporary folders.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from specdata import make_settings

from roofgen.api import build_site
from roofgen.cli import main
from roofgen.site.build import MARKER

pytestmark = pytest.mark.slow

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
EXAMPLES = Path(__file__).resolve().parents[1] / "specs"


SITE = {"name": "Atomic", "url": "https://perf.example.com/"}


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def leftovers(root: Path) -> list[str]:
    """Staging and old-tree folders a build may leave beside its output."""
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".site."))


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A project whose site is built once; returns its root and the site's files."""
    shutil.copytree(MINIMAL, tmp_path / "specs")
    result = build_site([tmp_path / "specs"], make_settings(tmp_path, **SITE), tmp_path / "site",
                        cache_dir=tmp_path / "cache")  # fmt: skip
    assert result.ok, [p.format() for p in result.problems]
    # a change, so that a complete second build would differ from the first
    case = tmp_path / "specs" / "case.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("Points", "Renamed"), "utf-8")
    return tmp_path, tree(tmp_path / "site")


def rebuild(root: Path, **options: Any) -> Any:
    return build_site([root / "specs"], make_settings(root, **SITE), root / "site",
                      cache_dir=root / "cache", **options)  # fmt: skip


def assert_unchanged(root: Path, before: dict[str, bytes]) -> None:
    assert tree(root / "site") == before
    assert leftovers(root) == []
    assert (root / "site" / MARKER).is_file()


# --------------------------------------------------------------------------- MkDocs fails


def _partial_then(error: BaseException):
    def build(config: Any, **kwargs: Any) -> None:
        site = Path(config["site_dir"])
        site.mkdir(parents=True, exist_ok=True)
        (site / "index.html").write_text("<p>half a site</p>", encoding="utf-8")
        raise error

    return build


@pytest.mark.parametrize("strict", [False, True])
def test_mkdocs_aborting_keeps_the_previous_site(built, monkeypatch, strict) -> None:
    from mkdocs.exceptions import Abort

    root, before = built
    monkeypatch.setattr("mkdocs.commands.build.build", _partial_then(Abort("theme exploded")))
    result = rebuild(root, strict=strict)
    assert not result.ok
    assert [p.message for p in result.problems if p.severity == "error"][-1].endswith(
        "theme exploded"
    )
    assert_unchanged(root, before)


def test_a_mkdocs_configuration_error_keeps_the_previous_site(built, monkeypatch) -> None:
    from mkdocs.exceptions import ConfigurationError

    root, before = built

    def load_config(**kwargs: Any) -> None:
        raise ConfigurationError("Config value 'theme': unrecognised theme 'nope'.")

    monkeypatch.setattr("mkdocs.config.load_config", load_config)
    result = rebuild(root)
    assert not result.ok
    assert "unrecognised theme" in result.problems[-1].message
    assert_unchanged(root, before)


# --------------------------------------------------------------------------- disk full


def _full_disk_after(calls: int, real: Any):
    count = {"n": 0}

    def write(*args: Any, **kwargs: Any) -> Any:
        count["n"] += 1
        if count["n"] > calls:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(args[0]))
        return real(*args, **kwargs)

    return write


def test_a_full_disk_while_writing_pages_keeps_the_previous_site(built, monkeypatch) -> None:
    import roofgen.site.build as site_build

    root, before = built
    monkeypatch.setattr(site_build, "_write", _full_disk_after(3, site_build._write))
    result = rebuild(root)
    assert not result.ok
    assert result.problems[-1].message.startswith(
        "cannot write the site: No space left on device ("
    )
    assert_unchanged(root, before)


def test_a_full_disk_during_mkdocs_keeps_the_previous_site(built, monkeypatch) -> None:
    root, before = built
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "site/index.html")
    monkeypatch.setattr("mkdocs.commands.build.build", _partial_then(full))
    result = rebuild(root)
    assert not result.ok
    assert result.problems[-1].message == (
        "cannot write the site: No space left on device (site/index.html)"
    )
    assert_unchanged(root, before)


def test_the_cli_reports_a_full_disk_as_a_failed_build(built, monkeypatch, capsys) -> None:
    import roofgen.site.build as site_build

    root, before = built
    monkeypatch.setattr(site_build, "_write", _full_disk_after(0, site_build._write))
    monkeypatch.chdir(root)
    monkeypatch.setenv("NO_COLOR", "1")
    status = main(["build", "specs", "-o", "site", "--cache-dir", "cache"])
    _, err = capsys.readouterr()
    assert status == 1, err
    assert "cannot write the site: No space left on device" in err
    assert "site not built; site is unchanged" in err
    assert "internal error" not in err
    assert_unchanged(root, before)


@pytest.mark.parametrize("failure", [OSError(errno.ENOSPC, "No space left"), KeyboardInterrupt])
def test_a_failure_between_the_two_renames_restores_the_old_site(
    built, monkeypatch, failure
) -> None:
    root, before = built
    real = os.rename
    calls: list[tuple[str, str]] = []

    def rename(src: Any, dst: Any) -> None:
        calls.append((str(src), str(dst)))
        if len(calls) == 2:  # the new tree into place, after the old one moved aside
            raise failure
        real(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    if isinstance(failure, OSError):
        assert not rebuild(root).ok
    else:
        with pytest.raises(KeyboardInterrupt):
            rebuild(root)
    monkeypatch.setattr(os, "rename", real)
    assert Path(calls[1][1]) == root / "site"
    assert_unchanged(root, before)


# --------------------------------------------------------------------------- interrupts


def test_an_interrupt_while_writing_pages_keeps_the_previous_site(built, monkeypatch) -> None:
    import roofgen.site.build as site_build

    root, before = built
    real = site_build._write
    written: list[str] = []

    def write(root: Path, relative: str, text: str) -> None:
        written.append(relative)
        if len(written) == 4:
            raise KeyboardInterrupt
        real(root, relative, text)

    monkeypatch.setattr(site_build, "_write", write)
    with pytest.raises(KeyboardInterrupt):
        rebuild(root)
    assert len(written) == 4
    assert_unchanged(root, before)
    monkeypatch.chdir(root)  # the CLI: status 130, and still nothing changed
    written.clear()
    assert main(["build", "specs", "-q", "-o", "site", "--cache-dir", "cache"]) == 130
    assert_unchanged(root, before)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.timeout(300)
def test_sigint_to_a_build_in_another_process_keeps_the_previous_site(built) -> None:
    root, before = built
    env = {**os.environ, "NO_COLOR": "1"}
    command = [sys.executable, "-c", "from roofgen.cli import entry; entry()",
               "build", "specs", "-q", "-o", "site", "--cache-dir", "cache"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while not any(p.name.startswith(".site.tmp-") for p in root.iterdir()):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the build never started writing"
            time.sleep(0.005)
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C: the whole process group
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode in (130, -signal.SIGINT), (process.returncode, err)
    assert b"Traceback" not in err
    assert_unchanged(root, before)


# --------------------------------------------------------------------------- determinism

# Runs before anything else in the child: its clock says another day.
_SHIFT_CLOCK = textwrap.dedent(
    """\
    import datetime, os, time

    _shift = float(os.environ["ROOFGEN_TEST_CLOCK_SHIFT"])
    _time, _time_ns = time.time, time.time_ns
    time.time = lambda: _time() + _shift
    time.time_ns = lambda: _time_ns() + int(_shift * 1e9)
    _gmtime, _localtime = time.gmtime, time.localtime
    time.gmtime = lambda s=None: _gmtime(time.time() if s is None else s)
    time.localtime = lambda s=None: _localtime(time.time() if s is None else s)


    class _Datetime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.datetime.fromtimestamp(time.time(), tz)

        @classmethod
        def utcnow(cls):
            return datetime.datetime.fromtimestamp(time.time(), datetime.timezone.utc).replace(
                tzinfo=None
            )

        @classmethod
        def today(cls):
            return cls.now()


    class _Date(datetime.date):
        @classmethod
        def today(cls):
            return datetime.date.fromtimestamp(time.time())


    datetime.datetime = _Datetime
    datetime.date = _Date
    """
)


def _build_elsewhere(
    workdir: Path, specs_from: Path, env: dict[str, str], output: str
) -> subprocess.Popen[str]:
    """Start `roofgen build` in ``workdir`` on a copy of ``specs_from``."""
    shutil.copytree(specs_from, workdir / "specs")
    (workdir / "tmp").mkdir()
    environment = {**os.environ, "NO_COLOR": "1", "TMPDIR": str(workdir / "tmp"),
                   "HOME": str(workdir), **env}  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-c", "from roofgen.cli import entry; entry()", "build", "specs",
         "-q", "-o", output, "--cache-dir", str(workdir / "cache")],
        cwd=workdir, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.timeout(600)
def test_builds_on_other_days_and_machines_are_byte_identical(tmp_path: Path) -> None:
    # An example case (dated) and its machine, copied once: one input for both builds.
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    for spec in ("machines/a100-40gb-sxm.yaml", "cases/vector-add.yaml"):
        shutil.copy(EXAMPLES / spec, snapshot / Path(spec).name)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(_SHIFT_CLOCK, encoding="utf-8")
    later = {"ROOFGEN_TEST_CLOCK_SHIFT": str(400 * 86400 + 12345.678), "PYTHONPATH": str(shim)}
    today = subprocess.run(
        [sys.executable, "-c", "import datetime, time; print(datetime.date.today(), time.time())"],
        env={**os.environ, **later}, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert float(today[1]) - time.time() > 399 * 86400, "the shifted clock is not in effect"
    one = tmp_path / "one"
    two = tmp_path / "elsewhere" / "deeper" / "two"
    one.mkdir()
    two.mkdir(parents=True)
    # Both at once: roofgen's own templates are read while building, and both builds
    # should see the same ones.
    first = _build_elsewhere(
        one, snapshot, {"SOURCE_DATE_EPOCH": "0", "TZ": "UTC", "PYTHONHASHSEED": "1"}, "site"
    )
    second = _build_elsewhere(
        two,
        snapshot,
        {
            "SOURCE_DATE_EPOCH": "1900000000",  # a caller's own epoch is not used
            **later,  # 400 days later
            "TZ": "Asia/Kolkata",
            "LC_ALL": "C.UTF-8",
            "PYTHONHASHSEED": "2",
        },
        str(two / "out" / "site"),  # an absolute output path
    )
    for build in (first, second):
        _, err = build.communicate(timeout=600)
        assert build.returncode == 0, err
    a, b = tree(one / "site"), tree(two / "out" / "site")
    assert sorted(set(a) ^ set(b)) == []
    assert [p for p in a if a[p] != b[p]] == []
    for path, data in a.items():
        if path.endswith((".html", ".md", ".xml", ".json", ".js", ".svg", ".css")):
            for place in (tmp_path, one, two):
                assert str(place).encode() not in data, f"{place} leaked into {path}"
