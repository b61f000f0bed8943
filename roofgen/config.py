"""Settings: roofgen.toml (or [tool.roofgen] in pyproject.toml), found by walking up.

Paths are relative to the file that sets them; flags override the file;
unknown keys are errors. Every effective value remembers where it came from.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roofgen.analysis.bounds import Thresholds
from roofgen.problems import Problem, SpecError
from roofgen.spec import fastpath
from roofgen.spec import schema as schema_mod

DEFAULTS: dict[str, Any] = {
    "specs": ["specs"],
    "output": "site",
    "thresholds": {"co_bound_margin": 0.15, "below_roofs_efficiency": 0.5},
    "site": {"name": "Performance case studies", "history": True, "static_charts": False},
}


@dataclass(frozen=True)
class Settings:
    root: Path  # folder that relative paths are resolved against
    file: Path | None  # the settings file, if any
    specs: tuple[Path, ...]
    output: Path
    rules: Path | None
    thresholds: Thresholds
    site: dict[str, Any]
    origins: dict[str, str] = field(default_factory=dict)  # setting -> where it came from


def find_settings_file(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest roofgen.toml, or pyproject.toml with [tool.roofgen], from ``start`` up."""
    for folder in (start, *start.parents):
        candidate = folder / "roofgen.toml"
        if candidate.is_file():
            return candidate, _read_toml(candidate)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            tool = _read_toml(pyproject).get("tool")
            if isinstance(tool, dict) and "roofgen" in tool:
                return pyproject, tool["roofgen"]
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        message = f"invalid TOML: {exc}"
    except UnicodeDecodeError as exc:
        message = f"not UTF-8 text (byte {exc.start} is 0x{exc.object[exc.start]:02x})"
    except ValueError:  # tomllib's int() of a number past Python's 4,300-digit limit
        message = "invalid TOML: a number of more than 4,300 digits"
    except RecursionError:
        message = "invalid TOML: nested too deeply"
    except OSError as exc:
        message = f"cannot read: {exc.strerror}"
    raise SpecError([Problem(str(path), 0, 0, "", message)])


def load_settings(start: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Effective settings for the working folder ``start``; raises SpecError if invalid."""
    start = (start or Path.cwd()).resolve()
    found = find_settings_file(start)
    origins: dict[str, str] = {}
    values: dict[str, Any] = {}
    root = start
    file = None
    if found is not None:
        file, data = found
        root = file.parent
        _validate(file, data)
        values = data
        for key in _flatten(data):
            origins[key] = str(file)
    merged = _merge(copy.deepcopy(DEFAULTS), values)  # an override must not change DEFAULTS
    for key in _flatten(DEFAULTS):
        origins.setdefault(key, "default")
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        _set(merged, key, value)
        origins[key] = "command line"
    thresholds = merged["thresholds"]
    return Settings(
        root=root,
        file=file,
        specs=tuple(_resolve(root, p, origins.get("specs")) for p in merged["specs"]),
        output=_resolve(root, merged["output"], origins.get("output")),
        rules=_resolve(root, merged["rules"], origins.get("rules")) if "rules" in merged else None,
        thresholds=Thresholds(
            co_bound_margin=float(thresholds["co_bound_margin"]),
            below_roofs_efficiency=float(thresholds["below_roofs_efficiency"]),
        ),
        site=merged["site"],
        origins=origins,
    )


def _resolve(root: Path, value: str | Path, origin: str | None) -> Path:
    path = Path(value)
    if path.is_absolute():
        return path
    if origin == "command line":
        return Path.cwd() / path
    return root / path


def _validate(file: Path, data: dict[str, Any]) -> None:
    # most settings are valid; then jsonschema is not imported
    if not fastpath.is_valid(data, "config"):
        _schema_errors(file, data)
    check_paths(file, data)


def _schema_errors(file: Path, data: dict[str, Any]) -> None:
    errors = list(schema_mod.validator("config").iter_errors(data))
    if not errors:
        return
    problems = []
    for error in errors:
        where = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties":
            known = ", ".join(sorted(error.schema.get("properties", {})))
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            message = f"unknown setting {', '.join(map(repr, extra))}; known here: {known}"
        else:
            message = error.message
        problems.append(Problem(str(file), 0, 0, where, message))
    raise SpecError(problems)


# --------------------------------------------------------------------------- paths

#: What a path setting may hold: it is written into generated files (workflows, the
#: .gitignore) and passed to commands, so it must be inert there.
_PLAIN = re.compile(r"[A-Za-z0-9._/-]+")
_PLAIN_WORDS = "letters, digits, '.', '_', '-' and '/'"


def check_paths(file: Path, data: dict[str, Any]) -> None:
    """Refuse a path setting of ``data`` (the table read from ``file``) that is not a
    plain relative path inside the project, or an output that is, holds or lies in a
    specs folder; :class:`SpecError` naming the setting and what to write instead.

    ``output`` and ``specs`` reach generated files (``roofgen init`` writes them into
    the settings, the .gitignore and CI files) and name what a build replaces, so they
    are held to relative paths of plain characters: no leading ``-`` (an option to a
    command), no ``.``, ``..`` or ``.git`` component (``nope/../../victim`` is outside
    the project once the build makes ``nope``)."""
    problems: list[Problem] = []
    position = _Positions(file)
    output, specs = data.get("output"), data.get("specs")
    if isinstance(output, str):
        why = _path_problem(output)
        if why is not None:
            message = _bad("output", output, why, _plain_form(output) or "site")
            problems.append(position.of("output", output, message))
    for i, value in enumerate(specs if isinstance(specs, list) else []):
        why = _path_problem(value) if isinstance(value, str) else None
        if why is not None:
            message = _bad("specs", value, why, _plain_form(value) or "specs", listed=True)
            problems.append(position.of(f"specs[{i}]", value, message, key="specs"))
    if not problems:
        problems += _overlaps(data, position)
    if problems:
        raise SpecError(problems)


def _path_problem(value: str) -> str | None:
    """Why ``value`` is not a plain relative path inside the project; None if it is."""
    if not value:
        return "is empty"
    odd = next((c for c in value if not _PLAIN.fullmatch(c)), None)
    if odd is not None:
        return f"holds {json.dumps(odd)}; a path here holds only {_PLAIN_WORDS}"
    if value.startswith("/"):
        return "is absolute; a path here is relative to the settings file"
    if value.startswith("-"):
        return "starts with '-', which a command reads as an option"
    parts = value.removesuffix("/").split("/")
    if "" in parts:
        return "has an empty component ('//')"
    for part in parts:
        if part in (".", "..") or part.casefold() == ".git":
            return f"has a {json.dumps(part)} component"
    return None


def _plain_form(value: str) -> str | None:
    """``value`` without its ``.`` components and empty ones, if that is a plain path
    (``./specs`` -> ``specs``); else None."""
    if value.startswith("/"):
        return None
    kept = "/".join(p for p in value.split("/") if p not in ("", "."))
    return kept if kept and _path_problem(kept) is None else None


def _bad(setting: str, value: str, why: str, example: str, *, listed: bool = False) -> str:
    shown = json.dumps(value)
    written = f"{setting} = [{shown}]" if listed else f"{setting} = {shown}"
    instead = f"[{json.dumps(example)}]" if listed else json.dumps(example)
    return f"{written} {why}; write a folder inside the project, such as {setting} = {instead}"


def _parts(value: str) -> tuple[str, ...]:
    return tuple(p.casefold() for p in value.removesuffix("/").split("/"))


def _overlaps(data: dict[str, Any], position: _Positions) -> list[Problem]:
    """The output folder must not be a specs folder, nor lie inside or above one: the
    build would replace specs, or the next check would read the site."""
    output = data.get("output", DEFAULTS["output"])
    specs = [v for v in data.get("specs", DEFAULTS["specs"]) if isinstance(v, str)]
    out = _parts(output)
    for value in specs:
        spec = _parts(value)
        if out[: len(spec)] != spec and spec[: len(out)] != out:
            continue
        relation = "is" if out == spec else "lies inside" if len(out) > len(spec) else "holds"
        free = [f for f in ("site", "public", "_site") if all(_apart(f, v) for v in specs)]
        where = "" if "output" in data else " (the default)"
        message = (
            f"output = {json.dumps(output)}{where} {relation} the specs folder "
            f"{json.dumps(value)}: the build would replace the specs, or the check read "
            f"the site; write an output folder of its own beside the specs, such as "
            f"output = {json.dumps(free[0] if free else 'site')}"
        )
        if "output" in data:
            return [position.of("output", output, message)]
        return [position.of("specs", value, message)]
    return []


def _apart(output: str, spec: str) -> bool:
    out, folder = _parts(output), _parts(spec)
    return out[: len(folder)] != folder and folder[: len(out)] != out


class _Positions:
    """Where a top-level setting of the roofgen table is written in ``file`` (tomllib
    gives no positions): the line and column of its key, or of a listed value on or
    after that line; 0, 0 where it cannot be told."""

    def __init__(self, file: Path) -> None:
        self.table = "tool.roofgen" if file.name == "pyproject.toml" else ""
        try:
            self.lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            self.lines = []
        self.file = str(file)

    def of(self, path: str, value: str, message: str, key: str | None = None) -> Problem:
        line, column = self._find(key or path, value)
        return Problem(self.file, line, column, path, message)

    def _find(self, key: str, value: str) -> tuple[int, int]:
        table = ""
        assignment = re.compile(rf"""^(\s*)(?:{re.escape(key)}|"{re.escape(key)}")\s*=""")
        for number, text in enumerate(self.lines, start=1):
            header = re.match(r"^\s*\[([^\[\]]*)\]", text)
            if header:
                table = re.sub(r"[\s\"']", "", header.group(1))
                continue
            found = assignment.match(text)
            if table == self.table and found:
                return self._value(number, value) or (number, len(found.group(1)) + 1)
        return 0, 0

    def _value(self, start: int, value: str) -> tuple[int, int] | None:
        """The first quoted ``value`` from line ``start`` on (an array may span lines)."""
        for quoted in (json.dumps(value), f"'{value}'"):
            for number in range(start, min(start + 50, len(self.lines)) + 1):
                column = self.lines[number - 1].find(quoted)
                if column >= 0:
                    return number, column + 1
        return None


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _flatten(data: dict[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            keys += _flatten(value, name + ".")
        else:
            keys.append(name)
    return keys


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    for part in parts[:-1]:
        data = data.setdefault(part, {})
    data[parts[-1]] = value


def describe(settings: Settings) -> list[tuple[str, str, str]]:
    """(setting, effective value, origin) rows for `roofgen config`."""
    rows = [
        ("specs", ", ".join(str(p) for p in settings.specs), settings.origins.get("specs", "")),
        ("output", str(settings.output), settings.origins.get("output", "")),
        (
            "rules",
            str(settings.rules) if settings.rules else "(shipped rules only)",
            settings.origins.get("rules", "default"),
        ),
        (
            "thresholds.co_bound_margin",
            str(settings.thresholds.co_bound_margin),
            settings.origins.get("thresholds.co_bound_margin", ""),
        ),
        (
            "thresholds.below_roofs_efficiency",
            str(settings.thresholds.below_roofs_efficiency),
            settings.origins.get("thresholds.below_roofs_efficiency", ""),
        ),
    ]
    for key in sorted(_flatten(settings.site)):
        value: Any = settings.site
        for part in key.split("."):
            value = value[part]
        rows.append((f"site.{key}", str(value), settings.origins.get(f"site.{key}", "")))
    return rows
