"""How findings are written out: the CLI's output formats, one function each, over one list of findings.

`text` (with the source line and a caret, Ruff's "full"), `concise`, `json`, `json-lines`, `sarif`
(2.1.0, for GitHub code scanning), `github` (workflow commands) and `gitlab` (Code Quality). Every
position a user reads is 1-based; columns count Unicode code points, as the source does.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .diagnostics import GB_DOC_URL, Applicability, Diagnostic, LibraryCall, ProofSeen, Severity, TextEdit
from .rule_docs import plain_text
from .rules import RULES, RULES_BY_CODE
from .rules.base import Family

FORMATS = ("text", "concise", "json", "json-lines", "sarif", "github", "gitlab")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/graphmend/graphmend"


@dataclass(frozen=True)
class Finding:
    """One diagnostic where the user reads it: a file, and for a notebook the cell (1-based) whose
    text the diagnostic's range is in."""

    path: Path
    diagnostic: Diagnostic

    @property
    def cell(self) -> int | None:
        """A notebook finding's cell, as `api.check_notebook` placed it (`data["cell"]`)."""
        return self.diagnostic.data.cell

    @property
    def location(self) -> str:
        """`path:line:column`, with `cell N:` before the line in a notebook."""
        start = self.diagnostic.range.start
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{start.line + 1}:{start.character + 1}"


Lines = Callable[[Finding], list[str] | None]  # the text lines a finding's range is in (its cell's, in a notebook)
FileLine = Callable[[Finding], int | None]  # a notebook finding's 0-based line in the .ipynb as stored


def diagnostic_json(finding: Finding) -> dict[str, Any]:
    """The JSON object of one finding (`json`, `json-lines`)."""
    diagnostic, path = finding.diagnostic, finding.path
    start, end = diagnostic.range.start, diagnostic.range.end
    fix = diagnostic.fix
    return {
        "code": diagnostic.code,
        "path": str(path),
        **({"cell": finding.cell} if finding.cell is not None else {}),
        "line": start.line + 1,
        "column": start.character + 1,
        "end_line": end.line + 1,
        "end_column": end.character + 1,
        "message": diagnostic.message,
        "severity": diagnostic.severity.value,
        "url": diagnostic.url,
        "fix": None
        if fix is None
        else {"title": fix.title, "applicability": fix.applicability.value, "hazards": list(fix.hazards)},
        "related": [
            {
                "path": display_path(r.path) if r.path is not None else str(path),
                "line": r.range.start.line + 1,
                "column": r.range.start.character + 1,
                "message": r.message,
                "kind": r.kind,
            }
            for r in diagnostic.related
        ],
        "only_when": list(diagnostic.data.only_when),  # the configurations it breaks in; [] = every call
        # the condition of only_when that the code's defaults make false (then severity "information")
        **({"off_by_default": diagnostic.data.off_by_default} if diagnostic.data.off_by_default is not None else {}),
        **({"no_fix": diagnostic.data.no_fix} if diagnostic.data.no_fix is not None else {}),  # why no automatic fix
        **({"action": diagnostic.data.action} if diagnostic.data.action is not None else {}),  # what to do instead
        # GM401-GM404: why the code is recorded as CUDA graphs (the compile site, or the setting)
        **({"cuda_graphs": diagnostic.data.cuda_graphs} if diagnostic.data.cuda_graphs is not None else {}),
        # a finding in code outside the checked files, reported at the call that leads there (1-based line)
        **({"library": _library(diagnostic.data.library)} if diagnostic.data.library is not None else {}),
        # the newest recorded run met it (`graphmend record`): how often, which run, when
        **({"run": diagnostic.data.run.to_json()} if diagnostic.data.run is not None else {}),
        # its fix's verdict on the user's run (`graphmend fix --prove`): proved, differs or not exercised
        **({"proof": diagnostic.data.proof.to_json()} if diagnostic.data.proof is not None else {}),
        # a recorded run's own finding (GM5xx): Dynamo's words
        **({"dynamo": diagnostic.data.dynamo} if diagnostic.data.dynamo is not None else {}),
        # a predicted recompile (GM6xx): the guard Dynamo installs and how often the program fails it
        **({"guard": diagnostic.data.guard} if diagnostic.data.guard is not None else {}),
        **({"how_often": diagnostic.data.how_often} if diagnostic.data.how_often is not None else {}),
    }


def _library(found: LibraryCall) -> dict[str, Any]:
    """`data.library` for JSON: where the break is (its file and 1-based line) and the calls to it."""
    return {
        "path": display_path(found.path),
        "line": found.line + 1,
        "callee": found.callee,
        "via": list(found.via),
    }


def display_path(path: str) -> str:
    """A path of another file as the user would write it: relative to the working folder when inside it."""
    try:
        return os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    except ValueError:  # another drive (Windows)
        return path


def _package_path(path: str) -> str:
    """An installed package's file from its package on (`transformers/models/t5/modeling_t5.py`),
    any other as `display_path` gives it."""
    parts = Path(path).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1 :])
    return display_path(path)


# ---------------------------------------------------------------- text


class Style:
    """ANSI styles, or none: colour only on a terminal, `NO_COLOR` off and `FORCE_COLOR` on (no-color.org)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @classmethod
    def for_stream(cls, stream: Any) -> Style:
        if os.environ.get("NO_COLOR"):
            return cls(False)
        if os.environ.get("FORCE_COLOR"):
            return cls(True)
        return cls(bool(getattr(stream, "isatty", lambda: False)()))

    def __call__(self, text: str, *codes: int) -> str:
        return f"\x1b[{';'.join(map(str, codes))}m{text}\x1b[0m" if self.enabled and codes else text


BOLD, RED, CYAN, BLUE, YELLOW = 1, 31, 36, 34, 33


def text(findings: list[Finding], lines: Lines, style: Style, show_source: bool) -> str:
    """One line per finding, `path:line:col: CODE message`; with `show_source`, the line of code
    under it with a caret under the range, and the fix's title."""
    out = []
    for finding in findings:
        d = finding.diagnostic
        marker = " [*]" if d.fix is not None and d.fix.applicability is Applicability.SAFE else ""
        out.append(f"{style(finding.location, BOLD)}: {style(d.code, BOLD, RED)}{marker} {d.message}")
        if not show_source:
            continue
        source = lines(finding)
        start, end = d.range.start, d.range.end
        if source is None or start.line >= len(source):
            continue
        code = source[start.line].rstrip("\r\n")
        width = (end.character if end.line == start.line else len(code)) - start.character
        number = str(start.line + 1)
        gutter = " " * len(number)
        out.append(style(f"{gutter} |", BLUE))
        out.append(f"{style(f'{number} |', BLUE)} {code}")
        out.append(f"{style(f'{gutter} |', BLUE)} {' ' * start.character}{style('^' * max(width, 1), RED)}")
        if d.fix is not None:
            label = {"safe": "fix", "unsafe": "unsafe fix", "display-only": "suggestion"}[d.fix.applicability.value]
            out.append(f"{style(f'{gutter} =', BLUE)} {style('help', BOLD, CYAN)}: {label}: {d.fix.title}")
            if d.fix.hazard:
                out.append(
                    f"{style(f'{gutter} =', BLUE)} {style('note', BOLD, CYAN)}: the fix may change: {d.fix.hazard}"
                )
        for note in notes(d):
            out.append(f"{style(f'{gutter} =', BLUE)} {style('note', BOLD, CYAN)}: {note}")
        out.append("")
    return "\n".join(out)


OFF_BY_DEFAULT = "a plain compile does not meet it"


def qualifiers(diagnostic: Diagnostic, with_proof: bool = True) -> list[str]:
    """What qualifies a finding, kept out of its one-sentence message: when it breaks, and where
    CUDA graphs are asked for (the text output's notes, the hover's paragraph of why)."""
    data = diagnostic.data
    found = []
    if data.only_when:
        found.append("breaks only when " + " and ".join(f"`{c}`" for c in data.only_when))
    if data.off_by_default is not None:
        found.append(f"{OFF_BY_DEFAULT}: `{data.off_by_default}` is false by default")
    if data.cuda_graphs is not None:
        found.append(f"CUDA graphs: {data.cuda_graphs}")
    if data.guard is not None:
        found.append(f"Dynamo guards `{data.guard}` and the program fails it {data.how_often}")
    if data.run is not None:
        did = _RUN_DID.get(data.run.kind, "met it")
        met = f"the run of {_age(data.run.recorded_at)} {did} {plural(data.run.count, 'time')}"
        if data.run.count == 0:  # a predicted recompile in code the run compiled
            found.append(
                f"not met: the run of {_age(data.run.recorded_at)} compiled this code and did not recompile here"
            )
        else:
            found.append(met if is_recorded(diagnostic.code) else f"confirmed: {met}")
    if with_proof and data.proof is not None and diagnostic.fix is not None:
        found.append(f"the fix {proof_sentence(data.proof)}")
    return found


_RUN_DID = {  # what a recorded run's count counts, as the finding's note says it
    "graph_break": "broke the graph here",
    "recompile": "recompiled here",
    "compile_failure": "failed to compile here",
    "cudagraph_skip": "skipped CUDA graphs here",
}


def proof_sentence(proof: ProofSeen) -> str:
    """A fix's verdict on the user's run, as a finding says it: "proved on your run of `python
    train.py` (3 processes, 40 steps, 5 minutes ago)"; a run with no optimizer step counts calls."""
    covered = plural(proof.steps, "step") if proof.steps else plural(proof.calls, "compiled call")
    run = f"your run of `{proof.command}` ({plural(proof.processes, 'process')}, {covered}, {_age(proof.ended)})"
    if proof.verdict == "proved":
        return f"proved on {run}"
    if proof.verdict == "differs":
        first = f": {proof.differences[0]}" if proof.differences else ""
        return f"changes behaviour on {run}{first}"
    return f"not exercised by {run}"


def is_recorded(code: str) -> bool:
    """A recorded run's own finding (GM5xx), not a static rule's."""
    rule = RULES_BY_CODE.get(code)
    return rule is not None and rule.family is Family.RECORDED


def _age(recorded_at: float) -> str:
    """How long ago a run (or a proof) ended, as a person says it."""
    seconds = max(0, int(time.time() - recorded_at))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            return f"{plural(seconds // size, unit)} ago"
    return "a moment ago"


def notes(diagnostic: Diagnostic) -> list[str]:
    """The text output's notes: the qualifiers, and why there is no automatic fix."""
    no_fix = diagnostic.data.no_fix
    action = f"; {diagnostic.data.action}" if diagnostic.data.action is not None else ""
    dynamo = [f"Dynamo: {diagnostic.data.dynamo}"] if diagnostic.data.dynamo is not None else []
    met = [  # the library lines a recorded run met it at
        f"{r.message} ({_package_path(r.path)}:{r.range.start.line + 1})"
        for r in diagnostic.related
        if r.kind == "recorded" and r.path is not None
    ]
    return [
        *qualifiers(diagnostic),
        *dynamo,
        *met,
        *([f"no automatic fix: {no_fix}{action}"] if no_fix is not None else []),
    ]


def without_asides(text: str) -> str:
    """`text` without its parenthesised asides (` (...)` outside code spans)."""
    out: list[str] = []
    depth = 0
    in_code = False
    for index, char in enumerate(text):
        if char == "`" and depth == 0:
            in_code = not in_code
        elif not in_code and char == "(" and (depth or (index > 0 and text[index - 1] == " ")):
            depth += 1
            if depth == 1:
                out.pop()  # the space before the aside
            continue
        elif depth and char == ")":
            depth -= 1
            continue
        if depth == 0:
            out.append(char)
    return "".join(out)


def short_clause(text: str) -> str:
    """A clause without its asides and without the explanation after its colon: what a list read
    whole (Fix All's dialog) says of a hazard; the hover and `--diff` keep the whole clause."""
    short = without_asides(text)
    head, colon, _ = short.partition(": ")
    return head if colon and "`" not in head[-1:] and head.count("`") % 2 == 0 else short


def plural(count: int, noun: str) -> str:
    """`1 graph break`, `2 graph breaks`, `3 unsafe fixes`, `2 processes`."""
    return f"{count} {noun}{'es' if noun.endswith(('s', 'x')) and count != 1 else 's' if count != 1 else ''}"


def statistics(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """Findings per code, most frequent first: count, code, rule name, and how many a fix applies to."""
    counts = Counter(f.diagnostic.code for f in findings)
    fixable = Counter(
        f.diagnostic.code
        for f in findings
        if f.diagnostic.fix is not None and f.diagnostic.fix.applicability is not Applicability.DISPLAY_ONLY
    )
    safe = Counter(
        f.diagnostic.code
        for f in findings
        if f.diagnostic.fix is not None and f.diagnostic.fix.applicability is Applicability.SAFE
    )
    return [
        {
            "code": code,
            "name": RULES_BY_CODE[code].name if code in RULES_BY_CODE else "",
            "count": count,
            "fixable": fixable[code],
            "safe_fixes": safe[code],
        }
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def statistics_text(rows: list[dict[str, Any]], style: Style) -> str:
    """Ruff's layout: count, code, `[*]` when a safe fix applies (`[-]` unsafe only), name."""
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "\n".join(
        f"{row['count']:>{width}}\t{style(row['code'], BOLD, RED)}\t{_marker(row)} {row['name']}" for row in rows
    )


def statistics_legend(rows: list[dict[str, Any]]) -> str:
    """What the markers of `statistics_text` mean, those it used, as the last line (Ruff's habit)."""
    meanings = {
        "[*]": "fixable with `--fix`",
        "[-]": "only with `--fix --unsafe-fixes`",
        "[ ]": "no automatic fix",
    }
    used = {_marker(row) for row in rows}
    return "; ".join(f"{marker} {meaning}" for marker, meaning in meanings.items() if marker in used) + "."


def _marker(row: dict[str, Any]) -> str:
    return "[*]" if row["safe_fixes"] else "[-]" if row["fixable"] else "[ ]"


# ---------------------------------------------------------------- machine formats


def json_lines(findings: list[Finding]) -> str:
    return "\n".join(json.dumps(diagnostic_json(f)) for f in findings)


def github(findings: list[Finding], file_line: FileLine | None = None) -> str:
    """GitHub Actions workflow commands: an annotation on the file and lines of each finding (a
    notebook's on the lines of the `.ipynb` that hold its cell's lines, `file_line`)."""
    levels = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice"}
    out = []
    for finding in findings:
        d = finding.diagnostic
        start, end = d.range.start, d.range.end
        cell = f"cell {finding.cell}: " if finding.cell is not None else ""
        properties = {
            "file": str(finding.path),
            "line": start.line + 1,
            "endLine": end.line + 1,
            "col": start.character + 1,
            "endColumn": end.character + 1,
            "title": f"graphmend ({d.code})",
        }
        if finding.cell is not None:  # the lines of the .ipynb that hold the cell's lines, where known
            stored = file_line(finding) if file_line is not None else None
            properties = {"file": str(finding.path), "title": properties["title"]}
            if stored is not None:
                properties |= {"line": stored + 1, "endLine": stored + 1 + end.line - start.line}
        joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
        out.append(f"::{levels[d.severity]} {joined}::{_escape_data(f'{cell}{d.code} {d.message}')}")
    return "\n".join(out)


def _stored_line(finding: Finding, file_line: FileLine | None) -> int:
    """The 0-based line of the file as stored: a notebook finding's line in the `.ipynb` where known
    (else its first line), any other finding's own."""
    if finding.cell is None:
        return finding.diagnostic.range.start.line
    stored = file_line(finding) if file_line is not None else None
    return stored if stored is not None else 0


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def gitlab(findings: list[Finding], lines: Lines, file_line: FileLine | None = None) -> str:
    """GitLab Code Quality: description, check_name, fingerprint, severity, location.path/lines.begin.
    The fingerprint hashes the path, the code, the message and the line's text (not its number), so
    a finding keeps its identity when lines above it move; repeats get an ordinal."""
    severities = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFORMATION: "info"}
    seen: Counter[str] = Counter()
    out = []
    for finding in findings:
        d = finding.diagnostic
        source = lines(finding)
        line_text = source[d.range.start.line].strip() if source and d.range.start.line < len(source) else ""
        base = hashlib.sha256(
            "\0".join([str(finding.path), str(finding.cell), d.code, d.message, line_text]).encode()
        ).hexdigest()
        seen[base] += 1
        fingerprint = hashlib.sha256(f"{base}:{seen[base]}".encode()).hexdigest()
        cell = f"cell {finding.cell}: " if finding.cell is not None else ""
        out.append(
            {
                "description": f"{cell}{d.message}",
                "check_name": d.code,
                "fingerprint": fingerprint,
                "severity": severities[d.severity],
                "location": {
                    "path": Path(os.path.relpath(finding.path)).as_posix()
                    if finding.path.is_absolute()
                    else finding.path.as_posix(),
                    "lines": {"begin": _stored_line(finding, file_line) + 1},
                },
            }
        )
    return json.dumps(out, indent=2)


def _sarif_related(finding: Finding, root: Path) -> list[dict[str, Any]]:
    """A finding's related locations as SARIF's, each in its own file (the finding's by default)."""
    return [
        {
            "id": number,
            "message": {"text": r.message},
            "physicalLocation": {
                "artifactLocation": {
                    "uri": uri(Path(r.path) if r.path else finding.path, root),
                    "uriBaseId": "%SRCROOT%",
                },
                "region": _region(r.range.start, r.range.end),
            },
        }
        for number, r in enumerate(finding.diagnostic.related)
    ]


def sarif(findings: list[Finding], root: Path, file_line: FileLine | None = None) -> str:
    """SARIF 2.1.0: one run with every rule's metadata (its docs, Dynamo's gb page as help), each
    finding as a result with its region and its rewrite as a SARIF fix. File URIs are relative to
    `%SRCROOT%`, the folder the command ran in; a notebook finding names its cell in a property, and
    its region is the lines of the `.ipynb` that hold the cell's lines (`file_line`; no columns)."""
    descriptors = [_rule_descriptor(rule) for rule in RULES]
    descriptors += [_not_analysed_descriptor(code, text) for code, text in _NOT_ANALYSED.items()]
    index = {descriptor["id"]: position for position, descriptor in enumerate(descriptors)}
    levels = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note"}
    results = []
    for finding in findings:
        d = finding.diagnostic
        artifact = {"uri": uri(finding.path, root), "uriBaseId": "%SRCROOT%"}
        region = _region(d.range.start, d.range.end)
        if finding.cell is not None:
            stored = file_line(finding) if file_line is not None else None
            region = (
                {"startLine": stored + 1, "endLine": stored + 1 + d.range.end.line - d.range.start.line}
                if stored is not None
                else {}
            )
        result: dict[str, Any] = {
            "ruleId": d.code,
            "level": levels[d.severity],
            "message": {"text": d.message},
            "locations": [
                {"physicalLocation": {"artifactLocation": artifact, **({"region": region} if region else {})}}
            ],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.related:
            result["relatedLocations"] = _sarif_related(finding, root)
        if d.fix is not None and d.fix.edits and finding.cell is None:
            result["fixes"] = [
                {
                    "description": {"text": f"{d.fix.described} ({d.fix.applicability.value})"},
                    "artifactChanges": [
                        {"artifactLocation": artifact, "replacements": [_replacement(e) for e in d.fix.edits]}
                    ],
                }
            ]
        properties = {
            key: value
            for key, value in (
                ("cell", finding.cell),
                ("onlyWhen", list(d.data.only_when)),
                ("fixApplicability", d.fix.applicability.value if d.fix else None),
            )
            if value
        }
        if properties:
            result["properties"] = properties
        results.append(result)
    driver = {
        "name": "graphmend",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": INFORMATION_URI,
        "rules": descriptors,
    }
    run = {
        "tool": {"driver": driver},
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {"%SRCROOT%": {"uri": root.resolve().as_uri() + "/"}},
        "results": results,
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2)


_NOT_ANALYSED = {  # codes of files graphmend could not analyse, which no rule class has
    "GM001": "The file does not parse; nothing in it was analysed.",
    "GM002": "The file is over `max-file-size-kb`; nothing in it was analysed.",
}


def _not_analysed_descriptor(code: str, text: str) -> dict[str, Any]:
    return {
        "id": code,
        "name": "not-analysed",
        "shortDescription": {"text": text},
        "defaultConfiguration": {"level": "note"},
    }


def _rule_descriptor(rule: Any) -> dict[str, Any]:
    help_text = plain_text(rule.docs)
    levels = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note"}
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": rule.docs.what},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": levels[rule.severity]},
        "properties": {
            "fixable": rule.fixable,
            "dynamoReason": rule.reason,
            "tags": [rule.family.value],
        },
    }
    if rule.reason_id:
        descriptor["helpUri"] = GB_DOC_URL.format(rule.reason_id)
    return descriptor


def uri(path: Path, root: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(os.path.abspath(root)).as_posix()
    except ValueError:
        return absolute.as_uri()


def _region(start: Any, end: Any) -> dict[str, int]:
    return {
        "startLine": start.line + 1,
        "startColumn": start.character + 1,
        "endLine": end.line + 1,
        "endColumn": end.character + 1,
    }


def _replacement(edit: TextEdit) -> dict[str, Any]:
    return {"deletedRegion": _region(edit.range.start, edit.range.end), "insertedContent": {"text": edit.new_text}}
