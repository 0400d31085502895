"""Write a proof's record, `.graphmend/proofs/<proof>/proof.json`: what the proof ran and each fix's
verdict, under the fix's hash, signed with this user's key (`proof_records` reads them back for
`check` and the editor, and counts only what this user's graphmend signed)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from ..proof_records import project_relative
from ..signing import signed
from .session import Proof, graphs, recompiles

SCHEMA = 1


def write_record(proof: Proof, root: Path, applied: set[str]) -> Path:
    """Write `proof`'s record; `applied`: the fix hashes written into the files."""
    final = proof.final
    record = {
        "schema": SCHEMA,
        "command": proof.command,
        "cwd": os.getcwd(),
        "torch": proof.torch,
        "python": sys.version.split()[0],
        "ended": time.time(),
        "processes": proof.processes,
        "steps": proof.steps,
        "calls": proof.calls,
        "seeds": proof.seeds,
        "stdin": proof.stdin,
        "failure": proof.failure,
        "runs": [
            {
                "folder": run.folder.name,
                "fixes": [c.fix_hash for c in run.fixes],
                "exit_code": run.exit_code,
                "seconds": round(run.seconds, 2),
            }
            for run in proof.runs
        ],
        "graphs": {"before": graphs(proof.original), "after": graphs(final) if final else None},
        "recompiles": {"before": recompiles(proof.original), "after": recompiles(final) if final else None},
        "fixes": [
            {
                "path": project_relative(v.candidate.path, root) or str(v.candidate.path),
                "line": v.candidate.line,
                "code": v.candidate.code,
                "title": v.candidate.fix.title,
                "applicability": v.candidate.fix.applicability.value,
                "function": v.candidate.function,
                "function_hash": v.candidate.function_hash,
                "fix_hash": v.candidate.fix_hash,
                "verdict": v.verdict,
                "differences": [str(d) for d in v.differences],
                "together_with": [c.label(root) for c in v.together_with],
                "breaks_before": v.breaks_before,
                "breaks_removed": v.breaks_removed,
                "applied": v.candidate.fix_hash in applied,
            }
            for v in proof.verdicts
        ],
    }
    path = proof.folder / "proof.json"
    path.write_text(json.dumps(signed(record), indent=1) + "\n", encoding="utf-8")
    return path
