"""Importers: a tool's output into roofgen's spec files.

Each importer turns one tool's output into a spec file (a case, or a variant added
to a case, or a machine). An importer never guesses: a figure the tool did not
record is left out with a message, and every figure it writes names the metric or
field it came from (as a YAML comment).

Every importer returns an :class:`Imported`; its command is a subcommand of
``roofgen import`` (:mod:`roofgen.commands.import_cmd`), whose help says what it
reads: that group is the one list of importers. To add one: a module here, its
subcommand, and tests with the real tool's output under ``tests/data/``
(ARCHITECTURE.md lists the files).
"""

from __future__ import annotations

from dataclasses import dataclass, field


class ImportFailure(Exception):
    """The input cannot be imported; ``messages`` say why (printed, exit status 1)."""

    def __init__(self, *messages: str):
        super().__init__("\n".join(messages))
        self.messages = list(messages)


@dataclass
class Imported:
    """What an importer wrote: the spec file's text, warnings for the person importing,
    and the ids of the kernels of the launches written (empty for a machine)."""

    text: str
    warnings: list[str]
    kernels: list[str] = field(default_factory=list)
