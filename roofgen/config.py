"""Settings: roofgen.toml (or [tool.roofgen] in pyproject.toml), found by walking up.

Paths are relative to the file that sets them; flags override the file;
unknown keys are errors. Every effective value remembers where it came from.
"""

from __future__ import annotations

import copy
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
    if fastpath.is_valid(data, "config"):  # most settings are; jsonschema is not imported
        return
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
