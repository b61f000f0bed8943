"""``roofgen serve``: build, serve the output on 127.0.0.1, rebuild when sources change.

Changes are found by polling modification times (specs, templates, the settings
file and the team's extra files), which works the same on every file system; the
output folder is never watched, even inside a watched folder. A failed rebuild keeps
the previous site; the next change tries again. The port is taken before the first
build, so a busy port fails at once. Only files inside the site are served: no path
with a NUL, no link that leads out of the site.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from roofgen.config import Settings
from roofgen.datafiles import data_dir
from roofgen.site.build import BuildResult
from roofgen.site.errors import BuildError

__all__ = ["Snapshot", "serve", "snapshot", "watched_paths"]

Snapshot = tuple[tuple[str, int, int], ...]


def watched_paths(paths: Sequence[Path], settings: Settings) -> list[Path]:
    """Everything a rebuild depends on: specs, templates, settings, the site's extra files."""
    out = [*paths, data_dir("templates")]
    if settings.file is not None:
        out.append(settings.file)
    if settings.rules is not None:
        out.append(settings.rules)
    site = settings.site
    for value in [site.get("logo"), *site.get("extra_css", []), *site.get("extra_pages", [])]:
        if value:
            path = Path(value)
            out.append(path if path.is_absolute() else settings.root / path)
    return out


def _is(folder: Path, other: Path | None) -> bool:
    try:
        return other is not None and os.path.samefile(folder, other)
    except OSError:
        return False


def snapshot(paths: Iterable[Path], skip: Path | None = None) -> Snapshot:
    """(path, mtime, size) of every file under ``paths``, sorted; hidden folders and the
    folder ``skip`` (the output, which every build rewrites) left out."""
    entries: list[tuple[str, int, int]] = []
    for path in paths:
        files: list[Path] = []
        if path.is_dir():
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(
                    d for d in dirs if not d.startswith(".") and not _is(Path(root) / d, skip)
                )
                files += [Path(root) / n for n in names]
        elif path.exists():
            files.append(path)
        for file in files:
            try:
                st = file.stat()
            except OSError:
                continue
            entries.append((str(file), st.st_mtime_ns, st.st_size))
    return tuple(sorted(entries))


#: The names a request to the server may give in its ``Host`` header.
_LOCAL_HOSTS = ("127.0.0.1", "localhost")


def host_allowed(header: str | None, port: int) -> bool:
    """Whether a request's ``Host`` header names this server by a loopback name:
    ``127.0.0.1`` or ``localhost``, bare or with the server's ``port``. A missing
    header (HTTP/1.0) is refused too: a browser always sends one."""
    if header is None:
        return False
    allowed = {*_LOCAL_HOSTS, *(f"{host}:{port}" for host in _LOCAL_HOSTS)}
    return header.strip().lower() in allowed


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def send_head(self) -> Any:
        """Files inside the site only, to requests addressed to the loopback address by
        name (:func:`host_allowed`; others get 421): a NUL in the path is a bad request,
        a path that leads out of the site (through a link) is not found."""
        hosts = self.headers.get_all("Host") or []
        port = int(getattr(self.server, "server_port", 0))  # HTTPServer's, once bound
        if len(hosts) != 1 or not host_allowed(hosts[0], port):
            self.send_error(421, "Misdirected request", "This server answers only 127.0.0.1.")
            return None
        if "\x00" in self.path or "%00" in self.path:
            self.send_error(400, "Bad request")
            return None
        site = os.path.realpath(self.directory)
        target = os.path.realpath(self.translate_path(self.path))
        if target != site and not target.startswith(site + os.sep):
            self.send_error(404, "File not found")
            return None
        return super().send_head()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


def serve(
    paths: Sequence[Path],
    settings: Settings,
    output: Path,
    *,
    port: int = 8000,
    interval: float = 1.0,
    strict: bool = False,
    on_build: Callable[[BuildResult], None] | None = None,
    on_ready: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    build: Callable[..., BuildResult],
    **build_options: Any,
) -> BuildResult:
    """Build, then serve ``output`` on 127.0.0.1:``port`` until ``stop`` is set (or Ctrl-C).

    ``build(paths, settings, output, strict=..., **build_options)`` checks the specs and
    builds the site (:func:`roofgen.api.build_site`).

    ``on_build`` sees every build's result, ``on_ready`` the URL once serving.
    Returns the first build's result at once if it failed (nothing to serve).
    """
    stop = stop or threading.Event()
    report = on_build or (lambda result: None)
    watch = watched_paths(paths, settings)
    handler = functools.partial(_Handler, directory=str(output))
    try:  # take the port first: a busy port fails before a build
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise BuildError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    server.daemon_threads = True
    seen = snapshot(watch, output)
    first = build(paths, settings, output, strict=strict, **build_options)
    report(first)
    if not first.ok:
        server.server_close()
        return first
    thread = threading.Thread(target=server.serve_forever, name="roofgen-serve", daemon=True)
    thread.start()
    try:
        host, bound = server.server_address[:2]
        if on_ready is not None:
            on_ready(f"http://{host!s}:{bound}/")
        while not stop.wait(interval):
            current = snapshot(watch, output)
            if current == seen:
                continue
            seen = current
            report(build(paths, settings, output, strict=strict, **build_options))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    return first
