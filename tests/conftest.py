"""Shared test fixtures.

The quick loop is ``pytest -m "not slow"``: it leaves out every test that takes more
than a few seconds (site, wheel and library builds, mypy, the CI recipes) and the
browser tests that come with a site build; run the whole suite before a merge.

Spec fixtures (helpers in ``tests/specdata.py``, for module-level helpers of a test):

``a100``
    a fresh dict of an NVIDIA A100 40GB SXM4 from its datasheet, for ``build.machine``.
``gpu_machine_yaml``
    the text of a small machine file, id ``gpu``, with round figures.
``make_settings``
    ``make_settings(root, name=..., specs=..., **site)``: the settings of a build.
``user_cache``
    (used by every test) the session's temporary user cache folder, ``XDG_CACHE_HOME``.

Browser fixtures (helpers in ``tests/browser.py``):

``chromium_browser``
    one headless Chromium per session, driven by Playwright; skipped with a
    loud reason when no Chromium is found, a failure when ``CI=true``.
``watched_page``
    a fresh context and page that abort and record off-host requests and record
    console and page errors (see ``browser.WatchedPage``).
``serve_dir``
    ``serve_dir(path) -> "http://127.0.0.1:PORT/"``: serves a folder for the test.

Tests that use a browser are marked ``browser`` (added automatically when a test
uses ``chromium_browser`` or ``watched_page``), so ``-m "not browser"`` skips them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import (
    find_chromium,
    in_ci,
    launch_chromium,
    missing_chromium_reason,
    open_watched_page,
    playwright_version,
    serve_directory,
)
from hypothesis import settings as hypothesis_settings
from specdata import GPU_MACHINE_YAML, a100_machine
from specdata import make_settings as settings_for

if TYPE_CHECKING:
    from browser import WatchedPage
    from playwright.sync_api import Browser

# Hypothesis profiles: "ci" (chosen by CI=true) runs a bounded, derandomised set of
# examples with no deadline, so CI runs repeat exactly; "fuzz" runs many more examples
# (HYPOTHESIS_PROFILE=fuzz pytest tests/test_fuzz_loader.py).
hypothesis_settings.register_profile("ci", max_examples=50, deadline=None, derandomize=True)
hypothesis_settings.register_profile("fuzz", max_examples=5_000, deadline=None)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if in_ci() else "default")
)

_BROWSER_FIXTURES = frozenset({"chromium_executable", "chromium_browser", "watched_page"})
_BROWSER_RUN: dict[str, str] = {}
_BROWSER_MISSING: list[str] = []


def pytest_report_header(config: pytest.Config) -> list[str]:
    chromium = find_chromium() or "NOT FOUND"
    return [
        f"browser tests: chromium {chromium}, playwright {playwright_version() or 'NOT INSTALLED'}"
        f"{', CI=true (browser required)' if in_ci() else ''}"
    ]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", ())
        if _BROWSER_FIXTURES.intersection(names) and item.get_closest_marker("browser") is None:
            item.add_marker(pytest.mark.browser)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _BROWSER_RUN:
        terminalreporter.write_line(
            "browser tests ran in {browser} {browser_version} ({executable}) "
            "via playwright {playwright}".format(**_BROWSER_RUN)
        )
    for reason in dict.fromkeys(_BROWSER_MISSING):
        terminalreporter.write_line(reason, red=True, bold=True)


def _no_browser(reason: str) -> None:
    if in_ci():
        pytest.fail(f"{reason} [CI=true: browser tests are required]", pytrace=False)
    _BROWSER_MISSING.append(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The user's cache folder of every test (``XDG_CACHE_HOME``, subprocesses included):
    one temporary folder for the session, so that no test reads or writes ~/.cache
    (a test of the caches sets its own)."""
    folder = tmp_path_factory.mktemp("user-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder))
        # A CI runner's own settings must not reach the tests: its job summary, its
        # workspace, forced colour (tests that want them set their own).
        for name in ("GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "CI_PROJECT_DIR", "FORCE_COLOR"):
            patch.delenv(name, raising=False)
        yield folder


@pytest.fixture(scope="session", autouse=True)
def no_progress_ticks() -> Iterator[None]:
    """Off a terminal, a step that outlasts ``PROGRESS_EVERY_S`` (10 s) writes a progress
    line to stderr; on a loaded machine an ordinary check can, and tests that compare a
    command's stderr exactly would see it. In-process commands tick once an hour here;
    the ticker itself is tested with intervals of its own (tests/test_ci_output.py)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("roofgen.commands.common.PROGRESS_EVERY_S", 3600.0)
        yield


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """Path of the Chromium for browser tests (skip, or fail in CI, when missing)."""
    executable = find_chromium()
    if executable is None:
        _no_browser(missing_chromium_reason())
        raise AssertionError("unreachable")  # pragma: no cover
    return executable


@pytest.fixture(scope="session")
def chromium_browser(chromium_executable: str) -> Iterator[Browser]:
    """One headless Chromium for the whole session."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _no_browser(f"BROWSER TESTS NOT RUN: playwright is not installed ({exc})")
        raise AssertionError("unreachable") from exc  # pragma: no cover
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright, chromium_executable)
        _BROWSER_RUN.update(
            browser=browser.browser_type.name,
            browser_version=browser.version,
            executable=chromium_executable,
            playwright=playwright_version() or "?",
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def watched_page(chromium_browser: Browser) -> Iterator[WatchedPage]:
    """A fresh page whose off-host requests, console errors and page errors are recorded."""
    watched = open_watched_page(chromium_browser)
    try:
        yield watched
    finally:
        watched.close()


@pytest.fixture
def serve_dir() -> Iterator[Callable[[Path], str]]:
    """``serve_dir(folder)`` serves ``folder`` on 127.0.0.1 and returns its base URL."""
    with ExitStack() as stack:

        def serve(root: Path) -> str:
            return stack.enter_context(serve_directory(Path(root)))

        yield serve


@pytest.fixture
def a100() -> dict[str, Any]:
    """An NVIDIA A100 40GB SXM4 as a machine dict (a fresh copy: a test may change it)."""
    return a100_machine()


@pytest.fixture(scope="session")
def gpu_machine_yaml() -> str:
    """A machine file, id ``gpu``: vector unit (FP32 10 TFLOP/s), tensor cores (BF16 and
    FP16 100 TFLOP/s), SFU (1 TOP/s), HBM 1 TB/s; SM clock 1000 MHz."""
    return GPU_MACHINE_YAML


@pytest.fixture(scope="session")
def make_settings() -> Callable[..., Any]:
    """``make_settings(root, name="Test site", specs=None, **site)``: a build's Settings."""
    return settings_for
