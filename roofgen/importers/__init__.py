"""Importers: a tool's output into roofgen's spec files.

Each importer turns one tool's output into a spec file (a case, or a variant added
to a case, or a machine). An importer never guesses: a figure the tool did not
record is left out with a message, and every figure it writes names the metric or
field it came from (as a YAML comment).

Every importer is a row of :data:`IMPORTERS` (its verb, what it reads and what it
writes) and returns an :class:`Imported`; its command is a subcommand of
``roofgen import`` in :mod:`roofgen.commands.import_cmd`. To add one: a module
here, its row below, its subcommand, and tests with the real tool's output under
``tests/data/`` (ARCHITECTURE.md lists the files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


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


@dataclass(frozen=True)
class Importer:
    """One ``roofgen import NAME`` verb."""

    name: str
    reads: str  # the tool's output formats, for people
    writes: Literal["case", "machine"]
    module: str  # where the importer lives


IMPORTERS: tuple[Importer, ...] = (
    Importer(
        "ncu",
        "Nsight Compute CSV exports (--csv --page raw) and .ncu-rep reports",
        "case",
        "roofgen.importers.ncu",
    ),
    Importer(
        "ert",
        "the Empirical Roofline Toolkit's roofline.json",
        "machine",
        "roofgen.importers.ert",
    ),
    Importer(
        "nsys",
        "Nsight Systems traces (nsys export --type sqlite; nsys stats cuda_gpu_trace CSV)",
        "case",
        "roofgen.importers.nsys",
    ),
    Importer(
        "torch-trace",
        "torch.profiler Chrome-trace JSON (gzipped or not)",
        "case",
        "roofgen.importers.torch_trace",
    ),
)
