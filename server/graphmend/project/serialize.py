"""The cache's form of a `ModuleSummary`: plain JSON, never pickle."""

from __future__ import annotations

from ..regions import ExternalRef
from .summary import ClassSummary, EntrySummary, FunctionSummary, ModuleSummary


def summary_to_json(summary: ModuleSummary) -> dict[str, object]:
    """A plain form of a summary (for the on-disk cache: JSON, never pickle)."""
    return {
        "path": summary.path,
        "name": summary.name,
        "forward_is_compiled": summary.forward_is_compiled,
        "imports": [list(pair) for pair in summary.imports],
        "functions": [
            [
                f.qualname,
                f.line,
                f.character,
                f.end_character,
                list(f.calls),
                [[r.kind, r.target, r.member, list(r.tensors)] for r in f.external],
                list(f.parameters),
                f.positional,
                f.purity,
                f.caveat,
                f.replaces_forward,
                f.compile_constant,
            ]
            for f in summary.functions
        ],
        "classes": [
            [c.name, list(c.bases), list(c.methods), list(c.init_attributes), list(c.decorators)]
            for c in summary.classes
        ],
        "entries": [
            [
                e.target.kind,
                e.target.target,
                e.target.member,
                e.why,
                e.line,
                e.character,
                e.end_character,
                e.cuda_graphs,
            ]
            for e in summary.entries
        ],
        "replayed": list(summary.replayed),
        "tables": [[name, list(members)] for name, members in summary.tables],
        "captures": list(summary.captures),
        "arguments": [[name, count, list(names)] for name, count, names in summary.arguments],
        "escaped": list(summary.escaped),
        "disabled": list(summary.disabled),
    }


def summary_from_json(raw: dict) -> ModuleSummary:
    """The summary `summary_to_json` wrote."""
    return ModuleSummary(
        raw["path"],
        raw["name"],
        raw["forward_is_compiled"],
        tuple((a, b) for a, b in raw["imports"]),
        tuple(
            FunctionSummary(
                q,
                line,
                start,
                end,
                tuple(calls),
                tuple(ExternalRef(kind, target, member, tuple(tensors)) for kind, target, member, tensors in external),
                tuple(parameters),
                positional,
                purity,
                caveat,
                replaces,
                constant,
            )
            for q, line, start, end, calls, external, parameters, positional, purity, caveat, replaces, constant in raw[
                "functions"
            ]
        ),
        tuple(
            ClassSummary(name, tuple(bases), tuple(methods), tuple(attributes), tuple(decorators))
            for name, bases, methods, attributes, decorators in raw["classes"]
        ),
        tuple(
            EntrySummary(ExternalRef(kind, target, member), why, line, start, end, cuda_graphs)
            for kind, target, member, why, line, start, end, cuda_graphs in raw["entries"]
        ),
        tuple(raw["replayed"]),
        tuple((name, tuple(members)) for name, members in raw["tables"]),
        tuple(raw["captures"]),
        tuple((name, count, tuple(names)) for name, count, names in raw["arguments"]),
        tuple(raw["escaped"]),
        tuple(raw["disabled"]),
    )
