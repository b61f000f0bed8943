"""Importers: Nsight Compute profiles (CSV, .ncu-rep) to cases, ERT results to machines.

Each importer turns a tool's output into roofgen's spec files. An importer never
guesses: a figure the tool did not record is left out with a message, and every
figure it writes names the metric or field it came from (as a YAML comment).
"""

from __future__ import annotations


class ImportFailure(Exception):
    """The input cannot be imported; ``messages`` say why (printed, exit status 1)."""

    def __init__(self, *messages: str):
        super().__init__("\n".join(messages))
        self.messages = list(messages)
