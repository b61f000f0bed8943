"""roofgen's machine library as model objects, and finding a machine by id.

The library's files (``roofgen/machines/<id>/v<N>.yaml``, pinned by version) are
read as spec documents by :mod:`roofgen.spec.library`; this package turns them
into :class:`~roofgen.model.Machine` objects (:func:`get`) and finds a machine the
way cases do (:mod:`roofgen.machines.lookup`).
"""

from __future__ import annotations

from roofgen.model import Machine
from roofgen.problems import SpecError
from roofgen.spec import build, schema
from roofgen.spec.library import (
    LibraryMachine,
    content_hash,
    document,
    entry,
    ids,
    index,
    latest,
    pin_text,
    versions,
)

__all__ = [
    "LibraryMachine",
    "content_hash",
    "document",
    "entry",
    "get",
    "ids",
    "index",
    "latest",
    "pin_text",
    "versions",
]


def get(machine_id: str, version: int | None = None) -> Machine:
    """A library machine as a model object (``version``: the latest when None).

    Raises KeyError when the library has no such machine or version, and
    SpecError when its file does not validate.
    """
    found = entry(machine_id, version)
    doc = document(machine_id, found.version) if found is not None else None
    if found is None or doc is None:
        known = ", ".join(ids())
        raise KeyError(f"no machine {machine_id!r} version {version} (library: {known})")
    problems = schema.validate(doc, "machine")
    if problems:
        raise SpecError(problems)
    return build.machine(doc.data, doc.file)
