"""MkDocs' own build of the generated project, run quietly and reproducibly.

:func:`run_mkdocs` collects MkDocs' warnings instead of printing them, and sets
``SOURCE_DATE_EPOCH`` (from :func:`source_date_epoch`) for the build only, so that
the same specs give the same HTML.
"""

from __future__ import annotations

import calendar
import contextlib
import datetime as dt
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from roofgen.site.errors import BuildError

__all__ = ["run_mkdocs", "source_date_epoch"]


def source_date_epoch(newest_date: str) -> int:
    """SOURCE_DATE_EPOCH for MkDocs: midnight (UTC) of ``newest_date`` (the newest case
    date, ISO 8601), else 0."""
    try:
        day = dt.date.fromisoformat(newest_date)
    except ValueError:
        return 0
    return calendar.timegm(day.timetuple())


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _quiet_mkdocs() -> Iterator[_Collect]:
    """MkDocs' loggers at WARNING and above, collected instead of printed."""
    collect = _Collect()
    top = logging.getLogger("mkdocs")
    saved = {"mkdocs": (top.level, top.propagate)}
    children = [
        name
        for name in list(logging.root.manager.loggerDict)
        if name.startswith("mkdocs.")
        and isinstance(logging.root.manager.loggerDict[name], logging.Logger)
    ]
    for name in children:
        logger = logging.getLogger(name)
        saved[name] = (logger.level, logger.propagate)
        if logger.level and logger.level < logging.WARNING:
            logger.setLevel(logging.WARNING)
    top.setLevel(logging.WARNING)
    top.propagate = False
    top.addHandler(collect)
    try:
        yield collect
    finally:
        top.removeHandler(collect)
        for name, (level, propagate) in saved.items():
            logger = logging.getLogger(name)
            logger.setLevel(level)
            logger.propagate = propagate


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Set ``values`` in os.environ; afterwards restore the caller's environment."""
    before = dict(os.environ)
    os.environ.update(values)
    try:
        yield
    finally:
        for key in [k for k in os.environ if k not in before]:
            del os.environ[key]
        for key, value in before.items():
            if os.environ.get(key) != value:
                os.environ[key] = value


def run_mkdocs(config_file: Path, site_dir: Path, *, strict: bool, epoch: int) -> list[str]:
    """Build ``config_file`` into ``site_dir`` quietly; return MkDocs' warnings.

    When MkDocs stops (an abort, a configuration error), ``strict`` builds get its
    messages back, as errors; other builds get a :class:`BuildError`.
    ``SOURCE_DATE_EPOCH`` is set to ``epoch`` for the build only (sitemap dates,
    gzip headers), and Material's end-of-life banner is switched off.
    """
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    env = {"SOURCE_DATE_EPOCH": str(epoch), "NO_MKDOCS_2_WARNING": "true"}
    with _environment(env), _quiet_mkdocs() as collect:
        try:
            config = load_config(
                config_file=str(config_file), site_dir=str(site_dir), strict=strict
            )
            build(config)
        except (Abort, ConfigurationError) as exc:
            message = exc.format_message().strip()
            messages = [*collect.messages, message] if message else collect.messages or ["failed"]
            if strict:  # every message is an error: the caller stops
                return messages
            # Not a warning: MkDocs stopped, and its site folder is partial.
            raise BuildError("MkDocs failed: " + "; ".join(messages)) from None
    return collect.messages
