"""The one entry point every front uses (CLI, language server, notebooks, tests): text or paths in,
diagnostics and fixes out. A façade: the fronts (`cli.py`, `lsp/`) import graphmend's core only
from here (`tests/test_layers.py`), so that what they may rely on is this list, and it lists only
what they use (`tests/test_layers.py`).

- `pipelines`: `check_source`/`check_paths`, `fix_source`/`fix_paths`, notebooks, and
  `assemble_project`, the one way a project is built;
- `files`: discovery, reading (Python's decoding, notebooks), per-file settings;
- the data they return (`diagnostics`, `source` positions), the rules, settings, and the renderers
  of `reporting` and `notebooks` the fronts print and write with.
"""

from __future__ import annotations

from collections.abc import Iterable

from . import notebooks, reporting, run_report
from .checker import NOT_ANALYSED_CODES, too_large_note
from .diagnostics import Applicability, Diagnostic, FindingData, Fix, Severity, TextEdit
from .files import (
    SourceError,
    decode_notebook,
    decode_source,
    discover,
    is_notebook,
    notebook_from_text,
    read_notebook,
    read_source,
)
from .fixes import apply_fixes
from .pipelines import (
    assemble_project,
    broken_cell_diagnostics,
    build_project,
    check_notebook,
    check_paths,
    check_source,
    context_for,
    fix_notebook_text,
    fix_paths,
    fix_source,
    summarize_file,
    summarize_source,
    too_large,
)
from .project import ModuleSummary, Project
from .proof_records import project_relative
from .prove.command import prove_command
from .prove.command import report as proof_report
from .record.baseline import compare as compare_with_baseline
from .record.baseline import write_baseline
from .record.newest import run_status
from .record.runner import import_trace, record_command
from .record.runs import RUNS, Run, library_roots, new_run, project_root, read_run
from .regions import ProjectContext
from .reporting import (
    OFF_BY_DEFAULT,
    Finding,
    is_recorded,
    plural,
    proof_sentence,
    qualifiers,
    short_clause,
    without_asides,
)
from .rule_docs import rule_page, rule_pages
from .rules import RULES, RULES_BY_CODE
from .rules.base import Family
from .settings import CUDA_GRAPH_SCOPES, DEFAULT_MAX_FILE_SIZE_KB, Settings, SettingsError, settings_for
from .source import Position, Range, SourceText
from .text_diff import unified_diff
from .units import UnitCache
from .untrusted import UntrustedFileError

__all__ = [
    "unified_diff",
    "prove_command",
    "project_relative",
    "proof_sentence",
    "proof_report",
    "is_recorded",
    "run_status",
    "compare_with_baseline",
    "write_baseline",
    "import_trace",
    "new_run",
    "library_roots",
    "RUNS",
    "project_root",
    "read_run",
    "record_command",
    "CUDA_GRAPH_SCOPES",
    "DEFAULT_MAX_FILE_SIZE_KB",
    "UntrustedFileError",
    "KNOWN_CODES",
    "NOT_ANALYSED_CODES",
    "too_large_note",
    "OFF_BY_DEFAULT",
    "RULES",
    "Run",
    "RULES_BY_CODE",
    "Applicability",
    "Diagnostic",
    "Family",
    "Finding",
    "FindingData",
    "Fix",
    "ModuleSummary",
    "Position",
    "Project",
    "ProjectContext",
    "Range",
    "Settings",
    "SettingsError",
    "Severity",
    "SourceError",
    "SourceText",
    "TextEdit",
    "UnitCache",
    "apply_fixes",
    "assemble_project",
    "broken_cell_diagnostics",
    "build_project",
    "check_notebook",
    "check_paths",
    "check_source",
    "context_for",
    "decode_notebook",
    "decode_source",
    "discover",
    "fix_notebook_text",
    "fix_paths",
    "fix_source",
    "is_notebook",
    "notebook_from_text",
    "notebooks",
    "plural",
    "qualifiers",
    "read_notebook",
    "read_source",
    "reporting",
    "run_report",
    "rule_page",
    "rule_pages",
    "settings_for",
    "short_clause",
    "summarize_file",
    "summarize_source",
    "too_large",
    "unknown_codes",
    "without_asides",
]

# Every code a finding can have: the rules', and the notes on files not analysed (GM001, GM002).
KNOWN_CODES = tuple(sorted({rule.code for rule in RULES} | NOT_ANALYSED_CODES))


def unknown_codes(codes: Iterable[str]) -> list[str]:
    """The codes or prefixes in `codes` that select no finding (`GM999`, `GM6`): a typo in
    `--select` must not pass silently as "nothing to report"."""
    return [code for code in codes if not any(known.startswith(code.strip().upper()) for known in KNOWN_CODES)]
