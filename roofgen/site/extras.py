"""The team's own files that the settings add to the site: a logo, CSS, extra pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from roofgen.config import Settings
from roofgen.site.context import NavEntry
from roofgen.site.errors import BuildError

__all__ = ["Extras", "site_extras"]


@dataclass
class Extras:
    """The team's own files named in the settings: logo, CSS, extra pages."""

    logo: str | None = None
    files: dict[str, Path] = field(default_factory=dict)  # docs path -> source
    css: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)
    nav: tuple[NavEntry, ...] = ()


def site_extras(settings: Settings) -> Extras:
    """Where the settings' ``site.logo``, ``site.extra_css`` and ``site.extra_pages`` go
    in the docs folder; :class:`BuildError` if one of them is not a file."""
    site = settings.site
    extras = Extras()
    if site.get("logo"):
        src = _source(settings, site["logo"], "logo")
        extras.logo = f"assets/images/logo{src.suffix.lower()}"
        extras.files[extras.logo] = src
    for i, value in enumerate(site.get("extra_css", []), start=1):
        src = _source(settings, value, "extra_css")
        target = f"assets/stylesheets/extra-{i}-{_safe_name(src.name)}"
        extras.files[target] = src
        extras.css.append(target)
    nav = []
    for i, value in enumerate(site.get("extra_pages", []), start=1):
        src = _source(settings, value, "extra_pages")
        target = f"pages/{i}-{_safe_name(src.stem)}.md"
        extras.files[target] = src
        extras.pages.append(target)
        nav.append(NavEntry(_page_title(src), target))
    extras.nav = tuple(nav)
    return extras


def _source(settings: Settings, value: str, what: str) -> Path:
    """The team's file ``value``, which must lie inside the project folder (its real
    path: a link out of the project is refused too), so that no setting can publish
    another file of the machine."""
    path = Path(value)
    if not path.is_absolute():
        path = settings.root / path
    if not path.resolve().is_relative_to(settings.root.resolve()):
        raise BuildError(
            f"site.{what}: {value} is outside the project folder {settings.root}; the site "
            "publishes only files of the project: copy it into the project"
        )
    if not path.is_file():
        raise BuildError(f"site.{what}: {value} is not a file")
    return path


def _safe_name(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in name)


def _page_title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ").replace("_", " ").capitalize()
