"""The case-study site: page contexts, charts, Markdown pages and the MkDocs build.

``from roofgen.site import build_site, BuildResult`` (imported lazily, so that
``roofgen.site.assets`` stays cheap to import). The site is built from a check's
result; :func:`roofgen.api.build_site` runs the check and then this build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from roofgen.site.build import BuildResult, build_site

__all__ = ["BuildResult", "build_site"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from roofgen.site import build

        return getattr(build, name)
    raise AttributeError(f"module 'roofgen.site' has no attribute {name!r}")
