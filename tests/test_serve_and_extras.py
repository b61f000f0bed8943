"""`roofgen serve` serves the site only (no NUL, no link out of it), takes its port
before building, and never rebuilds because of its own output; the site's extra files
(logo, CSS, pages) come from the project folder only."""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from specdata import make_settings

from roofgen.api import build_site, serve
from roofgen.cli import main
from roofgen.site.build import BuildResult
from roofgen.site.serve import snapshot, watched_paths

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def _wait(condition: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def _get(url: str, path: str) -> int:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", path)
    status = conn.getresponse().status
    conn.close()
    return status


def test_serve_refuses_nul_and_links_out_of_the_site(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the site\n")
    stop, urls, builds = threading.Event(), [], []

    def on_build(result: BuildResult) -> None:
        builds.append(result)
        if result.ok:  # a link planted in the built site, pointing out of it
            link = tmp_path / "site" / "leak.txt"
            if not link.exists():
                link.symlink_to(secret)

    thread = threading.Thread(
        target=serve, args=([specs], make_settings(tmp_path), tmp_path / "site"),
        kwargs={"port": 0, "interval": 0.2, "on_ready": urls.append, "on_build": on_build,
                "stop": stop, "workers": 0},
        daemon=True,
    )  # fmt: skip
    thread.start()
    try:
        _wait(lambda: urls, 120)
        assert _get(urls[0], "/index.html") == 200
        assert _get(urls[0], "/leak.txt") == 404
        assert _get(urls[0], "/%00") == 400
        assert _get(urls[0], "/../secret.txt") in (400, 404)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert builds and builds[0].ok


def test_a_busy_port_fails_before_building(tmp_path: Path, monkeypatch, capsys) -> None:
    shutil.copytree(MINIMAL, tmp_path / "specs")
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    monkeypatch.chdir(tmp_path)
    try:
        status = main(["serve", "specs", "--port", str(port)])
    finally:
        busy.close()
    err = capsys.readouterr().err
    assert status == 1 and f"cannot serve on 127.0.0.1:{port}" in err
    assert not (tmp_path / "site").exists()  # nothing was built


def test_the_output_is_not_watched_even_inside_a_watched_folder(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    shutil.copytree(MINIMAL, specs)
    output = specs / "site"
    settings = make_settings(tmp_path, specs=[specs])
    before = snapshot(watched_paths([specs], settings), output)
    output.mkdir()
    (output / "index.html").write_text("a build wrote this\n")
    assert snapshot(watched_paths([specs], settings), output) == before
    (specs / "case.yaml").write_text((specs / "case.yaml").read_text() + "\n")
    assert snapshot(watched_paths([specs], settings), output) != before


@pytest.mark.parametrize(
    ("key", "value"),
    [("logo", "/etc/passwd"), ("extra_css", ["/etc/hostname"]), ("extra_pages", ["../out.md"])],
)
def test_site_files_outside_the_project_are_refused(tmp_path: Path, key: str, value: Any) -> None:
    root = tmp_path / "project"
    shutil.copytree(MINIMAL, root / "specs")
    (tmp_path / "out.md").write_text("# Outside\n")
    settings = make_settings(root, **{key: value})
    result = build_site([root / "specs"], settings, root / "site", workers=0)
    assert not result.ok
    assert any("outside the project folder" in p.message for p in result.problems)
    assert not (root / "site").exists()


def test_a_link_out_of_the_project_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(MINIMAL, root / "specs")
    (tmp_path / "theirs.css").write_text("body {}\n")
    os.symlink(tmp_path / "theirs.css", root / "mine.css")
    result = build_site([root / "specs"], make_settings(root, extra_css=["mine.css"]),
                        root / "site", workers=0)  # fmt: skip
    assert not result.ok and any("outside the project" in p.message for p in result.problems)
    (root / "own.css").write_text("body {}\n")
    result = build_site([root / "specs"], make_settings(root, extra_css=["own.css"]),
                        root / "site", workers=0)  # fmt: skip
    assert result.ok, result.problems
