"""User settings: which codes run, whether every nn.Module.forward counts as compiled, the
largest file graphmend analyses, and how the code is run (training or not, which dtypes), which
hides findings that cannot happen then.

Read from `[tool.graphmend]` in the nearest pyproject.toml; command-line flags and editor
settings override them. Code selection works like Ruff's: the most specific prefix wins.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import sys
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from . import untrusted

DEFAULT_SELECT = ("GM",)
MAX_SETTINGS_BYTES = 1 << 20  # a pyproject.toml or requirements file: a larger one is not read
_KNOWN_KEYS = {
    "select": "select",
    "ignore": "ignore",
    "module-forward-is-compiled": "module_forward_is_compiled",
    "module_forward_is_compiled": "module_forward_is_compiled",
    "max-file-size-kb": "max_file_size_kb",
    "max_file_size_kb": "max_file_size_kb",
    "assume-training": "assume_training",
    "assume_training": "assume_training",
    "assume-dtypes": "assume_dtypes",
    "assume_dtypes": "assume_dtypes",
    "per-file-ignores": "per_file_ignores",
    "per_file_ignores": "per_file_ignores",
    "extend-exclude": "extend_exclude",
    "extend_exclude": "extend_exclude",
    "layer-skip": "layer_skip",
    "layer_skip": "layer_skip",
    "module-bases": "module_bases",
    "module_bases": "module_bases",
    "cuda-graphs": "cuda_graphs",
    "cuda_graphs": "cuda_graphs",
    "torch-version": "torch_version",
    "torch_version": "torch_version",
    "follow-libraries": "follow_libraries",
    "follow_libraries": "follow_libraries",
    "library-paths": "library_paths",
    "library_paths": "library_paths",
    "report-library-files": "report_library_files",
    "report_library_files": "report_library_files",
    "runs": "runs",
    "apply-proved-fixes": "apply_proved_fixes",
    "apply_proved_fixes": "apply_proved_fixes",
}
LAYER_SKIP_FORMS = ("where", "cond")  # how a fixed loop gate (LayerDrop) skips a layer
# Where the CUDA-graph rules (GM4xx) run: "auto" in code compiled by a site that asks for CUDA
# graphs (`mode="reduce-overhead"`...), "always" in all compiled code, "never" nowhere.
CUDA_GRAPH_SCOPES = ("auto", "always", "never")
# torch's floating and integer dtypes by name, with their aliases (`half`, `float`, `double`...).
DTYPES = {
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "int8": "int8",
    "uint8": "uint8",
    "int16": "int16",
    "short": "int16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "long": "int64",
    "bool": "bool",
}
DEFAULT_MAX_FILE_SIZE_KB = 4096  # the largest model files of transformers are about 250 KB


def parse_torch_version(text: str) -> tuple[int, int] | None:
    """`"2.10.1+cu128"` → (2, 10); None for anything that is not a release number."""
    parts = text.strip().split("+")[0].split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), int(parts[1])


def virtual_env_site_packages() -> list[str]:
    """The site-packages folders of the active virtual environment (`VIRTUAL_ENV`), if any."""
    virtual_env = os.environ.get("VIRTUAL_ENV")
    if not virtual_env:
        return []
    return [
        *sorted(glob.glob(os.path.join(glob.escape(virtual_env), "lib", "python3*", "site-packages"))),
        os.path.join(virtual_env, "Lib", "site-packages"),  # Windows
    ]


@cache
def installed_torch_version() -> tuple[int, int] | None:
    """The torch of the user's environment, read from its metadata (torch is never imported: the
    analysis must start and run without it): the active virtual environment's (`VIRTUAL_ENV`, the
    one a shell or editor activated for the project), else the one graphmend runs in; None when
    there is none."""
    for site in virtual_env_site_packages():
        for found in sorted(glob.glob(os.path.join(glob.escape(site), "torch-*.dist-info"))):
            version = parse_torch_version(Path(found).name[len("torch-") : -len(".dist-info")])
            if version is not None:
                return version
    try:
        return parse_torch_version(metadata.version("torch"))
    except metadata.PackageNotFoundError:
        return None


_PIN = re.compile(r"^\s*torch\s*(?:\[[^\]]*\])?\s*(?:===?|~=)\s*v?(\d+)\.(\d+)", re.IGNORECASE)
_PIN_FILES = ("pyproject.toml", "requirements.txt")


def pinned_torch_version(start: Path) -> tuple[int, int] | None:
    """The torch release the project at or above `start` pins (`torch==2.9.1`, `torch~=2.9.0`) in its
    pyproject.toml (`[project]` dependencies and optional dependencies, Poetry's table) or
    requirements.txt: the nearest folder holding either decides. A range is no pin: None."""
    directory = start if start.is_dir() else start.parent
    for folder in [directory, *directory.parents]:
        present = [folder / name for name in _PIN_FILES if (folder / name).is_file() and untrusted.ours(folder / name)]
        if present:
            for path in present:
                version = _pin_in(str(path))
                if version is not None:
                    return version
            return None
    return None


def _pin_in(path: str) -> tuple[int, int] | None:
    try:
        text = untrusted.read_text(Path(path), MAX_SETTINGS_BYTES)
    except OSError:
        return None
    if not path.endswith(".toml"):
        requirements = text.splitlines()
    else:
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError):
            return None
        project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
        requirements = [r for r in project.get("dependencies", []) if isinstance(r, str)]
        for extra in (project.get("optional-dependencies") or {}).values():
            requirements += [r for r in extra if isinstance(r, str)] if isinstance(extra, list) else []
        poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {})
        spec = poetry.get("torch") if isinstance(poetry, dict) else None
        spec = spec.get("version") if isinstance(spec, dict) else spec
        if isinstance(spec, str):
            requirements.append("torch" + (spec if spec[:1] in "=~" else f"=={spec}"))
    for requirement in requirements:
        match = _PIN.match(requirement)
        if match is not None:
            return int(match.group(1)), int(match.group(2))
    return None


class SettingsError(ValueError):
    """A settings file or value that graphmend cannot use; the message says where and why."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = DEFAULT_SELECT
    ignore: tuple[str, ...] = ()
    module_forward_is_compiled: bool = True
    max_file_size_kb: int = DEFAULT_MAX_FILE_SIZE_KB  # larger files get one GM002 note, no analysis; 0: no limit
    assume_training: bool | None = None  # None: report findings of training and eval alike
    assume_dtypes: tuple[str, ...] = ()  # the dtypes the model runs in (canonical names); (): any
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, codes): not reported in matching files
    extend_exclude: tuple[str, ...] = ()  # globs of files and folders a directory walk passes over
    layer_skip: str = (
        "where"  # a fixed loop gate: "where" runs every layer (faster at LayerDrop <= 0.3), "cond" only kept ones
    )
    # Qualified names of base classes to take for nn.Module subclasses (`mylib.layers.Block`); a relative
    # import outside any package (`from ..layers import Block`) matches by its dotted tail.
    module_bases: frozenset[str] = frozenset()
    cuda_graphs: str = "auto"  # where the GM4xx rules run: one of CUDA_GRAPH_SCOPES
    # The torch release the code runs on, (major, minor): it decides findings (`torch_api.BREAKS_SINCE`)
    # and no rewrite emits an API it lacks. Unset: the project's pin (`pinned_torch_version`), else the
    # `torch` of the user's environment (`installed_torch_version`), else the newest graphmend knows.
    torch_version: tuple[int, int] | None = None
    # Follow compiled code's calls into installed packages and files outside the checked paths, and
    # report their breaks at the call (`project/libraries.py`, `project/library_calls.py`); packages are looked for in
    # `library_paths`, then in the active virtual environment and graphmend's own. Off until its
    # precision is measured (benchmarks/README.md, "Into the libraries compiled code calls").
    follow_libraries: bool = False
    library_paths: tuple[str, ...] = ()
    # With `follow_libraries`: also list those files' own findings that compiled code reaches.
    report_library_files: bool = False
    # Mark the findings the newest recorded run met (`graphmend record`, `.graphmend/runs/` at the
    # project root) as seen there, with the count; without a run nothing changes.
    runs: bool = True
    # `fix` also applies the unsafe fixes a proof proved on the user's run (`fix --prove`,
    # `.graphmend/proofs/`, signed by this user), as long as the function's text is the one proved.
    # The user's own choice only (`fix --apply-proved-fixes`): a repository's settings cannot turn it on.
    apply_proved_fixes: bool = False
    # What the settings file said that graphmend did not take from it, for the user to read: per
    # attribute, so that the user's own value for it (`merged`) silences the note.
    notes: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def target_torch(self) -> tuple[int, int] | None:
        """The torch release rewrites must run on: the setting, else the one installed here."""
        return self.torch_version if self.torch_version is not None else installed_torch_version()

    source: Path | None = field(default=None, compare=False)  # the pyproject.toml they came from

    def is_enabled(self, code: str) -> bool:
        """The longest matching prefix decides; on a tie, ignore wins."""
        selected = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected >= 0 and selected > ignored

    def for_file(self, path: Path) -> Settings:
        """These settings for one file: the codes its `per-file-ignores` entries name are ignored too."""
        extra = tuple(code for pattern, codes in self.per_file_ignores if self.matches(pattern, path) for code in codes)
        return replace(self, ignore=self.ignore + extra) if extra else self

    def excludes(self, path: Path) -> bool:
        """Whether `extend-exclude` passes over this file or folder in a directory walk."""
        return any(self.matches(pattern, path) for pattern in self.extend_exclude)

    def matches(self, pattern: str, path: Path) -> bool:
        """A glob of these settings against a path: a pattern without `/` matches a file or folder
        name anywhere (`__init__.py`, `notebooks`); one with `/` the path relative to the folder of
        the pyproject.toml they came from (else the working folder), `**` spanning folders."""
        if "/" not in pattern.rstrip("/"):
            return fnmatch.fnmatchcase(path.name, pattern.rstrip("/"))
        root = self.source.parent if self.source is not None else Path.cwd()
        try:
            relative = Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
        except ValueError:
            return False
        pattern = pattern.removeprefix("./").rstrip("/")
        return fnmatch.fnmatchcase(relative, pattern) or (
            pattern.startswith("**/") and fnmatch.fnmatchcase(relative, pattern[3:])
        )

    def merged(self, overrides: Mapping[str, Any]) -> Settings:
        """These settings with `overrides` (same keys as `[tool.graphmend]`) applied on top; a note
        on a setting the overrides give is dropped (the user's value is taken)."""
        values = _validate(overrides, origin="settings")
        return replace(self, **values, notes=tuple(n for n in self.notes if n[0] not in values))


def _code_list(value: Any, key: str, origin: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f'{origin}: `{key}` must be a list of rule codes or prefixes, e.g. ["GM1"]')
    codes = tuple(v.strip().upper() for v in value if v.strip())
    bad = [c for c in codes if not c.startswith("GM")]
    if bad:
        raise SettingsError(f"{origin}: `{key}` has codes that are not graphmend's: {', '.join(bad)}")
    return codes


def _is_dotted(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def _validate(table: Mapping[str, Any], origin: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in table.items():
        attribute = _KNOWN_KEYS.get(key)
        if attribute is None:
            known = ", ".join(k for k in _KNOWN_KEYS if "_" not in k)
            raise SettingsError(f"{origin}: unknown setting `{key}` (known: {known})")
        if attribute in ("select", "ignore"):
            values[attribute] = _code_list(value, key, origin)
        elif attribute == "assume_dtypes":
            names = [value] if isinstance(value, str) else value
            if not isinstance(names, (list, tuple)) or not all(
                isinstance(n, str) and DTYPES.get(n.removeprefix("torch.")) for n in names
            ):
                raise SettingsError(
                    f'{origin}: `{key}` must be a list of torch dtype names, e.g. ["bfloat16"] '
                    f"(known: {', '.join(sorted(set(DTYPES.values())))})"
                )
            values[attribute] = tuple(dict.fromkeys(DTYPES[n.removeprefix("torch.")] for n in names))
        elif attribute == "per_file_ignores":
            if not isinstance(value, Mapping):
                raise SettingsError(
                    f'{origin}: `{key}` must be a table of globs to codes, e.g. {{"tests/*" = ["GM2"]}}'
                )
            values[attribute] = tuple(
                (str(glob), _code_list(codes, f"{key}.{glob}", origin)) for glob, codes in value.items()
            )
        elif attribute == "extend_exclude":
            globs = [value] if isinstance(value, str) else value
            if not isinstance(globs, (list, tuple)) or not all(isinstance(g, str) and g.strip() for g in globs):
                raise SettingsError(f'{origin}: `{key}` must be a list of globs, e.g. ["notebooks/scratch"]')
            values[attribute] = tuple(g.strip() for g in globs)
        elif attribute == "library_paths":
            folders = [value] if isinstance(value, str) else value
            if not isinstance(folders, (list, tuple)) or not all(isinstance(f, str) and f.strip() for f in folders):
                raise SettingsError(
                    f'{origin}: `{key}` must be a list of folders, e.g. [".venv/lib/python3.11/site-packages"]'
                )
            values[attribute] = tuple(f.strip() for f in folders)
        elif attribute == "module_bases":
            names = [value] if isinstance(value, str) else value
            if not isinstance(names, (list, tuple)) or not all(
                isinstance(n, str) and _is_dotted(n.strip()) for n in names
            ):
                raise SettingsError(
                    f"{origin}: `{key}` must be a list of qualified class names, "
                    f'e.g. ["transformers.modeling_layers.GradientCheckpointingLayer"]'
                )
            values[attribute] = frozenset(n.strip() for n in names)
        elif attribute == "layer_skip":
            if value not in LAYER_SKIP_FORMS:
                raise SettingsError(f"{origin}: `{key}` must be one of {', '.join(repr(f) for f in LAYER_SKIP_FORMS)}")
            values[attribute] = value
        elif attribute == "cuda_graphs":
            if value not in CUDA_GRAPH_SCOPES:
                raise SettingsError(f"{origin}: `{key}` must be one of {', '.join(repr(f) for f in CUDA_GRAPH_SCOPES)}")
            values[attribute] = value
        elif attribute == "torch_version":
            version = parse_torch_version(value) if isinstance(value, str) else None
            if version is None:
                raise SettingsError(f'{origin}: `{key}` must be a torch release, e.g. "2.10" or "2.13.0"')
            values[attribute] = version
        elif attribute == "max_file_size_kb":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SettingsError(f"{origin}: `{key}` must be a whole number of kilobytes (0: no limit)")
            values[attribute] = value
        elif not isinstance(value, bool):
            raise SettingsError(f"{origin}: `{key}` must be true or false")
        else:
            values[attribute] = value
    return values


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a `[tool.graphmend]` table."""
    directory = start if start.is_dir() else start.parent
    for candidate_dir in [directory, *directory.parents]:
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file() and untrusted.ours(candidate):  # not another user's, planted above
            try:
                if "graphmend" in untrusted.read_text(candidate, MAX_SETTINGS_BYTES):
                    return candidate
            except OSError:
                continue
    return None


def load_pyproject(path: Path) -> Settings:
    try:
        data = tomllib.loads(untrusted.read_bytes(path, MAX_SETTINGS_BYTES).decode("utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:
        raise SettingsError(f"{path}: invalid TOML: nested too deeply") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"{path}: cannot read: {error}") from None
    table = data.get("tool", {}).get("graphmend", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.graphmend] must be a table")
    values = _validate(table, origin=f"{path} [tool.graphmend]")
    notes: tuple[tuple[str, str], ...] = ()
    if values.pop("apply_proved_fixes", False):
        notes += (
            (
                "apply_proved_fixes",
                f"{path}: `apply-proved-fixes` is not taken from a project's settings (a repository could ship it with "
                "a proof of its own); pass `graphmend fix --apply-proved-fixes` to apply the fixes your runs proved",
            ),
        )
    size = values.get("max_file_size_kb")
    if size is not None and (size == 0 or size > DEFAULT_MAX_FILE_SIZE_KB):
        values["max_file_size_kb"] = DEFAULT_MAX_FILE_SIZE_KB
        notes += (
            (
                "max_file_size_kb",
                f"{path}: `max-file-size-kb` = {size} is not taken from a project's settings (a repository could make "
                f"every check of it run for minutes on a file it ships); files over {DEFAULT_MAX_FILE_SIZE_KB} KB are "
                "skipped; pass `--max-file-size-kb` to analyse larger ones",
            ),
        )
    if values.get("library_paths"):
        kept, dropped = _project_library_paths(path.parent, values["library_paths"])
        values["library_paths"] = kept
        if dropped:
            notes += (
                (
                    "library_paths",
                    f"{path}: `library-paths` outside the project and the interpreter's libraries are not taken from a "
                    f"project's settings ({', '.join(dropped)}); pass `--library-path` to search them",
                ),
            )
    return replace(Settings(**values), source=path, notes=notes)


def _project_library_paths(project: Path, folders: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """A project's `library-paths`, each relative to its pyproject.toml: those in the project or in
    the interpreter's own library folders are kept (a repository's setting must not make graphmend
    read, and quote, files elsewhere: issue 68), the others returned to be said."""
    top = project.resolve()
    paths = sysconfig.get_paths()
    roots = [top, *(Path(paths[k]).resolve() for k in ("purelib", "platlib", "stdlib") if k in paths)]
    roots += [Path(p).resolve() for p in (sys.prefix, sys.base_prefix, os.environ.get("VIRTUAL_ENV")) if p]
    kept: list[str] = []
    dropped: list[str] = []
    for folder in folders:
        real = (top / folder).resolve()
        (kept if any(real == root or root in real.parents for root in roots) else dropped).append(str(real))
    return tuple(kept), dropped


# The one settings cache every front reads through: per folder, the settings and the stamps
# (size, modification time) of every file they were read from or could be (each pyproject.toml and
# requirements.txt at or above the folder). A stamp that changes reads them again, so an edit to a
# pyproject.toml applies at the next look-up, in the editor as in a CLI run.
_BY_FOLDER: dict[Path, tuple[tuple[tuple[int, int] | None, ...], Settings]] = {}


def _stamps(directory: Path) -> tuple[tuple[int, int] | None, ...]:
    stamps: list[tuple[int, int] | None] = []
    for folder in [directory, *directory.parents]:
        for name in _PIN_FILES:
            try:
                found = (folder / name).stat()
                stamps.append((found.st_size, found.st_mtime_ns))
            except OSError:
                stamps.append(None)
    return tuple(stamps)


def settings_for(path: Path) -> Settings:
    """Settings that apply to a file or directory: its nearest pyproject.toml, else defaults; the
    torch release, when none is set, from the project's pins (`pinned_torch_version`). Read once
    per folder while those files are unchanged (SettingsError, raised each time, is not kept)."""
    resolved = path.resolve()
    directory = resolved if resolved.is_dir() else resolved.parent
    stamps = _stamps(directory)
    cached = _BY_FOLDER.get(directory)
    if cached is not None and cached[0] == stamps:
        return cached[1]
    pyproject = find_pyproject(directory)
    settings = load_pyproject(pyproject) if pyproject is not None else Settings()
    if settings.torch_version is None:
        pinned = pinned_torch_version(directory)
        if pinned is not None:
            settings = replace(settings, torch_version=pinned)
    _BY_FOLDER[directory] = (stamps, settings)
    return settings
