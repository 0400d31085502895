"""`graphmend fix --prove -- COMMAND`: find the fixes, prove them on the command's runs, apply the
proved ones, keep the record, and say what each verdict rests on."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import decode_source, read_bytes, write_atomically
from ..proof_records import DIFFERS, NOT_EXERCISED, PROVED, project_relative
from ..reporting import plural
from .candidates import Candidate, find_candidates, rewritten
from .compare import TOLERANCE
from .records import write_record
from .session import Proof, Prover, Verdict, graphs, recompiles


@dataclass
class ProofOutcome:
    candidates: list[Candidate]
    proof: Proof | None  # None: no fix to prove
    applied: list[Candidate]
    changed: dict[Path, tuple[str, str]]  # a file the proved fixes change → (before, after)
    record: Path | None


def prove_command(
    command: list[str],
    paths: list[Path],
    root: Path,
    overrides: Mapping[str, Any] | None = None,
    unsafe: bool = False,
    workdir: Path | None = None,
    write: bool = True,
    say: Callable[[str], None] = lambda line: None,
    masks: tuple[str, ...] = (),
) -> ProofOutcome:
    """Prove the fixes under `paths` on `command`'s runs; with `write`, apply the proved ones.
    `masks`: regular expressions for text that may differ between runs (a clock the defaults miss).

    Raises re.error for a mask that is not a regular expression."""
    patterns = tuple(re.compile(mask) for mask in masks)
    candidates = find_candidates(paths, overrides, unsafe)
    if not candidates:
        return ProofOutcome(candidates, None, [], {}, None)
    safe = sum(c.safe for c in candidates)
    kinds = f"{safe} safe, {len(candidates) - safe} unsafe" if unsafe else "safe"
    say(
        f"graphmend: proving {plural(len(candidates), 'fix')} ({kinds}) on `{' '.join(command)}`. "
        "The command runs at least twice, so what it writes, it writes in each run"
        + ("" if workdir else " (--workdir DIR runs it in fresh folders under DIR)")
        + "."
    )
    prover = Prover(command, root, candidates, workdir, say, patterns)
    proof = prover.prove()
    proved = [v.candidate for v in proof.verdicts if v.verdict == PROVED]  # none where the proof failed
    changed = {}
    applied = []
    for path in sorted({c.path for c in proved}):
        before, encoding = decode_source(read_bytes(path))
        if before != prover.original_text(path):  # edited while the command ran: not what was proved
            say(f"graphmend: {path} changed during the proof; its proved fixes are not applied (prove again)")
            continue
        after = rewritten(path, proved, before)
        changed[path] = (before, after)
        if write and after != before:
            write_atomically(Path(os.path.realpath(path)), after, encoding)
        if write:
            applied += [c for c in proved if c.path == path]
    record = write_record(proof, root, {c.fix_hash for c in applied})
    return ProofOutcome(candidates, proof, applied, changed, record)


def report(outcome: ProofOutcome, root: Path) -> list[str]:
    """The verdicts in words: one line per fix, then what the proof covered and rests on."""
    proof = outcome.proof
    if proof is None:
        return ["graphmend: no fix to prove here (--unsafe-fixes also tries the unsafe ones)."]
    if proof.failure:  # first, as the one thing to know
        seconds = sum(run.seconds for run in proof.runs)
        return [
            f"graphmend: the proof failed: {proof.failure[0]}",
            *proof.failure[1:],
            f"{plural(len(proof.runs), 'run')}, {seconds:.1f} s in all; "
            f"its output: {project_relative(proof.original.folder, root)}",
        ]
    exact = all(p.exact for run in proof.runs for p in run.processes)
    lines = [
        f"Verdicts on `{' '.join(proof.command)}` ({plural(proof.processes, 'process')}, "
        f"{plural(proof.steps, 'optimizer step')}, {plural(proof.calls, 'compiled call')}; torch {proof.torch or '?'}; "
        + ("compared exactly" if exact else f"compiled with inductor: floating values compared within {TOLERANCE}")
        + "):"
    ]
    for verdict in sorted(proof.verdicts, key=lambda v: (str(v.candidate.path), v.candidate.line)):
        candidate = verdict.candidate
        label = candidate.label(root)
        kind = "" if candidate.safe else " (unsafe)"
        if verdict.verdict == PROVED:
            if not verdict.breaks_before:
                effect = "its lines ran, breaking no graph"
            elif verdict.breaks_removed == verdict.breaks_before:
                effect = f"removes the {plural(verdict.breaks_before, 'graph break')} it met"
            else:
                effect = f"removes {verdict.breaks_removed} of the {verdict.breaks_before} graph breaks it met"
            applied = "; applied" if candidate in outcome.applied else ""
            lines.append(f"  {label}: proved{kind}: {effect}{_measured(verdict, proof)}{applied}")
        elif verdict.verdict == DIFFERS:
            together = (
                f" (only together with {', '.join(c.label(root) for c in verdict.together_with)})"
                if verdict.together_with
                else ""
            )
            lines.append(f"  {label}: differs{kind}{together}:")
            lines.extend(f"      {difference}" for difference in verdict.differences[:5])
            if len(verdict.differences) > 5:
                lines.append(f"      … and {len(verdict.differences) - 5} more")
        elif verdict.verdict == NOT_EXERCISED:
            lines.append(f"  {label}: not exercised{kind}: the run never reached line {candidate.line}")
    lines.append(_graphs_line(proof))
    lines.extend(f"Seeds: {said}" for said in proof.seeds)
    lines.append(f"Standard input: {proof.stdin}.")
    seconds = sum(run.seconds for run in proof.runs)
    lines.append(
        f"{plural(len(proof.runs), 'run')}, {seconds:.1f} s in all (the original run: {proof.original.seconds:.1f} s)."
    )
    return lines


def _measured(verdict: Verdict, proof: Proof) -> str:
    """Graphs and recompiles in the run with the fix and the fewest others, against the original."""
    run = verdict.measured_with
    if run is None:
        return ""
    alone = "with it alone" if len(run.fixes) == 1 else f"with it and {plural(len(run.fixes) - 1, 'other fix')}"
    added = recompiles(run) - recompiles(proof.original)
    more = f", {plural(added, 'recompile')} more" if added > 0 else ""
    return f"; graphs {graphs(proof.original)} → {graphs(run)} {alone}{more}"


def _graphs_line(proof: Proof) -> str:
    before = graphs(proof.original)
    if proof.final is None:
        return f"Graphs: {before} in the original run; no fix proved."
    added = recompiles(proof.final) - recompiles(proof.original)
    more = f"; {plural(added, 'recompile')} more" if added > 0 else ""
    return f"Graphs: {before} before, {graphs(proof.final)} with the proved fixes{more}."
