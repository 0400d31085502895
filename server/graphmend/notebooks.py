"""Jupyter notebooks as one module: code cells in order, IPython syntax masked, positions per cell.

A notebook's code cells run in one namespace (a name defined in cell 2 is known in cell 5), so
they are analysed as one module. Each cell is preceded by a marker comment line, which LibCST
rewrites keep, so the fixed module splits back into cells; IPython's own syntax (`%magic`,
`!shell`, `x = !cmd`, `obj?`, `%%cell_magic`) becomes an indented `pass` carrying a marker and is
put back after a fix. The file is read with nbformat, the format's own library; a fix writes
only the sources of the cells that changed, in the file's own JSON layout.
"""

from __future__ import annotations

import ast
import bisect
import json
import logging
import re
import warnings
from dataclasses import dataclass, replace
from typing import Any, cast

from . import text_diff, untrusted
from .diagnostics import Diagnostic, RelatedLocation, TextEdit
from .source import Position, Range

SUFFIX = ".ipynb"
MAX_NOTEBOOK_DEPTH = 256  # a notebook's JSON (widget states included) nests far less deep
# Markers that do not contain "graphmend", so that the suppression scan (which tokenizes a file
# only when "graphmend" appears in it) costs a notebook nothing.
_CELL_MARKER = "# <<notebook cell {}>>"
_MASK_MARKER = "pass  # <<notebook masked {}>>"
_MARKER_LINE = re.compile(r"^# <<notebook cell (\d+)>>$")
_MASKED_LINE = re.compile(r"^(\s*)pass  # <<notebook masked (\d+)>>$")
# IPython syntax that is not Python: line magics, shell escapes, help, and assignments from them.
_IPYTHON_LINE = re.compile(r"^\s*(?:[%!?]|[\w.\[\], ]+=\s*[%!])|^\s*[\w.]+\?\??\s*$")
# Line magics IPython runs without `%` (automagic, on by default): `pip install x`, `cd data`.
_AUTOMAGIC = re.compile(
    r"^\s*(?:pip|conda|mamba|cd|ls|pwd|env|load_ext|reload_ext|matplotlib|time|timeit|run|"
    r"autoreload|who|whos|reset|history|set_env|pinfo|pycat|rm|mkdir|cat|cp|mv)\b"
)
# Cell magics whose body is Python, run by IPython: only their first line is masked.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})


class NotebookError(ValueError):
    """A file that is not a notebook nbformat can read."""


@dataclass(frozen=True)
class CellMap:
    """Where each code cell's lines are in the notebook's module: `starts[i]` is the 0-based module
    line of the first line of the cell whose 1-based position in the notebook is `numbers[i]`."""

    starts: tuple[int, ...]
    numbers: tuple[int, ...]

    def locate(self, position: Position) -> tuple[int, Position] | None:
        """The cell number and the position in that cell's text; None on a marker line."""
        index = bisect.bisect_right(self.starts, position.line) - 1
        if index < 0:
            return None
        return self.numbers[index], Position(position.line - self.starts[index], position.character)

    def to_cell(self, diagnostic: Diagnostic) -> tuple[int | None, Diagnostic]:
        """The diagnostic in its cell's coordinates, with its cell number. Related locations in this
        notebook move to their cells (their messages name the cell when it differs); the fix
        keeps its edits when they all lie in the finding's cell, and none when it edits other cells
        too (the deferred logger's helper goes after the imports): such a fix is applied to the
        whole notebook."""
        start = self.locate(diagnostic.range.start)
        end = self.locate(diagnostic.range.end)
        if start is None:
            return None, diagnostic
        cell, local_start = start
        local_end = end[1] if end is not None and end[0] == cell else local_start
        related = []
        for item in diagnostic.related:
            where = self.locate(item.range.start) if item.path is None else None
            if where is None:
                related.append(item)
                continue
            other_cell, other_start = where
            other_end = self.locate(item.range.end)
            message = item.message if other_cell == cell else f"cell {other_cell}: {item.message}"
            related.append(
                RelatedLocation(
                    Range(other_start, other_end[1] if other_end and other_end[0] == other_cell else other_start),
                    message,
                    None,
                    item.kind,
                )
            )
        fix = diagnostic.fix
        if fix is not None:
            edits: list[TextEdit] = []
            for edit in fix.edits:
                a, b = self.locate(edit.range.start), self.locate(edit.range.end)
                if a is None or b is None or a[0] != cell or b[0] != cell:
                    edits = []  # it edits other cells too: applied to the whole notebook (`fix`, the editor's action)
                    break
                edits.append(TextEdit(Range(a[1], b[1]), edit.new_text))
            fix = replace(fix, edits=tuple(edits))
        return cell, replace(diagnostic, range=Range(local_start, local_end), related=tuple(related), fix=fix)


@dataclass(frozen=True)
class Notebook:
    """A notebook read for analysis: the module text of its code cells and how to map it back."""

    module: str
    cells: CellMap
    masked: tuple[str, ...]  # the original text of each masked line, by its marker number
    broken: tuple[
        tuple[int, str], ...
    ]  # (module line of its first line, its text) of each code cell that does not parse
    raw: dict[str, Any]  # the file's JSON, as read (key order kept)
    layout: dict[str, Any]  # how the file was written: indent, ensure_ascii, trailing newline
    version: int  # nbformat major version of the file
    inputs: tuple[tuple[str, str], ...] = ()  # the (kind, text) cells it was made from
    verified: bool = True  # False: the module was not parsed (`read(..., verify=False)`); see `verified`

    def changed_sources(self, module: str) -> dict[int, str]:
        """The new source of every code cell that `module` (this notebook's module after a fix)
        changes, by cell number, with the masked lines put back. NotebookError when the cell markers
        did not survive as they were (a rewrite that moved code across cells): nothing is written then."""
        before, after = _split_cells(self.module), _split_cells(module)
        if list(after) != list(before):
            raise NotebookError("the rewrite moved code across cells; the notebook was not changed")
        changed = {}
        for number, lines in after.items():
            if lines == before[number]:
                continue
            restored = []
            for line in lines:
                masked = _MASKED_LINE.match(line)
                restored.append(self.masked[int(masked.group(2))] if masked is not None else line)
            original = self.inputs[number - 1][1]
            # A rewrite ends inserted code with blank lines before the next cell's marker: keep the
            # cell's own ending (its blank lines, its final newline or none).
            while restored and not restored[-1].strip():
                restored.pop()
            ending = len(original.splitlines()) - len(original.rstrip().splitlines())
            changed[number] = "\n".join(restored + [""] * ending) + ("\n" if original.endswith("\n") else "")
        return changed

    def with_sources(self, sources: dict[int, str]) -> str:
        """The file's text with these code cell sources, everything else (outputs, metadata, ids,
        key order, indentation, escaping) as it was."""
        raw = json.loads(json.dumps(self.raw))
        for number, text in sources.items():
            cell = raw["cells"][number - 1]
            cell["source"] = text.splitlines(keepends=True) if isinstance(cell["source"], list) else text
        written = json.dumps(
            raw,
            indent=self.layout["indent"],
            ensure_ascii=self.layout["ensure_ascii"],
            separators=self.layout["separators"],
        )
        return written + ("\n" if self.layout["newline"] else "")


def cell_diff(name: str, changes: list[tuple[int, str, str]]) -> list[str]:
    """A unified diff of the (cell number, before, after) sources, one hunk set per cell named
    `a/NAME:cell N`: what `fix --diff` and the editor's diff command show for a notebook."""
    lines: list[str] = []
    for number, before, after in changes:
        lines += text_diff.unified_diff(
            (before + "\n").splitlines(keepends=True),
            (after + "\n").splitlines(keepends=True),
            f"a/{name}:cell {number}",
            f"b/{name}:cell {number}",
        )
    return lines


def _split_cells(module: str) -> dict[int, list[str]]:
    """The lines of each cell of a notebook's module, by cell number, in order."""
    cells: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in module.splitlines():
        marker = _MARKER_LINE.match(line)
        if marker is not None:
            number = int(marker.group(1))
            if number in cells:
                raise NotebookError(f"the rewrite repeated cell {number}; the notebook was not changed")
            current = cells[number] = []
        elif current is not None:
            current.append(line)
        elif line.strip():
            raise NotebookError("the rewrite put code before the first cell; the notebook was not changed")
    return cells


def module_cells(module: str) -> list[tuple[int, int, str]]:
    """Each code cell of a notebook's module: its number, the 0-based module line of its first line
    and its text (masked lines as masked)."""
    found: list[tuple[int, int, list[str]]] = []
    for index, line in enumerate(module.splitlines()):
        marker = _MARKER_LINE.match(line)
        if marker is not None:
            found.append((int(marker.group(1)), index + 1, []))
        elif found:
            found[-1][2].append(line)
    return [(number, start, "\n".join(lines)) for number, start, lines in found]


def read(text: str, verify: bool = True) -> Notebook:
    """The notebook in `text` (JSON of any nbformat version nbformat reads), as one module. With
    `verify=False` the module is not parsed here (the checker parses it anyway): a caller that
    finds it does not parse asks for `verified(notebook)`."""
    try:
        import nbformat
    except ImportError:  # the server bundled in the VS Code extension goes without it
        raise NotebookError("reading a notebook file needs nbformat (`pip install nbformat`)") from None

    try:
        raw = untrusted.loads(text, MAX_NOTEBOOK_DEPTH, finite=False)
    except ValueError as error:
        raise NotebookError(f"not a notebook: invalid JSON ({error})") from None
    if not isinstance(raw, dict) or "nbformat" not in raw:
        raise NotebookError("not a notebook: no `nbformat` version in the JSON")
    quiet = _Quiet()
    logging.getLogger().addFilter(quiet)
    nbformat_logger = cast(logging.Logger, nbformat.get_logger())  # typed Logger | LoggerAdapter; a Logger
    nbformat_logger.addFilter(quiet)
    try:
        with warnings.catch_warnings():  # nbformat warns about what it fixes itself (missing cell ids)
            warnings.simplefilter("ignore")
            node = nbformat.reads(text, as_version=4, capture_validation_error={})
    except Exception as error:  # nbformat raises many kinds (NBFormatError, KeyError, ...) on bad notebooks
        raise NotebookError(f"not a notebook nbformat can read: {error}") from None
    finally:
        logging.getLogger().removeFilter(quiet)
        nbformat_logger.removeFilter(quiet)
    cells = [(cell.get("cell_type", ""), _cell_text(cell.get("source", ""))) for cell in node.cells]
    return replace(from_cells(cells, verify), raw=raw, layout=_layout(text), version=int(raw.get("nbformat", 4)))


def verified(notebook: Notebook) -> Notebook:
    """The notebook with its module checked cell by cell (automagic, cells that do not parse)."""
    if notebook.verified:
        return notebook
    return replace(
        from_cells(list(notebook.inputs)), raw=notebook.raw, layout=notebook.layout, version=notebook.version
    )


def from_cells(cells: list[tuple[str, str]], verify: bool = True) -> Notebook:
    """A notebook of these (kind, text) cells in order, `"code"` cells analysed: what an editor
    sends (LSP notebook documents), and what a file holds. The whole module is parsed once (unless
    `verify` is False); only when it does not parse is each cell looked at on its own (automagic,
    syntax errors)."""
    raw = {"cells": [{"cell_type": kind, "source": text} for kind, text in cells]}
    for per_cell in (False, True):
        lines: list[str] = []
        masked: list[str] = []
        starts: list[int] = []
        numbers: list[int] = []
        broken: list[tuple[int, str]] = []
        for number, (kind, source) in enumerate(cells, start=1):
            if kind != "code":
                continue
            lines.append(_CELL_MARKER.format(number))
            starts.append(len(lines))
            numbers.append(number)
            cell_masks: list[str] = []
            cell_lines = _masked_cell(source, cell_masks, len(masked))
            if per_cell and not _parses(cell_lines):
                # Automagic lines (`pip install x`) only where the cell does not parse without
                # them: a line such as `env=env)` inside a call must stay Python.
                cell_masks = []
                cell_lines = _masked_cell(source, cell_masks, len(masked), automagic=True)
                if not _parses(cell_lines):  # Jupyter runs the other cells: analyse them, report this one
                    broken.append((len(lines), "\n".join(_masked_cell(source, [], len(masked)))))
                    cell_masks = []
                    cell_lines = _masked_cell(source, cell_masks, len(masked), whole=True)
            masked.extend(cell_masks)
            lines.extend(cell_lines)
        module = "\n".join(lines) + "\n"
        if per_cell or not verify or _parses([module]):
            break
    return Notebook(
        module,
        CellMap(tuple(starts), tuple(numbers)),
        tuple(masked),
        tuple(broken),
        raw,
        _DEFAULT_LAYOUT,
        4,
        tuple(cells),
        verify or per_cell,
    )


_DEFAULT_LAYOUT = {"indent": 1, "ensure_ascii": False, "separators": (",", ": "), "newline": True}  # nbformat's


def _cell_text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def _masked_cell(
    source: str, masked: list[str], first_mask: int, whole: bool = False, automagic: bool = False
) -> list[str]:
    """The cell's lines with IPython syntax replaced by masks numbered from `first_mask` (the
    originals appended to `masked`); a cell that is not Python (`%%bash`) is masked whole, as
    Jupyter would not run it as Python."""
    lines = source.splitlines()
    first = lines[0].strip() if lines else ""
    magic = first[2:].split(maxsplit=1)[0] if first.startswith("%%") and len(first) > 2 else None
    whole = whole or (magic is not None and magic not in _PYTHON_CELL_MAGICS)
    out = []
    continued = False  # the line before was IPython syntax ending in `\`: this one belongs to it
    for index, line in enumerate(lines):
        ipython = (_IPYTHON_LINE.match(line) or (automagic and _AUTOMAGIC.match(line))) and not _is_python(line)
        if whole or continued or (index == 0 and magic is not None) or ipython:
            indent = "" if whole or continued else line[: len(line) - len(line.lstrip())]  # in a block: stay in it
            out.append(indent + _MASK_MARKER.format(first_mask + len(masked)))
            masked.append(line)
            continued = line.rstrip().endswith("\\")
        else:
            out.append(line)
    return out


def _parses(lines: list[str]) -> bool:
    try:
        ast.parse("\n".join(lines))
        return True
    except (SyntaxError, ValueError):
        return False


def _is_python(line: str) -> bool:
    """A line that matched the IPython patterns but is Python all the same (`x = %s` in a string...)."""
    try:
        ast.parse(line.strip())
        return True
    except SyntaxError:
        return False


def _layout(text: str) -> dict[str, Any]:
    """The JSON layout a file was written with (nbformat's: indent 1, `": "`, no ASCII escaping,
    a final newline), to write it back the same way."""
    body = text.rstrip("\n")
    if "\n" in body:
        second = body.split("\n", 2)[1]
        indent: int | None = len(second) - len(second.lstrip(" "))
        separators = (",", ": ")
    else:
        indent, separators = None, ((",", ":") if '":' in body and '": ' not in body else (", ", ": "))
    ascii_only = text.isascii()
    return {
        "indent": indent,
        "ensure_ascii": ascii_only and "\\u" in text,
        "separators": separators,
        "newline": text.endswith("\n"),
    }


class _Quiet(logging.Filter):
    """Keeps nbformat's "Notebook JSON is invalid" log lines away from the user: graphmend reads
    what nbformat reads, and reports problems its own way."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Notebook JSON is invalid" not in record.getMessage()


_SOURCE_KEY = re.compile(r'"source"\s*:\s*(\[)?')


def cell_lines_in_file(text: str) -> list[tuple[int, int] | None]:
    """Per cell (in order): the 0-based line of the `.ipynb` file that holds its first source line,
    and how many source lines it has, for outputs that point into the file as stored (GitHub
    annotations, SARIF): nbformat writes each source line as one JSON string on its own line. None
    for a cell not laid out so (a source as one string, a one-line array), and no cells at all for
    a file whose "source" keys cannot be matched to its cells (one in metadata, invalid JSON)."""
    try:
        cells = untrusted.loads(text, MAX_NOTEBOOK_DEPTH, finite=False).get("cells", [])
    except (ValueError, AttributeError):
        return []
    arrays = [m for m in _SOURCE_KEY.finditer(text) if m.group(1)]
    listed = [isinstance(c.get("source"), list) for c in cells]
    if len(arrays) != sum(listed):
        return []  # a "source" key elsewhere (metadata): the match would be ambiguous
    matches = iter(arrays)
    found: list[tuple[int, int] | None] = []
    for cell, is_list in zip(cells, listed):
        match = next(matches) if is_list else None
        if match is None or "\n" not in text[match.end() :].split("]", 1)[0]:
            found.append(None)  # a source as one string, or a one-line array
        else:
            found.append((text.count("\n", 0, match.end()) + 1, len(cell["source"])))
    return found
