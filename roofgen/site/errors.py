"""The error a site build step raises when it cannot go on."""

from __future__ import annotations


class BuildError(Exception):
    """A build step failed; the message says why."""
