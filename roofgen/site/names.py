"""Display names of a machine's resources, shared by every page: ``memory.hbm`` -> ``HBM2``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from roofgen.resources import SINGLETON_NAMES as SPECIAL_RESOURCES
from roofgen.resources import resource_names

__all__ = ["SPECIAL_RESOURCES", "display_name", "display_names_of", "resource_names"]


def display_name(names: Mapping[str, str], resource: str | None) -> str:
    """The display name of ``resource`` ("n/a" for none)."""
    if resource is None:
        return "n/a"
    return names.get(resource, resource)


def display_names_of(resources: Sequence[str], names: Mapping[str, str]) -> str:
    """``HBM2, L2``: resources by display name ("none" for none)."""
    return ", ".join(display_name(names, x) for x in resources) or "none"
