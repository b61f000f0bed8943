"""Where CI installs roofgen from, and the constraints file that pins its dependencies.

roofgen is not on the public package index, and the name is unclaimed there: a
workflow that runs ``pip install roofgen`` installs whatever a stranger publishes
under that name. So a written workflow installs roofgen from a direct reference (a
git repository pinned to a commit, or a wheel's address), and never adds an index
(``--extra-index-url`` lets the public index win a name). Without ``--install``,
init proposes the source this roofgen came from, read from the installed
distribution's ``direct_url.json`` (PEP 610).

The dependencies are pinned by a constraints file written from the versions
installed now: an unpinned vl-convert changes the bytes of every chart.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "CONSTRAINTS_FILE",
    "InstallError",
    "InstallSource",
    "constraints_text",
    "from_installed",
    "from_spec",
    "pinned_dependencies",
    "python_version",
    "unpinned_dependencies",
]

DIST = "roofgen"
CONSTRAINTS_FILE = "roofgen-constraints.txt"
#: The extras a written workflow installs (the site job's).
CI_EXTRAS = ("site",)
#: Forges whose repositories may be public; any other host is taken for a private one.
PUBLIC_HOSTS = ("github.com", "gitlab.com", "codeberg.org", "bitbucket.org")
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
#: What a URL in a written workflow may hold: no space, quote, backslash, `$`, backtick
#: or brace, so it stays one word in a shell and never reads as a workflow expression.
_SAFE_URL = re.compile(r"^[A-Za-z0-9._~:/?#\[\]@!&()*+,;=%-]+$")
_PEP508 = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*@\s*(\S+)\s*$")
_BARE = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?\s*([<>=!~].*)?$")


class InstallError(ValueError):
    """A source CI must not install roofgen from, with what to write instead."""


@dataclass(frozen=True)
class InstallSource:
    """roofgen's address for pip: a direct reference, never a bare name."""

    url: str  # e.g. git+https://github.com/org/roofgen@<commit>
    origin: str  # where the address came from, in words
    notes: tuple[str, ...] = field(default=())  # what the person should know
    private: bool = False  # installing needs credentials: fork PRs cannot

    def requirement(self, extras: tuple[str, ...] = ()) -> str:
        """The PEP 508 requirement, e.g. ``roofgen[site] @ git+https://...@<commit>``."""
        names = f"[{','.join(extras)}]" if extras else ""
        return f"{DIST}{names} @ {self.url}"

    def pip_line(self, extras: tuple[str, ...] = (), constraints: str = CONSTRAINTS_FILE) -> str:
        """The shell line CI runs (one word per argument, single-quoted)."""
        return f"python -m pip install -c {constraints} '{self.requirement(extras)}'"


# --------------------------------------------------------------------------- sources


def from_spec(spec: str) -> InstallSource:
    """The source a person names with ``--install``: a PEP 508 direct reference
    (``roofgen @ URL``) or the URL alone (``git+https://...@COMMIT``, a wheel's address)."""
    match = _PEP508.match(spec)
    if match:
        name, _, url = match.groups()
        if _normal(name) != DIST:
            raise InstallError(f"{spec!r} installs {name!r}, not {DIST}")
    elif _BARE.match(spec):
        raise InstallError(
            f"{spec!r} is a bare package name: {DIST} is not on the public package index "
            "and the name is unclaimed there, so anyone can publish a package under it. "
            "Name the source instead, e.g. --install "
            f"'git+https://git.example.com/tools/{DIST}@COMMIT' or the address of a wheel"
        )
    else:
        url = spec.strip()
    return _checked(url, "--install")


def from_installed() -> InstallSource:
    """The source of the roofgen running now, from its ``direct_url.json`` (PEP 610)."""
    try:
        dist = metadata.distribution(DIST)
    except metadata.PackageNotFoundError as e:  # running from a source tree
        raise InstallError("this roofgen runs from a source tree, not an installation") from e
    text = dist.read_text("direct_url.json")
    if text is None:
        raise InstallError(
            "this roofgen was installed from a package index, and the public one has no "
            f"{DIST} of ours"
        )
    return from_direct_url(json.loads(text))


def from_direct_url(data: dict[str, Any]) -> InstallSource:
    """The source a PEP 610 record names: a VCS URL pinned to its commit, or an archive."""
    url = str(data.get("url", ""))
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict):
        commit = str(vcs.get("commit_id", ""))
        scheme = str(vcs.get("vcs", "git"))
        return _checked(f"{scheme}+{url}@{commit}", "the installed roofgen (direct_url.json)")
    if isinstance(data.get("archive_info"), dict):
        if url.startswith("file:"):
            raise InstallError(f"this roofgen was installed from a local file ({url})")
        hashes = data["archive_info"].get("hashes") or {}
        digest = hashes.get("sha256")
        pinned = f"{url.split('#')[0]}#sha256={digest}" if digest else url
        return _checked(pinned, "the installed roofgen (direct_url.json)")
    raise InstallError(f"this roofgen was installed from a local folder ({url})")


def _checked(url: str, origin: str) -> InstallSource:
    """``url`` with its user information removed, checked to be writable into CI."""
    notes: list[str] = []
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    vcs = scheme.startswith(("git+", "hg+", "svn+", "bzr+"))
    if not scheme or (not vcs and scheme not in ("https", "http", "file")):
        raise InstallError(
            f"{url!r} is not an address pip installs from; write a git URL pinned to a "
            f"commit (git+https://HOST/ORG/{DIST}@COMMIT) or a wheel's https address"
        )
    ssh = scheme.endswith("+ssh")
    private = ssh or parts.password is not None or _private_host(parts)
    secret = parts.password is not None or (parts.username is not None and not ssh)
    if secret:
        private = True
        host = parts.hostname or ""
        keep = f"{parts.username}@" if ssh and parts.username else ""
        netloc = keep + host + (f":{parts.port}" if parts.port else "")
        url = urlunsplit(parts._replace(netloc=netloc))
        notes.append(
            "removed the credentials from the URL: a workflow file is no place for a secret"
        )
    if not _SAFE_URL.match(url):
        raise InstallError(f"{url!r} has characters a workflow must not carry (space, quote, "
                           "backslash, $, backtick or brace)")  # fmt: skip
    if vcs:
        path, _, rev = parts.path.rpartition("@")
        if not path or not _SHA.match(rev):
            notes.append(
                "the URL is not pinned to a commit (…@<40-hex commit>): a branch or tag can "
                "move, and with it what CI installs"
            )
    elif scheme != "file" and "#sha256=" not in url:
        notes.append("the address has no #sha256= digest: pip cannot tell a swapped file")
    if scheme == "file" or scheme.endswith("+file"):
        notes.append("a local address: a CI runner cannot reach it; use your team's "
                     "repository URL there")  # fmt: skip
    if private:
        notes.append(
            "the address looks private (ssh, a credential, or a host other than the public "
            "forges): CI needs a read credential to install roofgen from it, and pull "
            "requests from forks get no secrets, so their checks cannot install roofgen "
            "(put a wheel where the runners can read it without a secret)"
        )
    return InstallSource(url=url, origin=origin, notes=tuple(notes), private=private)


def _private_host(parts: Any) -> bool:
    host = (parts.hostname or "").lower()
    if not host or parts.scheme.lower().endswith("file"):
        return False
    return not any(host == h or host.endswith("." + h) for h in PUBLIC_HOSTS)


# --------------------------------------------------------------------------- constraints


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")
_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


def pinned_dependencies(extras: tuple[str, ...] = CI_EXTRAS) -> list[tuple[str, str]]:
    """(name, installed version) of every distribution roofgen with ``extras`` needs,
    transitively, as installed now (roofgen itself excluded), sorted by name.

    A requirement under an ``extra ==`` marker counts only when that extra is asked
    for; one under any other marker counts when it is installed (a constraint on a
    package nothing installs is harmless)."""
    return _walk(extras)[0]


def unpinned_dependencies(extras: tuple[str, ...] = CI_EXTRAS) -> list[str]:
    """roofgen's own requirements (with ``extras``) that are not installed here, so the
    constraints file cannot pin them."""
    return _walk(extras)[1]


def _walk(extras: tuple[str, ...]) -> tuple[list[tuple[str, str]], list[str]]:
    seen: dict[str, str] = {}
    missing: set[str] = set()
    visited: set[tuple[str, frozenset[str]]] = set()
    todo: list[tuple[str, frozenset[str], bool]] = [(DIST, frozenset(extras), False)]
    while todo:
        name, wanted, direct = todo.pop()
        if (_normal(name), wanted) in visited:
            continue
        visited.add((_normal(name), wanted))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            if direct:
                missing.add(name)
            continue
        key = _normal(dist.metadata["Name"])
        if key != DIST:
            seen[dist.metadata["Name"]] = dist.version
        for line in dist.requires or []:
            requirement, _, marker = line.partition(";")
            match = _REQ.match(requirement)
            if match is None:
                continue
            needed = set(_EXTRA.findall(marker))
            if needed and not needed & wanted:
                continue
            child = match.group(1)
            sub = frozenset(e.strip() for e in (match.group(2) or "").split(",") if e.strip())
            todo.append((child, sub, key == DIST))
    pins = sorted(seen.items(), key=lambda item: _normal(item[0]))
    return pins, sorted(missing, key=_normal)


def constraints_text(extras: tuple[str, ...] = CI_EXTRAS) -> str:
    """The constraints file: roofgen's dependencies at the versions installed now."""
    from roofgen.version import __version__

    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    lines = [
        f"# Written by `roofgen init` from the packages installed with roofgen {__version__}",
        f"# [{','.join(extras)}] (Python {python}). CI installs roofgen with `-c` on this file",
        "# so that a new release of a dependency never changes the site's bytes (vl-convert",
        "# draws the charts). Upgrade on purpose: upgrade in a virtual environment, then",
        "# rewrite this file with `roofgen init --force` there, and review the diff.",
    ]
    pins, missing = _walk(extras)
    if missing:
        lines.append(f"# Not installed here, so not pinned: {', '.join(missing)}.")
    lines += [f"{name}=={version}" for name, version in pins]
    return "\n".join(lines) + "\n"


def python_version() -> str:
    """The Python CI runs: the one the constraints were written on."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"
