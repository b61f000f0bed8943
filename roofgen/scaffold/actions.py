"""The GitHub Actions a written workflow uses, each pinned to a commit.

A tag can be moved to other code; a commit cannot. Each pin is the commit a release
tag of the action's public repository points to, with the tag in the comment beside
it (so Dependabot, which ``.github/dependabot.yml`` asks to keep them current, and a
reader both see the version). To check one: ``git ls-remote
https://github.com/actions/checkout refs/tags/v7.0.1`` prints the same commit (for an
annotated tag, the line ending in ``^{}``).

Where they came from: the tags of the actions' public repositories
(github.com/actions/<name>), each the newest release tag there, peeled to its commit
(``git rev-parse <tag>^{commit}``). One cross-check: actions/upload-pages-artifact
v5.0.0 pins actions/upload-artifact to the same commit as ours for v7.0.0.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACTIONS", "Action", "uses"]


@dataclass(frozen=True)
class Action:
    repo: str  # owner/name on github.com
    tag: str  # the release tag the commit was taken from
    commit: str  # what that tag points to (peeled to its commit)

    def ref(self) -> str:
        """``owner/name@<commit>``: what ``uses:`` names."""
        return f"{self.repo}@{self.commit}"


ACTIONS = {
    a.repo.split("/")[1]: a
    for a in (
        Action("actions/checkout", "v7.0.1", "3d3c42e5aac5ba805825da76410c181273ba90b1"),
        Action("actions/setup-python", "v7.0.0", "5fda3b95a4ea91299a34e894583c3862153e4b97"),
        Action("actions/upload-artifact", "v7.0.0", "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f"),
        Action("actions/download-artifact", "v8.0.1", "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c"),
        Action("actions/github-script", "v8.0.0", "ed597411d8f924073f98dfc5c65a23a2325f34cd"),
        Action(
            "actions/upload-pages-artifact", "v5.0.0", "fc324d3547104276b827a68afc52ff2a11cc49c9"
        ),
        Action("actions/deploy-pages", "v5.0.0", "cd2ce8fcbc39b97be8ca5fce6e763baed58fa128"),
    )
}


def uses(name: str) -> tuple[str, str, str]:
    """The ``uses:`` entry of a step: the key, ``owner/name@<commit>``, and the tag as
    the comment at the end of its line."""
    action = ACTIONS[name]
    return ("uses", action.ref(), action.tag)
