"""The team's own files that the settings add to the site: a logo, CSS, extra pages."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from roofgen.config import Settings
from roofgen.site import svgcheck
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


#: The file types each setting may name, by suffix (lower case).
_SUFFIXES: dict[str, tuple[str, ...]] = {
    "logo": (".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico"),
    "extra_css": (".css",),
    "extra_pages": (".md",),
}
#: How a raster logo's bytes start, by suffix: a file named as an image must be one.
_MAGIC: dict[str, tuple[bytes, ...]] = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
    ".ico": (b"\x00\x00\x01\x00",),
}


def _source(settings: Settings, value: str, what: str) -> Path:
    """The team's file ``value``, checked so that no setting can publish what is not
    the team's: its real path inside the project folder (a link out of it is refused
    too) and outside any ``.git`` folder, of a type the setting allows, and a file git
    tracks (outside a repository: any file of the project). A logo's content is
    checked too (:func:`_check_content`)."""
    path = Path(value)
    if not path.is_absolute():
        path = settings.root / path
    root = settings.root.resolve()
    real = path.resolve()
    if not real.is_relative_to(root):
        raise BuildError(
            f"site.{what}: {value} is outside the project folder {settings.root}; the site "
            "publishes only files of the project: copy it into the project"
        )
    if ".git" in real.relative_to(root).parts or ".git" in path.parts:
        raise BuildError(
            f"site.{what}: {value} is inside a .git folder, which holds git's own data "
            "(remote URLs, credentials): name a file of the project that git tracks"
        )
    allowed = _SUFFIXES[what]
    if real.suffix.lower() not in allowed or path.suffix.lower() not in allowed:
        raise BuildError(
            f"site.{what}: {value} is not a {_kinds(allowed)} file: name a file of one "
            "of those types"
        )
    if not real.is_file():
        raise BuildError(f"site.{what}: {value} is not a file")
    _check_tracked(real, value, what)
    _check_content(real, value, what)
    return path


def _kinds(suffixes: tuple[str, ...]) -> str:
    return ", ".join(suffixes[:-1]) + " or " + suffixes[-1] if len(suffixes) > 1 else suffixes[0]


def _check_tracked(real: Path, value: str, what: str) -> None:
    """Refuse a file git does not track where the project is a git repository: an
    ignored or new file (a local secret, a build output) is not the team's to publish."""
    folder = real.parent
    try:
        inside = _git(folder, "rev-parse", "--is-inside-work-tree")
    except (OSError, subprocess.SubprocessError):
        if any((f / ".git").exists() for f in (folder, *folder.parents)):
            raise BuildError(
                f"site.{what}: {value} lies in a git repository, and git cannot be run to "
                "check that it tracks the file: install git"
            ) from None
        return  # no git and no repository: any file of the project
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        return  # not in a repository (or inside .git, refused above)
    tracked = _git(folder, "ls-files", "--error-unmatch", "--", real.name)
    if tracked.returncode != 0:
        raise BuildError(
            f"site.{what}: {value} is not tracked by git (it is new or ignored), and the "
            f"site publishes only the team's committed files: `git add {value}` and "
            "commit it, or name a file git tracks"
        )


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True, check=False, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _check_content(real: Path, value: str, what: str) -> None:
    """A logo is an image of its type (an SVG without anything that runs or loads,
    :func:`roofgen.site.svgcheck.problem`); a page and CSS are UTF-8 text."""
    data = real.read_bytes()
    suffix = real.suffix.lower()
    if what == "logo":
        if suffix == ".svg":
            why = svgcheck.problem(data)
            if why:
                raise BuildError(
                    f"site.logo: {value} is refused: {why}; a logo that is opened runs what "
                    "it holds: keep only its drawing (or use a PNG)"
                )
        elif suffix == ".webp":
            if not (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
                raise BuildError(f"site.logo: {value} is not a WebP image: name an image file")
        elif not data.startswith(_MAGIC[suffix]):
            raise BuildError(
                f"site.logo: {value} is not a {suffix[1:].upper()} image: name an image file"
            )
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BuildError(
            f"site.{what}: {value} is not UTF-8 text (byte {exc.start}): save it as UTF-8"
        ) from None


def _safe_name(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in name)


def _page_title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ").replace("_", " ").capitalize()
