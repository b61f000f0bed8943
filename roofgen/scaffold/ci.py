"""Which CI files ``roofgen init --ci`` writes, and what each holds."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roofgen.scaffold import ci_github, ci_gitlab
from roofgen.scaffold.install import CONSTRAINTS_FILE, constraints_text, python_version

__all__ = ["DEPENDABOT", "ci_files", "default_branch", "dependabot_addition"]

DEPENDABOT = ".github/dependabot.yml"


def ci_files(plan: Any) -> list[tuple[str, Callable[[], str]]]:
    """(path, text) of every CI file of ``plan.ci`` (a ``project.InitPlan``).

    Only ``plan.ci``, ``plan.pages``, ``plan.gitlab_notes``, ``plan.source`` (checked
    when it was made) and the repository's branch reach the files: the settings' folders
    never do (a settings value in a workflow would be code the pull request wrote)."""
    files: list[tuple[str, Callable[[], str]]] = []
    source, py = plan.source, python_version()
    if plan.ci == "github":
        gh = ci_github.GithubCi(source, py, default_branch(plan.root), plan.pages)
        files = [
            (".github/workflows/roofgen.yml", lambda: ci_github.main_workflow(gh)),
            (".github/workflows/roofgen-pr.yml", lambda: ci_github.pr_workflow(gh)),
            (".github/workflows/roofgen-comment.yml", lambda: ci_github.comment_workflow(gh)),
            (DEPENDABOT, ci_github.dependabot),
        ]
    elif plan.ci == "gitlab":
        gl = ci_gitlab.GitlabCi(source, py, plan.pages, plan.gitlab_notes)
        files = [(".gitlab-ci.yml", lambda: ci_gitlab.gitlab_ci(gl))]
    if files:
        files.append((CONSTRAINTS_FILE, constraints_text))
    return files


def default_branch(root: Path) -> str:
    """The branch HEAD names in ``root``'s git repository; ``main`` when unknown."""
    try:
        head = (root / ".git" / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return "main"
    branch = head.removeprefix("ref: refs/heads/")
    return branch if branch != head and re.fullmatch(r"[A-Za-z0-9._/-]+", branch) else "main"


def dependabot_addition(have: str) -> str | None:
    """What a team's Dependabot file lacks to keep the actions' pins current (None:
    it updates github-actions already)."""
    if re.search(r"package-ecosystem:\s*[\"']?github-actions\b", have):
        return None
    text = ci_github.dependabot()
    entry = text[text.index("  - package-ecosystem") :]
    return "exists; to keep the actions' pins current, add to its updates:\n" + entry.rstrip()
