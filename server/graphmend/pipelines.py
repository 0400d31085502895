"""The pipelines behind `check` and `fix`: one text, one file, and many files with their project
built once (`assemble_project`, the one way every front builds it), on `jobs` processes with the
cache."""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import notebooks
from .cache import Cache
from .checker import SYNTAX_ERROR_CODE, check_and_summarize, check_text, over_size_limit
from .diagnostics import Applicability, Diagnostic, Fix
from .files import (
    SourceError,
    decode_notebook,
    decode_source,
    discover_python_files,
    is_notebook,
    iter_settings,
    notebook_from_text,
    project_files,
    read_bytes,
    read_notebook,
    read_source,
    write_atomically,
)
from .fixes import apply_fixes
from .project import ModuleSummary, Project, summarize
from .project.libraries import LibraryFinder, default_search_paths
from .proof_records import PROVED, file_verdicts
from .record.newest import newest_file_run
from .regions import ProjectContext
from .semantics import module_name_for
from .settings import Settings
from .source import Position, Range, SourceText
from .units import UnitCache


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
    `cache` the units of the document's previous version (an editor's), reused where unchanged.
    The newest recorded run of the project is in the analysis where the `runs` setting is on."""
    settings = settings or Settings()
    return check_text(text, path, settings, with_newest_run(context or ProjectContext(), path, settings), cache)


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
        placed.append(replace(local, data=replace(local.data, cell=cell)) if cell is not None else local)
    return sorted(placed, key=lambda d: (d.data.cell or 0, d.range.start))


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
    context = with_newest_run(context or ProjectContext(), path, settings)
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
    if not settings.follow_libraries:
        return Project(summaries), []
    hidden_settings = _hidden_settings(settings)

    def check_hidden(work: list[tuple[str, ProjectContext]]) -> dict[str, tuple[Diagnostic, ...]]:
        jobs_ = [(Path(path), hidden_settings, cache, context) for path, context in work]
        return {str(result.path): result.diagnostics for result in _map(_check_file_job, jobs_, jobs)}

    project = Project(summaries, library_loader(settings, cache), reported, check_hidden)
    return project, [FileResult(Path(path), diagnostics) for path, diagnostics in project.hidden_findings.items()]


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


def context_for(project: Project, path: Path, settings: Settings) -> ProjectContext:
    """What the project, and the newest recorded run, say about the file at `path`."""
    return with_newest_run(project.context_for(os.path.realpath(path)), path, settings)


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
        if first[index][0].error is None and (context := context_for(project, path, settings)) != ProjectContext()
    ]
    results = [result for result, _ in first]
    total += len(again)
    for (index, _), result in zip(again, _map(_check_file_job, [job for _, job in again], jobs, advance)):
        results[index] = result
    return results + in_libraries if main.report_library_files else results


def with_newest_run(context: ProjectContext, path: Path | None, settings: Settings) -> ProjectContext:
    """`context` with what the newest recorded run of the project at `path` met in the file, and the
    verdicts its proofs gave fixes there, where the `runs` setting is on: the one way a run enters an
    analysis (the checker takes it from there, `recorded.py`, `proof_records.py`), for check, fix,
    the standard input and the editor alike."""
    if path is None or not settings.runs or context.run is not None or context.proofs:
        return context
    run = newest_file_run(path)
    proofs = file_verdicts(path)
    return replace(context, run=run, proofs=proofs) if run is not None or proofs else context


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


MAX_FIX_ROUNDS = 100  # as Ruff: nested `if`s are fixed one level per round, inner first


@dataclass(frozen=True)
class FixResult:
    path: Path | None
    original: str
    fixed: str
    applied: int  # fixes applied over all rounds
    remaining: tuple[Diagnostic, ...]  # what is still reported in the fixed text
    error: str | None = None
    internal_error: bool = False  # the error is graphmend's own bug (a rewrite that did not parse)
    converged: bool = True  # False: fixes still applied after MAX_FIX_ROUNDS rounds (run `fix` again)


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
    outer one). Unsafe fixes are applied only when asked for (or, with `apply-proved-fixes`, proved).
    """
    settings = settings or Settings()
    current, applied = text, 0
    diagnostics = check_source(current, path, settings, context)
    if any(d.code == SYNTAX_ERROR_CODE for d in diagnostics):
        return FixResult(path, text, text, 0, tuple(diagnostics), error="does not parse; not changed")
    for _ in range(MAX_FIX_ROUNDS):
        fixes = _fixes_to_apply(diagnostics, unsafe, settings.apply_proved_fixes)
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
    else:  # every round applied something: more may be left
        return FixResult(
            path,
            text,
            current,
            applied,
            tuple(diagnostics),
            converged=not _fixes_to_apply(diagnostics, unsafe, settings.apply_proved_fixes),
        )
    return FixResult(path, text, current, applied, tuple(diagnostics))


def _fixes_to_apply(diagnostics: Iterable[Diagnostic], unsafe: bool, proved: bool = False) -> list[Fix]:
    """The fixes a fix run applies: the safe ones, with `unsafe` the unsafe ones too, and with
    `proved` (the `apply-proved-fixes` setting) the unsafe ones the user's run proved."""
    allowed = {Applicability.SAFE, Applicability.UNSAFE} if unsafe else {Applicability.SAFE}
    return [
        d.fix
        for d in diagnostics
        if d.fix is not None
        and (d.fix.applicability in allowed or (proved and d.fix.applicability is Applicability.UNSAFE and _proved(d)))
    ]


def _proved(diagnostic: Diagnostic) -> bool:
    return diagnostic.data.proof is not None and diagnostic.data.proof.verdict == PROVED


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
        data = read_bytes(path)
        text, encoding = (decode_notebook(data), "utf-8") if notebook else decode_source(data)
    except SourceError as error:
        return FixResult(path, "", "", 0, (), error=str(error))
    context = with_newest_run(context or ProjectContext(), path, settings)
    cached = cache.get(cache.key(path, data, settings, context)) if cache is not None else None
    if cached is not None and not _fixes_to_apply(cached, unsafe, settings.apply_proved_fixes):
        return FixResult(path, text, text, 0, tuple(cached))
    result = (fix_notebook_text if notebook else fix_source)(text, path, settings, unsafe, context)
    if write and result.error is None and result.fixed != text:
        # Through a symbolic link to the file it names: the link stays a link.
        write_atomically(Path(os.path.realpath(path)) if path.is_symlink() else path, result.fixed, encoding)
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
        [(path, settings, unsafe, write, context_for(project, path, settings), cache) for path, settings in work],
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
    left = tuple(check_notebook(after, path, settings, context))
    return FixResult(path, text, fixed, result.applied, left, converged=result.converged)
