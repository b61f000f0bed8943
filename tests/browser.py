"""Helpers for browser tests: find and launch Chromium, serve folders, watch pages.

Browser tests use Playwright's sync API with a Chromium found on this machine
(Playwright's own browser download is not used):

* ``ROOFGEN_CHROMIUM`` (a path or a command name), else ``chromium``, else
  ``google-chrome`` on ``PATH``;
* without one, browser tests are skipped, except when ``CI=true``, where they fail.

Pages are watched: every request that leaves 127.0.0.1 (or ``file:``, ``data:``,
``blob:``) is aborted and recorded, console errors and uncaught page errors are
recorded, and :func:`wait_for_charts` waits for the signal the chart boot script
sets on ``<html data-roofgen-charts="ready">``.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Route

#: Chromium switches for a quiet, headless, sandbox-free run in containers and CI.
#: Playwright adds its own temporary ``--user-data-dir`` (and refuses one here),
#: ``--remote-debugging-pipe``, and already passes ``--headless``/``--no-sandbox``.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

CHROMIUM_CANDIDATES = ("chromium", "google-chrome")
ENV_CHROMIUM = "ROOFGEN_CHROMIUM"

#: Upper bound for one page to draw all of its charts.
CHARTS_TIMEOUT_MS = 20_000

LOCAL_HOSTS = frozenset({"127.0.0.1"})
LOCAL_SCHEMES = frozenset({"file", "data", "blob", "about"})


def in_ci() -> bool:
    """True when running in CI, where a missing browser is an error."""
    return os.environ.get("CI", "").strip().lower() == "true"


def find_chromium() -> str | None:
    """Path of the Chromium to drive, or None.

    ``$ROOFGEN_CHROMIUM`` wins when set (a path, or a name looked up on PATH);
    if it is set but unusable, there is no fallback, so a typo is noticed.
    """
    wanted = os.environ.get(ENV_CHROMIUM, "").strip()
    if wanted:
        found = shutil.which(wanted)
        return str(Path(found).resolve()) if found else None
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def missing_chromium_reason() -> str:
    wanted = os.environ.get(ENV_CHROMIUM, "").strip()
    if wanted:
        return f"BROWSER TESTS NOT RUN: ${ENV_CHROMIUM}={wanted!r} is not an executable"
    return (
        "BROWSER TESTS NOT RUN: no Chromium found (set $ROOFGEN_CHROMIUM, or put "
        "'chromium' or 'google-chrome' on PATH; Debian: apt-get install chromium)"
    )


def playwright_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("playwright")
    except metadata.PackageNotFoundError:
        return None


def launch_chromium(playwright: Any, executable: str) -> Browser:
    """Launch ``executable`` headless through a started ``sync_playwright()``."""
    browser: Browser = playwright.chromium.launch(
        executable_path=executable, args=CHROMIUM_ARGS, headless=True
    )
    return browser


# --------------------------------------------------------------------------- serving


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass


@contextmanager
def serve_directory(root: Path) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (free port) from a thread; yield the base URL.

    The URL ends with ``/``.
    """
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="roofgen-test-http", daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# --------------------------------------------------------------------------- pages


def is_local_url(url: str) -> bool:
    """True for 127.0.0.1 and for file:/data:/blob:/about: URLs."""
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return True
    return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname in LOCAL_HOSTS


@dataclass
class WatchedPage:
    """A page in its own browser context, plus what went wrong on it."""

    context: BrowserContext
    page: Page
    blocked_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    console_warnings: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return (
            [f"off-host request: {url}" for url in self.blocked_requests]
            + [f"console error: {text}" for text in self.console_errors]
            + [f"page error: {text}" for text in self.page_errors]
        )

    def assert_clean(self) -> None:
        """Fail when anything was blocked or logged as an error."""
        problems = self.problems()
        assert not problems, "page problems:\n  " + "\n  ".join(problems)

    def close(self) -> None:
        self.context.close()


def open_watched_page(browser: Browser) -> WatchedPage:
    """New context and page that block and record non-local requests and errors.

    Each request whose URL is not local (see :func:`is_local_url`) is aborted and
    recorded once; console errors, console warnings (kept apart: they are not
    problems) and uncaught exceptions are recorded too.
    """
    context = browser.new_context()
    watched = WatchedPage(context=context, page=context.new_page())
    blocked = watched.blocked_requests

    def record(url: str) -> None:
        if url not in blocked:
            blocked.append(url)

    def handle(route: Route) -> None:
        url = route.request.url
        if is_local_url(url):
            route.continue_()
        else:
            record(url)
            route.abort("blockedbyclient")

    def on_console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            where = (message.location or {}).get("url", "")
            text = f"{message.text} ({where})" if where else message.text
            target = watched.console_errors if message.type == "error" else watched.console_warnings
            target.append(text)

    context.route("**/*", handle)
    # Requests the router does not see (e.g. from workers) still show up here.
    context.on(
        "request", lambda request: None if is_local_url(request.url) else record(request.url)
    )
    watched.page.on("console", on_console)
    watched.page.on("pageerror", lambda error: watched.page_errors.append(str(error)))
    watched.page.set_default_timeout(CHARTS_TIMEOUT_MS)
    return watched


def wait_for_charts(watched: WatchedPage, timeout_ms: int = CHARTS_TIMEOUT_MS) -> None:
    """Wait until the page's charts are drawn; fail fast when the page reports an error."""
    page = watched.page
    try:
        page.wait_for_function(
            "() => ['ready', 'error'].includes(document.documentElement.dataset.roofgenCharts)",
            timeout=timeout_ms,
        )
    except Exception as exc:  # playwright's TimeoutError, kept generic for older versions
        state = page.evaluate("() => document.documentElement.dataset.roofgenCharts ?? null")
        raise AssertionError(
            f"charts not ready after {timeout_ms} ms (state {state!r}) on {page.url}\n  "
            + "\n  ".join(watched.problems())
        ) from exc
    state, message = page.evaluate(
        "() => [document.documentElement.dataset.roofgenCharts,"
        " document.documentElement.dataset.roofgenChartsError ?? '']"
    )
    if state != "ready":
        raise AssertionError(
            f"charts failed on {page.url}: {message}\n  " + "\n  ".join(watched.problems())
        )
