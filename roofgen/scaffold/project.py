"""``roofgen init``: the files a repository needs to keep performance cases with roofgen.

Settings (roofgen.toml), a specs folder with an example case pinned to a library
machine, a pre-commit hook, the CI set-up (GitHub workflows or .gitlab-ci.yml and a
constraints file, :mod:`roofgen.scaffold.ci_github`, :mod:`roofgen.scaffold.ci_gitlab`),
the schemas for editors and the
editor's mapping of them onto the spec files, .gitignore entries and .gitattributes
lines that keep spec files LF. A file that exists is never overwritten without
``force``; files that can take an addition (.gitignore, .gitattributes,
.vscode/settings.json, .pre-commit-config.yaml) get it instead, and only when what
they say does not already cover it. Every file is written inside the project folder
(:func:`roofgen.files.write_file`: a link that leads out of it is refused).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roofgen.files import write_file
from roofgen.spec.quantity import parse_quantity
from roofgen.spec.yamltext import scalar
from roofgen.units import fmt_time

__all__ = ["Action", "InitPlan", "init_project"]

CREATED, UPDATED, UNCHANGED, SKIPPED, OVERWRITTEN = (
    "created", "updated", "unchanged", "skipped", "overwritten",
)  # fmt: skip
EXAMPLE_ID = "example-vector-add"
EXAMPLE_EFFICIENCY = 0.85
SCHEMA_DIR = ".roofgen"
HOOK_ID = "roofgen-check"


@dataclass
class Action:
    """What init did to one file."""

    path: str  # relative to the project folder, with '/'
    status: str
    detail: str = ""


@dataclass
class InitPlan:
    root: Path
    machine: Any  # roofgen.machines.lookup.FoundMachine
    force: bool = False
    specs: str = "specs"  # the specs folder, relative to root
    output: str = "site"
    today: str = field(default_factory=lambda: dt.date.today().isoformat())
    ci: str = "github"  # github, gitlab or none
    source: Any = None  # roofgen.scaffold.install.InstallSource: where CI installs roofgen
    source_problem: str = ""  # why there is no source: the CI files are skipped
    pages: bool = False  # publish the site to GitHub or GitLab Pages
    gitlab_notes: bool = False  # post the diff as a merge-request note (a token)
    actions: list[Action] = field(default_factory=list)


def init_project(plan: InitPlan) -> list[Action]:
    """Write the project's files under ``plan.root``; return what happened to each."""
    root = plan.root
    root.mkdir(parents=True, exist_ok=True)
    _settings_file(plan)
    _file(plan, f"{plan.specs}/cases/{EXAMPLE_ID}.yaml", lambda: example_case(plan))
    _file(plan, f"{plan.specs}/machines/README.md", lambda: MACHINES_README)
    _pre_commit(plan)
    _ci(plan)
    _schemas(plan)
    _vscode(plan)
    _gitignore(plan)
    _gitattributes(plan)
    return plan.actions


# --------------------------------------------------------------------------- helpers


def _write(plan: InitPlan, path: Path, text: str) -> None:
    """Write under the project folder; a link that leads out of it is refused."""
    write_file(path, text, root=plan.root)


def _file(plan: InitPlan, relative: str, text: Callable[[], str]) -> None:
    """A file written whole: created, or overwritten only with force."""
    path = plan.root / relative
    if path.exists():
        new = text()
        if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == new:
            plan.actions.append(Action(relative, UNCHANGED))
        elif plan.force and path.is_file():
            _write(plan, path, new)
            plan.actions.append(Action(relative, OVERWRITTEN))
        else:
            plan.actions.append(Action(relative, SKIPPED, "exists; --force overwrites it"))
        return
    _write(plan, path, text())
    plan.actions.append(Action(relative, CREATED))


def _ci(plan: InitPlan) -> None:
    """The CI files of ``plan.ci``, or each skipped with why when the source is unknown."""
    from roofgen.scaffold.ci import DEPENDABOT, ci_files, dependabot_addition
    from roofgen.scaffold.install import CONSTRAINTS_FILE, unpinned_dependencies

    for relative, text in ci_files(plan):
        if plan.source is None:
            plan.actions.append(Action(relative, SKIPPED, plan.source_problem))
        elif relative == DEPENDABOT and (plan.root / relative).exists():
            # A team's Dependabot file is theirs, even with --force.
            have = (plan.root / relative).read_text(encoding="utf-8", errors="replace")
            addition = dependabot_addition(have)
            if addition is None:
                plan.actions.append(Action(relative, UNCHANGED, "already updates github-actions"))
            else:
                plan.actions.append(Action(relative, SKIPPED, addition))
        else:
            _file(plan, relative, text)
            if relative == CONSTRAINTS_FILE and plan.actions[-1].status != SKIPPED:
                missing = unpinned_dependencies()
                if missing:
                    plan.actions[-1].detail = (
                        f"does not pin {', '.join(missing)} (not installed here): install "
                        "roofgen[site] and run init --force to pin them"
                    )


def _settings_file(plan: InitPlan) -> None:
    pyproject = plan.root / "pyproject.toml"
    if (
        not plan.force
        and pyproject.is_file()
        and "[tool.roofgen]" in pyproject.read_text(encoding="utf-8", errors="replace")
    ):
        plan.actions.append(
            Action("roofgen.toml", SKIPPED, "the settings are in pyproject.toml [tool.roofgen]")
        )
        _adopt(plan, pyproject)
        return
    existing = plan.root / "roofgen.toml"
    if existing.is_file() and not plan.force:
        _adopt(plan, existing)
    _file(plan, "roofgen.toml", lambda: settings_toml(plan))


def _adopt(plan: InitPlan, settings_file: Path) -> None:
    """Use the specs folder and output an existing settings file names."""
    import tomllib

    from roofgen.config import check_paths

    try:
        data = tomllib.loads(settings_file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return
    if settings_file.name == "pyproject.toml":
        data = data.get("tool", {}).get("roofgen", {})
    if isinstance(data, dict):  # paths that would reach the written files are refused
        check_paths(settings_file, data)
    specs = data.get("specs")
    if isinstance(specs, list) and specs and isinstance(specs[0], str):
        plan.specs = specs[0].rstrip("/") or plan.specs
    if isinstance(data.get("output"), str):
        plan.output = data["output"].rstrip("/") or plan.output


# --------------------------------------------------------------------------- contents


def settings_toml(plan: InitPlan) -> str:
    return f"""\
# roofgen settings: `roofgen config` shows the effective values and where each came from.
# Paths are relative to this file.
specs = ["{plan.specs}"]
output = "{plan.output}"
# rules = "roofgen-rules.yaml"   # plausibility and recommendation rules of the team's own

[thresholds]
co_bound_margin = 0.15         # runner-up within 15% of the bound: co-bound
below_roofs_efficiency = 0.5   # under 50% of the bound: below all roofs

[site]
name = "Kernel performance case studies"
# url = "https://perf.example.com/"   # the published site; without it the sitemap is empty
"""


MACHINES_README = """\
# Machines

A case names the machines it ran on by id. roofgen ships a library of machines
(`roofgen machines`; `roofgen machines show ID` prints each roof with its source),
and a case pins a library machine by version, so that upgrading roofgen never
moves the roofs under a committed case:

```yaml
machines:
  - {id: a100-40gb-sxm, version: 1}
```

Put a machine file here (`kind: machine`) when the library lacks yours, or when
you measured its roofs: `roofgen machines vendor ID` copies a library machine here
to edit, and `roofgen import ert roofline.json -o ...` turns Empirical Roofline
Toolkit results into one. A machine file here takes precedence over the library
machine with the same id.
"""


def _roof(value: Any, dimension: str) -> float:
    if isinstance(value, dict):
        value = value.get("measured", value.get("datasheet"))
    return parse_quantity(value, dimension)


def _fp32_unit(machine: Any) -> tuple[str, float]:
    best: tuple[str, float] | None = None
    for unit in machine.data.get("compute", []):
        peak = unit.get("peaks", {}).get("fp32")
        if peak is None:
            continue
        candidate = (str(unit["id"]), _roof(peak, "flop_rate"))
        if unit.get("kind") == "fp32":
            return candidate
        best = best or candidate
    if best is None:
        raise ValueError(f"machine {machine.id} has no FP32 peak for the example case")
    return best


def example_case(plan: InitPlan) -> str:
    """A worked example: c = a + b over 2^28 fp32 elements, at 85% of device memory."""
    m = plan.machine
    data = m.data
    device = next(level for level in data["memory"] if level.get("role") == "device")
    moved = 3 * 4 * 2**28  # read a and b, write c: 12 bytes per element
    flop = 2**28
    unit, peak = _fp32_unit(m)
    bound = max(moved / _roof(device["bandwidth"], "bandwidth"), flop / peak)
    median = bound / EXAMPLE_EFFICIENCY
    clocks = ", ".join(f"{k}: {data['clocks'][k]}" for k in ("sm", "memory") if k in data["clocks"])
    pin = f"{{id: {m.id}, version: {m.version}}}" if m.version is not None else m.id
    schema = f"../../{SCHEMA_DIR}/case.schema.json"
    return f"""\
# yaml-language-server: $schema={schema}
# An example case written by `roofgen init`: c = a + b over 2^28 fp32 elements on the
# {data["name"]}. Keep it as a worked example or delete it; start your own with
# `roofgen new case ID --machine {m.id}`. Every field is described on the site's
# Guide > Spec reference page (`roofgen build`).
roofgen: 1
kind: case
id: {EXAMPLE_ID}
title: "Example: a bandwidth-bound vector add"
summary: c = a + b moves 12 bytes per FLOP, so device memory bandwidth is its roof.
date: "{plan.today}"
owners: [you]
status: draft
tags: [example, elementwise]
# roofgen's library machine {m.id}, pinned to its version so that a later roofgen
# cannot move the roofs under this case (`roofgen machines show {m.id}`).
machines:
  - {pin}
narrative:
  context: |
    The simplest streaming kernel: one FLOP for every twelve bytes moved.
  hypothesis: |
    At 1/12 FLOP/B the kernel sits far left of every ridge point, so device memory
    bandwidth binds and arithmetic does not matter.
method:
  description: |
    CUDA events around each launch, 100 timed repeats after 10 warm-up runs; a
    large buffer is written between repeats to flush L2.
  gpu: {scalar(data["name"])}
  driver: "(the driver version)"
  clock_control: {scalar(f"locked to the machine's clocks ({clocks})")}
  cache_control: L2 flushed between repeats
kernels:
  - id: add
    name: vector add (c = a + b)
    operator: {{kind: elementwise, shape: {{n: 268435456}}}}
    dtypes: {{a: fp32, b: fp32, c: fp32}}
variants:
  - id: baseline
    name: One element per thread
    launches:
      - kernel: add
        measurement:
          # The time is made up for the example: {EXAMPLE_EFFICIENCY:.0%} of the device-memory roof.
          time: {{median: {fmt_time(median)}, q1: {fmt_time(median * 0.998)}, q3: {fmt_time(median * 1.002)}, repeats: 100, warmup: 10}}
          timing: cuda-events
          clocks: {{{clocks}}}
          flops: {{{unit}: {{fp32: {flop} FLOP}}}}   # one add per element
          bytes:
            {device["id"]}: {{read: 2 GiB, write: 1 GiB}}   # a and b read, c written, once each
"""  # noqa: E501


PRE_COMMIT_HOOK = """\
  - repo: local
    hooks:
      - id: roofgen-check
        name: roofgen check
        entry: roofgen check
        language: system
        pass_filenames: false
        files: \\.(ya?ml|toml)$
"""

PRE_COMMIT = (
    """\
# Written by `roofgen init`: `roofgen check` before each commit that touches a YAML or
# TOML file. It checks the whole configured specs folder (pass_filenames: false), because
# a case's machine lives in another file. It runs the roofgen on the PATH.
repos:
"""
    + PRE_COMMIT_HOOK
)


def _pre_commit(plan: InitPlan) -> None:
    relative = ".pre-commit-config.yaml"
    path = plan.root / relative
    if not path.exists():
        _write(plan, path, PRE_COMMIT)
        plan.actions.append(Action(relative, CREATED))
        return
    text = path.read_text(encoding="utf-8", errors="replace")
    if re.search(rf"\bid:\s*{HOOK_ID}\b", text):
        plan.actions.append(Action(relative, UNCHANGED, f"already has the {HOOK_ID} hook"))
        return
    merged = _add_hook(text)
    if merged is None:
        plan.actions.append(
            Action(
                relative,
                SKIPPED,
                f"cannot add the {HOOK_ID} hook by itself; add:\n" + PRE_COMMIT_HOOK,
            )  # fmt: skip
        )
        return
    _write(plan, path, merged)
    plan.actions.append(Action(relative, UPDATED, f"added the local {HOOK_ID} hook"))


def _add_hook(text: str) -> str | None:
    """``text`` with roofgen's local hook appended to ``repos``, every line kept."""
    from roofgen.spec.roundtrip import dump, load_round_trip, make_yaml, only_added

    try:
        yaml, data = load_round_trip(text)
        hook = make_yaml().load(PRE_COMMIT_HOOK.replace("  - ", "- ", 1).replace("\n  ", "\n"))
    except Exception:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("repos"), list):
        return None
    data["repos"].append(hook[0])
    after = dump(yaml, data)
    return None if only_added(text, after) else after


def _schemas(plan: InitPlan) -> None:
    from roofgen.spec.schema import ALL_SCHEMAS, load_schema

    for kind in ALL_SCHEMAS:
        text = json.dumps(load_schema(kind), indent=2) + "\n"
        path = plan.root / SCHEMA_DIR / f"{kind}.schema.json"
        if path.exists() and path.read_text(encoding="utf-8", errors="replace") != text:
            detail = "differs from this roofgen's schema; --force updates it"
            if not plan.force:
                plan.actions.append(Action(f"{SCHEMA_DIR}/{kind}.schema.json", SKIPPED, detail))
                continue
        _file(plan, f"{SCHEMA_DIR}/{kind}.schema.json", _constant(text))


def _constant(text: str) -> Callable[[], str]:
    return lambda: text


def vscode_schemas(plan: InitPlan) -> dict[str, str]:
    return {
        f"./{SCHEMA_DIR}/machine.schema.json": f"{plan.specs}/machines/*.yaml",
        f"./{SCHEMA_DIR}/case.schema.json": f"{plan.specs}/cases/*.yaml",
    }


def _vscode(plan: InitPlan) -> None:
    relative = ".vscode/settings.json"
    path = plan.root / relative
    wanted = vscode_schemas(plan)
    if not path.exists():
        _write(plan, path, json.dumps({"yaml.schemas": wanted}, indent=4) + "\n")
        plan.actions.append(Action(relative, CREATED))
        return
    text = path.read_text(encoding="utf-8", errors="replace")
    snippet = json.dumps({"yaml.schemas": wanted}, indent=4)
    try:
        settings = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        plan.actions.append(
            Action(
                relative,
                SKIPPED,
                f"not plain JSON (comments?), so roofgen does not rewrite it; add:\n{snippet}",
            )  # fmt: skip
        )
        return
    if not isinstance(settings, dict):
        plan.actions.append(Action(relative, SKIPPED, f"not a JSON object; add:\n{snippet}"))
        return
    schemas = settings.setdefault("yaml.schemas", {})
    if not isinstance(schemas, dict):
        plan.actions.append(Action(relative, SKIPPED, f"yaml.schemas is not an object; add:\n"
                                   f"{snippet}"))  # fmt: skip
        return
    changed = False
    for schema, glob in wanted.items():
        have = schemas.get(schema)
        globs = [have] if isinstance(have, str) else list(have or [])
        if glob not in globs:
            globs.append(glob)
            schemas[schema] = globs[0] if len(globs) == 1 else globs
            changed = True
    if not changed:
        plan.actions.append(Action(relative, UNCHANGED))
        return
    indent = _json_indent(text)
    _write(plan, path, json.dumps(settings, indent=indent, ensure_ascii=False) + "\n")
    plan.actions.append(Action(relative, UPDATED, "added the spec schemas to yaml.schemas"))


def _json_indent(text: str) -> int:
    match = re.search(r"\n( +)\"", text)
    return len(match.group(1)) if match else 4


GITIGNORE_ENTRIES = ("site/", ".roofgen-cache/")
#: Spec files keep LF endings in every checkout (Git for Windows would give CRLF).
GITATTRIBUTES_ENTRIES = ("*.yaml text eol=lf", "*.yml text eol=lf")


def _gitignore(plan: InitPlan) -> None:
    entries = [f"{plan.output}/", ".roofgen-cache/"]
    heading = "# roofgen: the built site and the chart cache"
    _add_lines(plan, ".gitignore", entries, heading, "ignores ", lambda line: line.strip("/"))


def _gitattributes(plan: InitPlan) -> None:
    heading = "# roofgen: spec files keep LF line endings"
    _add_lines(plan, ".gitattributes", list(GITATTRIBUTES_ENTRIES), heading, "sets ", str)


def _add_lines(
    plan: InitPlan, relative: str, entries: list[str], heading: str, verb: str,
    key: Callable[[str], str],
) -> None:  # fmt: skip
    """Append the ``entries`` a line-per-entry file lacks (compared by ``key`` of the
    line, its spaces normalised) under ``heading``; the lines already there stay."""
    path = plan.root / relative
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    have = {key(" ".join(line.split())) for line in text.splitlines()}
    missing = [e for e in entries if key(e) not in have]
    if not missing:
        plan.actions.append(Action(relative, UNCHANGED))
        return
    block = heading + "\n" + "".join(f"{e}\n" for e in missing)
    if text and not text.endswith("\n"):
        text += "\n"
    _write(plan, path, text + ("\n" if text else "") + block)
    plan.actions.append(Action(relative, UPDATED if text else CREATED, verb + ", ".join(missing)))
