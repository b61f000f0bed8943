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


def _raw(url: str, request: str) -> tuple[int, bytes]:
    """The status and body of a request sent as written (its Host header forged or
    left out at will), on a fresh connection."""
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall((request + "Connection: close\r\n\r\n").encode("latin-1"))
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


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
        assert _raw(urls[0], "GET /index.html HTTP/1.1\r\nHost: rebound.example\r\n")[0] == 421
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


@pytest.fixture
def loopback_site(tmp_path: Path) -> Any:
    """roofgen's request handler serving a folder on 127.0.0.1, on a free port."""
    import functools
    import http.server

    from roofgen.site import serve as serve_module

    (tmp_path / "index.html").write_text("<p>the site</p>\n")
    handler = functools.partial(serve_module._Handler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.0.0.1:{port}", "localhost", "LOCALHOST:{port}"],
)
def test_serve_answers_requests_addressed_to_the_loopback_name(loopback_site, host) -> None:
    url, port = loopback_site
    status, body = _raw(url, f"GET /index.html HTTP/1.1\r\nHost: {host.format(port=port)}\r\n")
    assert (status, body) == (200, b"<p>the site</p>\n")


@pytest.mark.parametrize(
    "headers",
    [
        "Host: rebound.example:{port}\r\n",  # a DNS-rebinding page sends its own name
        "Host: rebound.example\r\n",
        "Host: 127.0.0.1.rebound.example:{port}\r\n",
        "Host: localhost.rebound.example\r\n",
        "Host: 127.0.0.1:{other}\r\n",  # another port: not this server's name
        "Host: [::1]:{port}\r\n",  # it listens on 127.0.0.1 only
        "Host: 127.0.0.1:{port}\r\nHost: rebound.example\r\n",
        "",  # no Host at all
    ],
)
def test_serve_refuses_any_other_host_header(loopback_site, headers: str) -> None:
    url, port = loopback_site
    given = headers.format(port=port, other=port + 1)
    for method in ("GET", "HEAD"):
        status, body = _raw(url, f"{method} /index.html HTTP/1.1\r\n{given}")
        assert status == 421
        assert b"the site" not in body and len(body) < 1000


# --------------------------------------------------------------------------- the team's files

CLEAN_SVG = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>\n'
PNG = b"\x89PNG\r\n\x1a\n" + bytes(32)


def _git(root: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project in a git repository with a credential in its remote URL, a committed
    logo, style sheet and page, an ignored file and a new one."""
    root = tmp_path / "project"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "remote", "add", "origin", "https://ci:s3cr3t-token@git.example/team/perf.git")
    (root / ".gitignore").write_text("local.md\nlocal.css\n")
    (root / "logo.svg").write_text(CLEAN_SVG)
    (root / "logo.png").write_bytes(PNG)
    (root / "team.css").write_text("body { color: #123; }\n")
    (root / "about.md").write_text("# About the team\n")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "files")
    (root / "local.md").write_text("# Notes\n\npassword: hunter2\n")
    (root / "local.css").write_text("body {}\n")
    (root / "new.md").write_text("# Not committed yet\n")
    return root


def _refusal(root: Path, **site: Any) -> str:
    from roofgen.site.errors import BuildError
    from roofgen.site.extras import site_extras

    with pytest.raises(BuildError) as caught:
        site_extras(make_settings(root, **site))
    return str(caught.value)


def test_committed_team_files_are_published(repo: Path) -> None:
    from roofgen.site.extras import site_extras

    for logo in ("logo.svg", "logo.png"):
        extras = site_extras(
            make_settings(repo, logo=logo, extra_css=["team.css"], extra_pages=["about.md"])
        )
        assert extras.files == {
            f"assets/images/{logo}": repo / logo,
            "assets/stylesheets/extra-1-team.css": repo / "team.css",
            "pages/1-about.md": repo / "about.md",
        }


@pytest.mark.parametrize(
    ("key", "value"),
    [("logo", ".git/config"), ("extra_css", [".git/config"]), ("extra_pages", [".git/config"]),
     ("extra_pages", ["sub/../.git/config"]), ("logo", ".git/HEAD")],
)  # fmt: skip
def test_files_of_the_git_folder_are_refused(repo: Path, key: str, value: Any) -> None:
    message = _refusal(repo, **{key: value})
    shown = value if isinstance(value, str) else value[0]
    assert message.startswith(f"site.{key}: {shown} is inside a .git folder")
    assert "name a file of the project that git tracks" in message


def test_a_link_into_the_git_folder_is_refused(repo: Path) -> None:
    (repo / "config.md").symlink_to(repo / ".git" / "config")
    _git(repo, "add", "config.md")  # tracked: the link, not what it leads to
    assert "is inside a .git folder" in _refusal(repo, extra_pages=["config.md"])


@pytest.mark.parametrize(
    ("key", "value"),
    [("extra_pages", ["local.md"]), ("extra_css", ["local.css"]), ("extra_pages", ["new.md"])],
)
def test_ignored_and_new_files_are_refused(repo: Path, key: str, value: list[str]) -> None:
    message = _refusal(repo, **{key: value})
    assert message == (
        f"site.{key}: {value[0]} is not tracked by git (it is new or ignored), and the site "
        f"publishes only the team's committed files: `git add {value[0]}` and commit it, or "
        "name a file git tracks"
    )


@pytest.mark.parametrize(
    ("key", "value", "kinds"),
    [
        ("logo", "about.md", ".svg, .png, .jpg, .jpeg, .gif, .webp or .ico"),
        ("extra_css", ["about.md"], ".css"),
        ("extra_pages", ["team.css"], ".md"),
        ("extra_pages", [".gitignore"], ".md"),
    ],
)
def test_files_of_another_type_are_refused(repo: Path, key: str, value: Any, kinds: str) -> None:
    shown = value if isinstance(value, str) else value[0]
    assert _refusal(repo, **{key: value}) == (
        f"site.{key}: {shown} is not a {kinds} file: name a file of one of those types"
    )


def test_a_logo_that_is_not_the_image_its_name_says_is_refused(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_text("[remote]\nurl = https://token@example\n")
    assert _refusal(tmp_path, logo="logo.png") == (
        "site.logo: logo.png is not a PNG image: name an image file"
    )


@pytest.mark.parametrize(
    ("svg", "why"),
    [
        ("<script>alert(1)</script>", "it holds a <script> element"),
        ('<foreignObject><p xmlns="http://www.w3.org/1999/xhtml">x</p></foreignObject>',
         "it holds a <foreignObject> element"),
        ('<rect onclick="alert(1)"/>', "<rect onclick=...> is an event handler"),
        ('<a href="javascript:alert(1)"><rect/></a>', "<a href=...> holds a javascript: address"),
        ('<a href=" jav&#x09;ascript:alert(1)"><rect/></a>',
         "<a href=...> holds a javascript: address"),
        ('<image xmlns:x="http://www.w3.org/1999/xlink" x:href="https://t.example/p.png"/>',
         "<image href=...> refers to another file or address (only #fragments and inline "
         "images)"),
        ('<set attributeName="href" to="#a"/>', "<set attributeName=...> animates a reference"),
        ("<style>@import 'https://t.example/x.css';</style>",
         "its <style> imports a style sheet"),
        ('<rect style="fill: url(https://t.example/f)"/>',
         "<rect style=...> loads an address with url()"),
    ],
)  # fmt: skip
def test_an_svg_logo_that_could_run_or_load_anything_is_refused(
    tmp_path: Path, svg: str, why: str
) -> None:
    (tmp_path / "logo.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{svg}</svg>')
    assert _refusal(tmp_path, logo="logo.svg") == (
        f"site.logo: logo.svg is refused: {why}; a logo that is opened runs what it holds: "
        "keep only its drawing (or use a PNG)"
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>',
         "it declares a DOCTYPE or an entity"),
        ('<?xml-stylesheet href="https://t.example/x.css"?>'
         '<svg xmlns="http://www.w3.org/2000/svg"/>',
         "it holds a processing instruction (such as xml-stylesheet)"),
        ("<html><script>alert(1)</script></html>",
         "its root element is 'html', not an SVG <svg> element"),
        ('<svg xmlns="http://www.w3.org/2000/svg">', "it is not well-formed XML"),
    ],
)  # fmt: skip
def test_an_svg_logo_is_parsed_safely(tmp_path: Path, text: str, why: str) -> None:
    (tmp_path / "logo.svg").write_text(text)
    assert _refusal(tmp_path, logo="logo.svg").startswith(f"site.logo: logo.svg is refused: {why}")


def test_a_plain_svg_drawing_is_published(tmp_path: Path) -> None:
    from roofgen.site.extras import site_extras

    (tmp_path / "logo.svg").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<defs><linearGradient id="g"><stop offset="0"/></linearGradient></defs>'
        '<style>.a { fill: url(#g); }</style><rect class="a" width="2" height="1"/>'
        '<use xlink:href="#g"/><image href="data:image/png;base64,iVBORw0KGgo="/></svg>\n'
    )
    assert site_extras(make_settings(tmp_path, logo="logo.svg")).logo == "assets/images/logo.svg"


def test_build_refuses_the_git_config_with_exit_1(repo: Path, monkeypatch, capsys) -> None:
    shutil.copytree(MINIMAL, repo / "specs")
    (repo / "roofgen.toml").write_text('[site]\nextra_pages = [".git/config"]\n')
    monkeypatch.chdir(repo)
    monkeypatch.setenv("ROOFGEN_NO_CACHE", "1")
    assert main(["build", "specs", "-o", "out"]) == 1
    err = capsys.readouterr().err
    assert "site.extra_pages: .git/config is inside a .git folder" in err
    assert not (repo / "out").exists()
