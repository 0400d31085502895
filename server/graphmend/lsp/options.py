"""Editor settings: from initializationOptions and workspace/didChangeConfiguration.

Accepted shapes: `{"graphmend": {...}}` or the inner table itself, with camelCase (VS Code) or
pyproject-style keys. Editor settings override `[tool.graphmend]`; only keys the editor sets do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import api
from ..api import Settings, SettingsError

_SETTING_KEYS = {
    "select": "select",
    "ignore": "ignore",
    "moduleForwardIsCompiled": "module-forward-is-compiled",
    "module-forward-is-compiled": "module-forward-is-compiled",
    "module_forward_is_compiled": "module-forward-is-compiled",
    "maxFileSizeKb": "max-file-size-kb",
    "max-file-size-kb": "max-file-size-kb",
    "assumeTraining": "assume-training",
    "assume-training": "assume-training",
    "assumeDtypes": "assume-dtypes",
    "assume-dtypes": "assume-dtypes",
    "layerSkip": "layer-skip",
    "layer-skip": "layer-skip",
    "moduleBases": "module-bases",
    "module-bases": "module-bases",
    "cudaGraphs": "cuda-graphs",
    "cuda-graphs": "cuda-graphs",
    "torchVersion": "torch-version",
    "torch-version": "torch-version",
}
# Settings an editor may still send that the server no longer reads, and why.
_RETIRED = {
    key: f"settings: `{key}` is not read in the editor (ignored): Fix All applies safe fixes only, and a fix "
    "proved on your run is its own quick fix; `graphmend fix --apply-proved-fixes` applies them all"
    for key in ("applyProvedFixes", "apply-proved-fixes")
}
_SERVER_KEYS = {
    "run",
    "debounce",
    "debounceMs",
    "trace",
    "path",
    "interpreter",
    "logLevel",
    "enable",
    "workerIdleSeconds",
    "index",
    "closedFiles",
}


@dataclass(frozen=True)
class EditorOptions:
    overrides: dict[str, Any] = field(default_factory=dict)  # keys of [tool.graphmend]
    run: str = "onType"  # or "onSave"
    debounce_ms: int = 150
    worker_idle_s: float = 30.0  # stop the analysis worker this long after the last document closes
    problems: tuple[str, ...] = ()  # what could not be understood, reported to the user once
    index: bool = True  # index the workspace folders: calls and compile sites across files count
    closed_files: bool = False  # also report files that are not open (workspace-wide diagnostics)

    def apply(self, settings: Settings) -> Settings:
        try:
            return settings.merged(self.overrides)
        except SettingsError:
            return settings


def parse_options(raw: Any) -> EditorOptions:
    """Editor options from whatever the client sent; unknown or bad values are reported, not fatal."""
    if not isinstance(raw, dict):
        return EditorOptions()
    table = raw.get("graphmend", raw)
    if not isinstance(table, dict):
        return EditorOptions()
    overrides: dict[str, Any] = {}
    problems: list[str] = []
    run, debounce, idle = "onType", 150, 30.0
    switches = {"index": True, "closedFiles": False}
    for key, value in table.items():
        if value is None:
            continue
        if key in _SETTING_KEYS:
            candidate = {_SETTING_KEYS[key]: value}
            try:
                Settings().merged(candidate)
            except SettingsError as error:
                problems.append(str(error))
                continue
            if key == "select" and value == []:
                continue  # an empty select in an editor means "use the default", not "nothing"
            if key in ("select", "ignore"):
                unknown = api.unknown_codes(value if isinstance(value, list) else [value])
                if unknown:
                    problems.append(f"settings: `{key}` names no graphmend rule: {', '.join(unknown)} (ignored)")
                    continue
            overrides.update(candidate)
        elif key == "run":
            if value in ("onType", "onSave"):
                run = value
            else:
                problems.append(f'settings: `run` must be "onType" or "onSave", not {value!r}')
        elif key in ("debounce", "debounceMs"):
            if isinstance(value, int) and 0 <= value <= 10_000:
                debounce = value
            else:
                problems.append(f"settings: `{key}` must be a number of milliseconds (0-10000), not {value!r}")
        elif key == "workerIdleSeconds":
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 86_400:
                idle = float(value)
            else:
                problems.append(f"settings: `workerIdleSeconds` must be a number of seconds, not {value!r}")
        elif key in switches:
            if isinstance(value, bool):
                switches[key] = value
            else:
                problems.append(f"settings: `{key}` must be true or false, not {value!r}")
        elif key in _RETIRED:
            problems.append(_RETIRED[key])
        elif key not in _SERVER_KEYS:
            problems.append(f"settings: unknown setting `{key}` (ignored)")
    return EditorOptions(overrides, run, debounce, idle, tuple(problems), switches["index"], switches["closedFiles"])
