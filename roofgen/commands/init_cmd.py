"""`roofgen init [DIR]`: set a repository up to keep performance cases with roofgen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from roofgen.commands.common import (
    EXIT_INVALID,
    EXIT_USAGE,
    Failure,
    common,
    say,
    shown,
)


@click.command("init")
@click.argument("folder", metavar="[DIR]", default=".", type=click.Path(file_okay=False))
@click.option("--machine", "machine_id", default="a100-40gb-sxm", show_default=True,
              metavar="ID", help="The library machine the example case runs on "
              "(`roofgen machines`).")  # fmt: skip
@click.option("--ci", type=click.Choice(["github", "gitlab", "none"]), default="github",
              show_default=True, help="The CI set-up to write: GitHub workflows (check, "
              "fork-safe pull-request comment, site), a .gitlab-ci.yml, or none.")  # fmt: skip
@click.option("--install", "install_spec", metavar="SPEC",
              help="Where CI installs roofgen from: a git URL pinned to a commit "
              "('git+https://HOST/ORG/roofgen@COMMIT'), 'roofgen @ URL', or a wheel's "
              "address; never a bare name (default: where this roofgen came from).")  # fmt: skip
@click.option("--pages", is_flag=True, help="Also publish the site to GitHub or GitLab "
              "Pages (a private repository's Pages can be public: check first).")  # fmt: skip
@click.option("--gitlab-notes", is_flag=True, help="With --ci gitlab: post the diff as a "
              "merge-request note with a project token (the file states the risk).")  # fmt: skip
@click.option("--force", is_flag=True, help="Overwrite files that exist.")
@common
def init_cmd(folder: str, machine_id: str, ci: str, install_spec: str | None, pages: bool,
             gitlab_notes: bool, force: bool, strict: bool, quiet: bool,
             verbose: bool) -> None:  # fmt: skip
    """Write roofgen.toml, specs/ with an example case, a pre-commit hook, the CI
    set-up (--ci) with a constraints file, the schemas for editors (.roofgen/,
    .vscode/settings.json), .gitignore entries and .gitattributes lines (spec files
    stay LF) into DIR (default: here).

    Existing files are never overwritten without --force; .gitignore, .gitattributes,
    .vscode/settings.json and .pre-commit-config.yaml get roofgen's entries added.
    """
    from roofgen.machines.lookup import find_machine
    from roofgen.scaffold.project import SKIPPED, InitPlan, init_project

    if (gitlab_notes and ci != "gitlab") or (pages and ci == "none"):
        say(f"{'--gitlab-notes' if gitlab_notes else '--pages'} needs "
            f"{'--ci gitlab' if gitlab_notes else '--ci github or gitlab'}")  # fmt: skip
        raise Failure(EXIT_USAGE)
    root = Path(folder)
    if root.exists() and not root.is_dir():
        say(f"{folder}: not a folder")
        raise Failure(EXIT_INVALID)
    machine, problems = find_machine(machine_id, [root / "specs"])
    if machine is None:
        for p in problems:
            say(p.format() if p.file else p.message, fg="red")
        raise Failure(EXIT_INVALID)
    plan = InitPlan(root=root, machine=machine, force=force, ci=ci, pages=pages,
                    gitlab_notes=gitlab_notes)  # fmt: skip
    if ci != "none":
        _install_source(plan, install_spec)
    actions = init_project(plan)
    if quiet:
        return
    where = shown(root.resolve()) if root.resolve() != Path.cwd().resolve() else "."
    for action in actions:
        colour = "yellow" if action.status == SKIPPED else None
        detail = f": {action.detail}" if action.detail else ""
        first, *rest = detail.split("\n")
        say(f"{action.status:>11}  {action.path}{first}", fg=colour)
        for line in rest:
            say(f"             {line}")
    if plan.source is not None:
        say(f"CI installs roofgen from {plan.source.url} ({plan.source.origin})")
        for note in plan.source.notes:
            say(f"  note: {note}", fg="yellow")
    skipped = [a.path for a in actions if a.status == SKIPPED]
    if skipped:
        say(f"skipped {len(skipped)} file(s) that exist: {', '.join(skipped)} "
            "(--force overwrites them)", fg="yellow")  # fmt: skip
    cd = f"cd {where} && " if where != "." else ""
    say("")
    say("next:")
    say(f"  {cd}roofgen check                 # the example case checks clean")
    say(f"  roofgen new case my-kernel --machine {machine.id} --kernel my-kernel")
    say("  (fill in the TODO values, then) roofgen check && roofgen explain my-kernel/my-kernel")
    say("  roofgen build                 # the site, with the Guide pages (roofgen[site])")
    say("  pre-commit install            # if you use pre-commit: check before each commit")


def _install_source(plan: Any, spec: str | None) -> None:
    """Where CI installs roofgen from: ``--install``, else this roofgen's own source.
    A bad ``--install`` fails before anything is written; an unknown source of this
    roofgen leaves the CI files out, each saying how to name one."""
    from roofgen.scaffold.install import InstallError, from_installed, from_spec

    if spec is not None:
        try:
            plan.source = from_spec(spec)
        except InstallError as e:
            say(f"--install: {e}", fg="red")
            raise Failure(EXIT_INVALID) from e
        return
    try:
        plan.source = from_installed()
    except InstallError as e:
        plan.source_problem = (
            f"{e}, so roofgen cannot tell CI where to install it from; name the source: "
            "roofgen init --install 'git+https://HOST/ORG/roofgen@COMMIT'"
        )
