"""The one entry point every front uses (CLI, language server, tests): text or paths in, diagnostics out."""

from __future__ import annotations

import ast
import io
import os
import stat
import tempfile
import tokenize
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import notebooks
from .cache import Cache
from .checker import NOT_ANALYSED_CODES, SYNTAX_ERROR_CODE, check_and_summarize, check_text, over_size_limit
from .diagnostics import Applicability, Diagnostic, Fix
from .fixes import apply_fixes
from .project import ModuleSummary, Project, summarize
from .project.libraries import LibraryFinder, default_search_paths
from .project.library_calls import called_findings, hidden_files, reached_from_elsewhere
from .regions import ProjectContext
from .rule_docs import rule_page, rule_pages
from .rules import RULES, RULES_BY_CODE
from .rules.base import Family
from .semantics import module_name_for
from .settings import Settings, SettingsError, settings_for
from .source import Position, Range, SourceText
from .units import UnitCache

__all__ = [
    "RULES",
    "RULES_BY_CODE",
    "Diagnostic",
    "Family",
    "FileResult",
    "FixResult",
    "ModuleSummary",
    "Project",
    "ProjectContext",
    "Settings",
    "SettingsError",
    "SourceError",
    "build_project",
    "check_paths",
    "check_and_summarize",
    "check_source",
    "decode_notebook",
    "decode_source",
    "context_for",
    "Skipped",
    "UnitCache",
    "discover",
    "discover_python_files",
    "fix_file",
    "fix_paths",
    "fix_source",
    "project_files",
    "read_source",
    "rule_page",
    "rule_pages",
    "summarize_file",
    "summarize_source",
    "settings_for",
    "too_large",
    "unknown_codes",
]

# Every code a finding can have: the rules', and the notes on files not analysed (GM001, GM002).
KNOWN_CODES = tuple(sorted({rule.code for rule in RULES} | NOT_ANALYSED_CODES))


def unknown_codes(codes: Iterable[str]) -> list[str]:
    """The codes or prefixes in `codes` that select no finding (`GM999`, `GM6`): a typo in
    `--select` must not pass silently as "nothing to report"."""
    return [code for code in codes if not any(known.startswith(code.strip().upper()) for known in KNOWN_CODES)]


SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "build",
        "dist",
        "node_modules",
        ".eggs",
        "site-packages",
        ".ipynb_checkpoints",
    }
)


class SourceError(Exception):
    """A file that is not Python text graphmend can read (binary, undecodable, unreadable)."""


@dataclass(frozen=True)
class FileResult:
    path: Path
    diagnostics: tuple[Diagnostic, ...] = ()
    error: str | None = None  # the file could not be read; nothing was analysed


def check_source(
    text: str,
    path: Path | None = None,
    settings: Settings | None = None,
    context: ProjectContext | None = None,
    cache: UnitCache | None = None,
) -> list[Diagnostic]:
    """Diagnostics for one file's text. Never runs or imports the code; never raises on bad code.
    `context` is what the rest of the project compiles or calls in this file (`Project.context_for`);
    `cache` the units of the document's previous version (an editor's), reused where unchanged."""
    return check_text(text, path, settings, context, cache)


def summarize_source(text: str, path: Path, settings: Settings | None = None) -> ModuleSummary | None:
    """The file's part of the project graph; None when it is not analysed (too large, unparsable)."""
    settings = settings or Settings()
    if over_size_limit(text, settings) is not None:
        return None
    source = SourceText(text)
    try:
        tree = ast.parse(source.code)
        return summarize(
            tree, source, Path(os.path.realpath(path)), module_name_for(path), settings.module_forward_is_compiled
        )
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def too_large(text: str, settings: Settings) -> bool:
    """Whether the text is over `max-file-size-kb`: not analysed (check_source gives one GM002 note)."""
    return over_size_limit(text, settings) is not None


def read_source(path: Path) -> str:
    """Read a Python file the way Python would (PEP 263 encoding cookie, BOM), or raise SourceError."""
    return _read_source(path)[0]


def _read_source(path: Path) -> tuple[str, str]:
    """The text and the encoding it was decoded with."""
    return decode_source(_read_bytes(path))


def _read_bytes(path: Path) -> bytes:
    try:
        # Non-blocking open, then a check on what was opened: a FIFO named `x.py` (or one swapped in
        # after discovery) is refused instead of blocking forever.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise SourceError(_unreadable_kind(path) or "not a regular file")
        try:
            return handle.read()
        except OSError as error:
            raise SourceError(f"cannot read: {error.strerror or error}") from None


def decode_source(data: bytes) -> tuple[str, str]:
    """Python source bytes as text the way Python decodes them (PEP 263 cookie, BOM), and the
    encoding used; SourceError for binary or undecodable data."""
    if b"\x00" in data:
        raise SourceError("binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # undecodable first lines, or a cookie naming no known codec
        if str(error).startswith("unknown encoding"):
            raise SourceError(f"unknown source encoding: {error}") from None
        raise SourceError("not valid utf-8 text, and no PEP 263 encoding declaration") from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as error:
        raise SourceError(f"not valid {error.encoding} text at byte {error.start}") from None


def is_notebook(path: Path | None) -> bool:
    return path is not None and path.suffix == notebooks.SUFFIX


def read_notebook(path: Path, verify: bool = True) -> notebooks.Notebook:
    """A Jupyter notebook's code cells as one module (see `notebooks`), or SourceError."""
    return notebook_from_text(decode_notebook(_read_bytes(path)), verify)


def decode_notebook(data: bytes) -> str:
    """A notebook file's bytes as text (JSON is UTF-8, a BOM allowed), or SourceError."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceError(f"not a notebook: not valid utf-8 at byte {error.start}") from None


def notebook_from_text(text: str, verify: bool = True) -> notebooks.Notebook:
    try:
        return notebooks.read(text, verify)
    except notebooks.NotebookError as error:
        raise SourceError(str(error)) from None


def check_notebook(
    notebook: notebooks.Notebook,
    path: Path | None = None,
    settings: Settings | None = None,
    context: ProjectContext | None = None,
) -> list[Diagnostic]:
    """Diagnostics for a notebook's code cells, each in its cell's coordinates with the cell's
    1-based position in the notebook as `data["cell"]`; a cell that does not parse gets its GM001
    and the other cells are analysed without it."""
    diagnostics = check_source(notebook.module, path, settings, context)
    if not notebook.verified and any(d.code == SYNTAX_ERROR_CODE for d in diagnostics):
        notebook = notebooks.verified(notebook)  # a cell with automagic or a syntax error: look cell by cell
        diagnostics = check_source(notebook.module, path, settings, context)
    return place_in_cells(notebook, diagnostics + broken_cell_diagnostics(notebook, path, settings))


def broken_cell_diagnostics(
    notebook: notebooks.Notebook, path: Path | None = None, settings: Settings | None = None
) -> list[Diagnostic]:
    """The GM001 of each code cell that does not parse, in the notebook module's coordinates."""
    return [
        replace(_shifted(d, first_line), message=d.message.replace("this file", "this cell"))
        for first_line, text in notebook.broken
        for d in check_source(text, path, settings)
        if d.code == SYNTAX_ERROR_CODE
    ]


def place_in_cells(notebook: notebooks.Notebook, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics of a notebook's module moved to their cells (`data["cell"]`), in cell order."""
    placed = []
    for diagnostic in diagnostics:
        cell, local = notebook.cells.to_cell(diagnostic)
        placed.append(replace(local, data={**local.data, "cell": cell}) if cell is not None else local)
    return sorted(placed, key=lambda d: (d.data.get("cell") or 0, d.range.start))


def _shifted(diagnostic: Diagnostic, lines: int) -> Diagnostic:
    def move(position: Position) -> Position:
        return Position(position.line + lines, position.character)

    return replace(diagnostic, range=Range(move(diagnostic.range.start), move(diagnostic.range.end)))


def _analyse(
    path: Path, settings: Settings, context: ProjectContext | None, summarize: bool
) -> tuple[list[Diagnostic], ModuleSummary | None]:
    """A file's diagnostics (and, asked for, its summary) from one read and one parse; notebooks
    have no summary (no other module imports them)."""
    if is_notebook(path):  # parsed once, by the checker (`check_notebook` looks cell by cell if it must)
        return check_notebook(read_notebook(path, verify=False), path, settings, context), None
    text = read_source(path)
    if summarize:
        return check_and_summarize(text, path, settings)
    return check_source(text, path, settings, context), None


def check_file(
    path: Path, settings: Settings, cache: Cache | None = None, context: ProjectContext | None = None
) -> FileResult:
    key = None
    if cache is not None:
        try:
            key = cache.key(path, path.read_bytes(), settings, context)
        except OSError:
            key = None
        cached = cache.get(key) if key is not None else None
        if cached is not None:
            return FileResult(path, tuple(cached))
    try:
        diagnostics, _ = _analyse(path, settings, context, summarize=False)
    except SourceError as error:
        return FileResult(path, error=str(error))
    if cache is not None and key is not None:
        cache.put(key, diagnostics)
    return FileResult(path, tuple(diagnostics))


@dataclass(frozen=True)
class Skipped:
    """A path that looked like a Python file but was left alone, and why."""

    path: Path
    reason: str


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[Skipped]]:
    """The Python files and Jupyter notebooks under `paths` (recursively, skipping VCS, virtualenv,
    cache and build folders and what `extend-exclude` names), and what was passed over with its reason.

    Only regular files are read: a FIFO, socket or device named `x.py` would block or never end. A
    symbolic link is followed when its target lies inside one of `paths` (like Black), and reported
    once, under the target's own path when that is found too; a link out of the tree is skipped. A
    file named explicitly is always included, whatever its suffix, when it is a regular file.
    """
    roots = [Path(os.path.realpath(p)) for p in paths]
    found: dict[str, Path] = {}  # real path → the path it is reported under
    skipped: list[Skipped] = []
    settings_by_directory: dict[str, Settings] = {}

    def excluded(path: Path) -> bool:
        """Passed over by the `extend-exclude` of the settings that apply where it lies."""
        directory = str(path.parent)
        if directory not in settings_by_directory:
            try:
                settings_by_directory[directory] = settings_for(path.parent)
            except SettingsError:
                settings_by_directory[directory] = Settings()  # reported when the file's settings are read
        return settings_by_directory[directory].excludes(path)

    def consider(path: Path, explicit: bool) -> None:
        reason = _unreadable_kind(path)
        if reason is not None:
            skipped.append(Skipped(path, reason))
            return
        real = os.path.realpath(path)
        if not explicit and path.is_symlink() and not any(_inside(Path(real), root) for root in roots):
            skipped.append(Skipped(path, f"a symbolic link to {real}, outside the checked tree"))
            return
        if real not in found or (found[real].is_symlink() and not path.is_symlink()):
            found[real] = path

    for root in paths:
        if root.is_dir():
            for directory, subdirectories, files in os.walk(root):
                subdirectories[:] = sorted(
                    d
                    for d in subdirectories
                    if d not in SKIPPED_DIRECTORIES
                    and not (Path(directory, d) / "pyvenv.cfg").exists()
                    and not excluded(Path(directory, d))
                )
                for name in sorted(files):
                    if name.endswith((".py", ".pyi", notebooks.SUFFIX)) and not excluded(Path(directory, name)):
                        consider(Path(directory, name), explicit=False)
        elif root.exists() or root.is_symlink():
            consider(root, explicit=True)
    return list(found.values()), skipped


def discover_python_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The files `discover` finds (what it skips is left out silently)."""
    yield from discover(paths)[0]


def _unreadable_kind(path: Path) -> str | None:
    """Why `path` is not a regular file graphmend can read, or None when it is one."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a broken symbolic link" if path.is_symlink() else "no such file"
    except OSError as error:
        return f"cannot be examined ({error.strerror or error})"
    if stat.S_ISREG(mode):
        return None
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a directory"
        if stat.S_ISDIR(mode)
        else "a device"
    )
    return f"not a regular file ({kind})"


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def project_files(files: Iterable[Path]) -> list[Path]:
    """The files whose summaries make the project of `files`: where Python resolves their imports.
    For a file in a package, every file of its top-level package; for a file in no package (a
    script), the modules beside it and the packages beside it, as `sys.path[0]` would see them."""
    packages: set[Path] = set()
    scripts: set[Path] = set()
    for file in files:
        folder = Path(os.path.realpath(file)).parent
        if (folder / "__init__.py").is_file():
            while (folder.parent / "__init__.py").is_file() and folder.parent != folder:
                folder = folder.parent
            packages.add(folder)
        else:
            scripts.add(folder)
    roots: list[Path] = sorted(packages)
    for folder in sorted(scripts):
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        roots += [
            e
            for e in entries
            if e.name.endswith(".py")
            or (e.is_dir() and e.name not in SKIPPED_DIRECTORIES and (e / "__init__.py").is_file())
        ]
    found = {os.path.realpath(f): f for f in discover(roots)[0] if not is_notebook(f)}  # no one imports a notebook
    for file in files:
        found.setdefault(os.path.realpath(file), file)
    return list(found.values())


def summarize_file(path: Path, settings: Settings, cache: Cache | None = None) -> ModuleSummary | None:
    if is_notebook(path):
        return None  # no other module imports a notebook
    key = _key(cache, path, settings, None, "summary")
    cached = cache.get_summary(key) if cache is not None and key is not None else None
    if cached is not None:
        return cached
    try:
        text = read_source(path)
    except SourceError:
        return None
    summary = summarize_source(text, path, settings)
    if cache is not None and key is not None and summary is not None:
        cache.put_summary(key, summary)
    return summary


def _key(cache: Cache | None, path: Path, settings: Settings, context: ProjectContext | None, kind: str) -> str | None:
    if cache is None:
        return None
    try:
        return cache.key(path, path.read_bytes(), settings, context, kind=kind)
    except OSError:
        return None


def _first_pass(job: tuple[Path, Settings, Cache | None]) -> tuple[FileResult, ModuleSummary | None]:
    """A file checked as if nothing else compiled into it, and its summary, from one read and one
    parse (or from the cache)."""
    path, settings, cache = job
    diagnostics_key = _key(cache, path, settings, ProjectContext(), "diagnostics")
    summary_key = _key(cache, path, settings, None, "summary")
    if cache is not None and diagnostics_key is not None and summary_key is not None:
        cached, summary = cache.get(diagnostics_key), cache.get_summary(summary_key)
        if cached is not None and summary is not None:
            return FileResult(path, tuple(cached)), summary
    try:
        diagnostics, summary = _analyse(path, settings, None, summarize=True)
    except SourceError as error:
        return FileResult(path, error=str(error)), None
    if cache is not None and diagnostics_key is not None and summary_key is not None:
        cache.put(diagnostics_key, diagnostics)
        if summary is not None:
            cache.put_summary(summary_key, summary)
    return FileResult(path, tuple(diagnostics)), summary


def _summarize_job(job: tuple[Path, Settings, Cache | None]) -> ModuleSummary | None:
    return summarize_file(*job)


def build_project(
    files: Iterable[Path],
    overrides: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    cache: Cache | None = None,
) -> Project:
    """The project of `files` (see `project_files`), summarised on `jobs` processes and put together
    as every front does (`assemble_project`): `fix` and the standard input see what `check` sees."""
    files = list(files)
    listed = list(iter_settings(project_files(files), overrides))
    summaries = [s for s in _map(_summarize_job, [(path, settings, cache) for path, settings in listed], jobs) if s]
    reported = [os.path.realpath(path) for path in files]
    main = _project_settings(list(iter_settings(files[:1], overrides)), overrides)
    return assemble_project(summaries, reported, main, cache, jobs)[0]


def assemble_project(
    summaries: Iterable[ModuleSummary],
    reported: Iterable[str],
    settings: Settings,
    cache: Cache | None = None,
    jobs: int | None = 1,
) -> tuple[Project, list[FileResult]]:
    """The one way a project is put together from its files' summaries, for `check`, `fix`, the
    standard input and the language server alike: with `follow-libraries`, the installed packages
    compiled code calls, and the findings those calls lead to given to the `reported` files'
    contexts. Also returns the followed files' own findings compiled code reaches
    (`report-library-files`)."""
    project = Project(summaries, library_loader(settings, cache))
    if not settings.follow_libraries:
        project.reached()
        return project, []
    return project, attach_called_findings(project, reported, settings, cache, jobs)


def _project_settings(checked: list[tuple[Path, Settings]], overrides: Mapping[str, Any] | None) -> Settings:
    """The settings that decide how the project is put together: the first checked file's."""
    return checked[0][1] if checked else Settings().merged(overrides or {})


def _map(function: Any, work: list[Any], jobs: int | None, advance: Callable[[], None] | None = None) -> list[Any]:
    """`function` over `work`, on a process pool when there is enough of it; `advance` after each item."""
    jobs = jobs or os.cpu_count() or 1
    results: list[Any] = []
    if jobs <= 1 or len(work) < 16:
        for item in work:
            results.append(function(item))
            if advance is not None:
                advance()
        return results
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(function, work, chunksize=max(1, len(work) // (jobs * 8))):
            results.append(result)
            if advance is not None:
                advance()
    return results


def context_for(project: Project, path: Path) -> ProjectContext:
    return project.context_for(os.path.realpath(path))


def _check_file_job(job: tuple[Path, Settings, Cache | None, ProjectContext]) -> FileResult:
    return check_file(*job)


def check_paths(
    paths: Iterable[Path],
    overrides: Mapping[str, Any] | None = None,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[FileResult]:
    """Check every Python file under `paths` with its own pyproject settings plus `overrides`,
    on `jobs` processes, skipping files whose diagnostics are in the cache at `cache_dir`. Calls
    and compile sites across the files' project (`project_files`) count. `progress(done, total)`
    is told of each file read, summarised or analysed again (the total grows with the passes).

    Raises SettingsError when a pyproject.toml or an override is invalid.
    """
    cache = Cache(cache_dir) if cache_dir is not None else None
    files = list(discover_python_files(paths))
    checked = list(iter_settings(files, overrides))
    reported = {os.path.realpath(path) for path in files}
    others = list(
        iter_settings([path for path in project_files(files) if os.path.realpath(path) not in reported], overrides)
    )
    done, total = 0, len(checked) + len(others)

    def advance() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    first = _map(_first_pass, [(path, settings, cache) for path, settings in checked], jobs, advance)
    summaries = [summary for _, summary in first if summary is not None]
    summaries += [s for s in _map(_summarize_job, [(p, st, cache) for p, st in others], jobs, advance) if s is not None]
    main = _project_settings(checked, overrides)
    project, in_libraries = assemble_project(summaries, (os.path.realpath(p) for p, _ in checked), main, cache, jobs)
    # Files that other files compile or call into are analysed again, with what the project says.
    again = [
        (index, (path, settings, cache, context))
        for index, (path, settings) in enumerate(checked)
        if first[index][0].error is None and (context := context_for(project, path)) != ProjectContext()
    ]
    results = [result for result, _ in first]
    total += len(again)
    for (index, _), result in zip(again, _map(_check_file_job, [job for _, job in again], jobs, advance)):
        results[index] = result
    return results + in_libraries if main.report_library_files else results


def library_loader(settings: Settings, cache: Cache | None = None) -> Callable[[str], ModuleSummary | None] | None:
    """How the project summarises an installed package's module (None when `follow-libraries` is off)."""
    if not settings.follow_libraries:
        return None
    roots = (*(Path(os.path.realpath(p)) for p in settings.library_paths), *default_search_paths())
    finder = LibraryFinder(roots)
    hidden = _hidden_settings(settings)

    def load(name: str) -> ModuleSummary | None:
        path = finder.find(name)
        return summarize_file(path, hidden, cache) if path is not None else None

    return load


def _hidden_settings(settings: Settings) -> Settings:
    """Settings for a file whose findings are reported at the user's calls: only what the user's
    compiled code reaches counts there, not its own `forward`s."""
    return replace(settings, module_forward_is_compiled=False, per_file_ignores=())


def attach_called_findings(
    project: Project, reported: Iterable[str], settings: Settings, cache: Cache | None = None, jobs: int | None = 1
) -> list[FileResult]:
    """Check the files compiled code reaches that are not `reported` (libraries; for the CLI also
    project files outside the checked paths) and give each reported file, in its context, the
    findings its calls lead to (`library_calls.py`). Returns those files' own findings that the
    reported files' compiled code reaches (for `report-library-files`)."""
    hidden = hidden_files(project, reported)
    contexts = {path: project.context_for(path) for path in hidden}
    hidden_settings = _hidden_settings(settings)
    work = [(Path(path), hidden_settings, cache, context) for path, context in contexts.items() if context.entries]
    found: dict[str, tuple[Diagnostic, ...]] = dict.fromkeys(hidden, ())
    for result in _map(_check_file_job, work, jobs) if work else ():
        found[str(result.path)] = result.diagnostics
    project.called_findings = called_findings(project, found, contexts)
    own = {path: reached_from_elsewhere(diagnostics, contexts[path]) for path, diagnostics in found.items()}
    return [FileResult(Path(path), diagnostics) for path, diagnostics in own.items() if diagnostics]


MAX_FIX_ROUNDS = 10


@dataclass(frozen=True)
class FixResult:
    path: Path | None
    original: str
    fixed: str
    applied: int  # fixes applied over all rounds
    remaining: tuple[Diagnostic, ...]  # what is still reported in the fixed text
    error: str | None = None
    internal_error: bool = False  # the error is graphmend's own bug (a rewrite that did not parse)


def fix_source(
    text: str,
    path: Path | None = None,
    settings: Settings | None = None,
    unsafe: bool = False,
    context: ProjectContext | None = None,
) -> FixResult:
    """Apply fixes until none is left (or MAX_FIX_ROUNDS); never returns text that does not parse,
    and leaves text that does not parse as it is.

    Fixes are applied in rounds because one rewrite can enable another (an inner `if`, then the
    outer one). Unsafe fixes are applied only when asked for.
    """
    current, applied = text, 0
    diagnostics = check_source(current, path, settings, context)
    if any(d.code == SYNTAX_ERROR_CODE for d in diagnostics):
        return FixResult(path, text, text, 0, tuple(diagnostics), error="does not parse; not changed")
    for _ in range(MAX_FIX_ROUNDS):
        fixes = _fixes_to_apply(diagnostics, unsafe)
        if not fixes:
            break
        candidate, count = apply_fixes(current, fixes)
        if candidate == current or count == 0:
            break
        try:
            ast.parse(candidate)
        except (SyntaxError, ValueError, RecursionError):
            return FixResult(
                path,
                text,
                text,
                0,
                tuple(check_source(text, path, settings, context)),
                error="a rewrite produced code that does not parse; nothing was changed (please report this)",
                internal_error=True,
            )
        current, applied = candidate, applied + count
        diagnostics = check_source(current, path, settings, context)
    return FixResult(path, text, current, applied, tuple(diagnostics))


def _fixes_to_apply(diagnostics: Iterable[Diagnostic], unsafe: bool) -> list[Fix]:
    """The fixes a fix run applies: the safe ones, and with `unsafe` the unsafe ones too."""
    allowed = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}
    return [d.fix for d in diagnostics if d.fix is not None and d.fix.applicability in allowed]


def fix_file(
    path: Path,
    settings: Settings,
    unsafe: bool = False,
    write: bool = True,
    context: ProjectContext | None = None,
    cache: Cache | None = None,
) -> FixResult:
    """Fix one file; with `write`, replace it atomically (temp file + rename) when it changed. A
    file whose diagnostics `check` cached, for these bytes, settings and context, with no fix to
    apply is not analysed again."""
    notebook = is_notebook(path)
    try:
        data = _read_bytes(path)
        text, encoding = (decode_notebook(data), "utf-8") if notebook else decode_source(data)
    except SourceError as error:
        return FixResult(path, "", "", 0, (), error=str(error))
    cached = cache.get(cache.key(path, data, settings, context)) if cache is not None else None
    if cached is not None and not _fixes_to_apply(cached, unsafe):
        return FixResult(path, text, text, 0, tuple(cached))
    result = (fix_notebook_text if notebook else fix_source)(text, path, settings, unsafe, context)
    if write and result.error is None and result.fixed != text:
        # Through a symbolic link to the file it names: the link stays a link.
        _write_atomically(Path(os.path.realpath(path)) if path.is_symlink() else path, result.fixed, encoding)
    return result


def _fix_file_job(job: tuple[Path, Settings, bool, bool, ProjectContext, Cache | None]) -> FixResult:
    return fix_file(*job)


def fix_paths(
    files: Iterable[Path],
    overrides: Mapping[str, Any] | None = None,
    unsafe: bool = False,
    write: bool = True,
    jobs: int | None = None,
    cache_dir: Path | None = None,
) -> list[FixResult]:
    """Fix `files` (as `discover` found them) on `jobs` processes, in the project `check` builds
    (`build_project`: with `follow-libraries`, the findings library calls lead to remain too), with
    `check`'s cache. Results in the order of `files`.

    Raises SettingsError when a pyproject.toml or an override is invalid.
    """
    files = list(files)
    cache = Cache(cache_dir) if cache_dir is not None else None
    work = list(iter_settings(files, overrides))
    project = build_project(files, overrides, jobs, cache)
    return _map(
        _fix_file_job,
        [(path, settings, unsafe, write, context_for(project, path), cache) for path, settings in work],
        jobs,
    )


def fix_notebook_text(
    text: str,
    path: Path | None = None,
    settings: Settings | None = None,
    unsafe: bool = False,
    context: ProjectContext | None = None,
) -> FixResult:
    """`fix_source` for a notebook's JSON text: its code cells fixed as one module, the cells that
    changed written back into the JSON (outputs, metadata, ids and layout kept; unchanged when
    nothing changed). `remaining` is in cell coordinates, like `check_notebook`."""
    try:
        notebook = notebook_from_text(text)
    except SourceError as error:
        return FixResult(path, text, text, 0, (), error=str(error))
    result = fix_source(notebook.module, path, settings, unsafe, context)
    if result.error is not None and result.fixed == notebook.module:
        remaining = check_notebook(notebook, path, settings, context)
        return FixResult(path, text, text, 0, tuple(remaining), result.error, result.internal_error)
    if notebook.version < 4 and result.fixed != notebook.module:
        return FixResult(
            path,
            text,
            text,
            0,
            tuple(check_notebook(notebook, path, settings, context)),
            error=f"a version {notebook.version} notebook is checked, not fixed; save it as version 4 first",
        )
    try:
        changed = notebook.changed_sources(result.fixed)
    except notebooks.NotebookError as error:
        return FixResult(path, text, text, 0, tuple(check_notebook(notebook, path, settings, context)), str(error))
    fixed = notebook.with_sources(changed) if changed else text
    after = notebook_from_text(fixed) if changed else notebook
    return FixResult(path, text, fixed, result.applied, tuple(check_notebook(after, path, settings, context)))


def _write_atomically(path: Path, text: str, encoding: str) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".graphmend")
    try:
        with os.fdopen(descriptor, "w", encoding=encoding, newline="") as handle:
            handle.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def iter_settings(paths: Iterable[Path], overrides: Mapping[str, Any] | None = None) -> Iterator[tuple[Path, Settings]]:
    """Each Python file under `paths` with its settings (nearest pyproject.toml plus `overrides`)."""
    settings_by_directory: dict[Path, Settings] = {}
    for path in discover_python_files(paths):
        directory = path.parent.resolve()
        if directory not in settings_by_directory:
            settings_by_directory[directory] = settings_for(directory).merged(overrides or {})
        yield path, settings_by_directory[directory].for_file(path)
