"""Does `fix --prove` catch what `where_users_run` names? (issue 52)

For every Dynamo corpus program (`tests/dynamo_corpus/pos_*.py`) that `fix --unsafe-fixes`
changes, `tests/where_users_run.py` names what the rewrite changes where users run it (training,
graphs, export, script, ...; inductor left out). For each program with a named difference, a
user-style project is made: the program as `model.py` and a `train.py` that calls its compiled
entry on every input in a loop, three AdamW steps (weight decay, gradients set to None between
steps), as `where_users_run` trains. That project goes through

    graphmend fix --prove --unsafe-fixes -- python train.py

A loop of calls observes "training" (parameters after the steps) and "graphs" (graphs and
recompiles): each "training" difference must come back as a fix that differs, each "graphs" one as
graphs or recompiles the proof reports beside its verdict. The other kinds (export, script,
state_dict after inference_mode, warnings as errors, random ops under inductor) need the program
run another way: they are listed, not expected.

    python benchmarks/prove_corpus.py [--json FILE] [PROGRAM ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "tests")]

import where_users_run  # noqa: E402

from graphmend.pipelines import fix_source  # noqa: E402

LOOP = '''\
"""Trains the program's compiled entry as a user would: every input, three AdamW steps."""

import torch

import model as program


def tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in tensors(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in tensors(item)]
    return []


entry = program.ENTRY
parameters = list(entry.parameters()) if isinstance(entry, torch.nn.Module) else []
optimizer = torch.optim.AdamW(parameters, lr=0.01, weight_decay=0.1) if parameters else None
for step in range(3):
    if optimizer is not None:
        optimizer.zero_grad(set_to_none=True)
    losses = []
    for args in program.INPUTS:
        out = entry(*args)
        losses += [t.sum() for t in tensors(out) if t.requires_grad and t.is_floating_point()]
    if optimizer is not None and losses:
        torch.stack(losses).sum().backward()
        optimizer.step()
'''
OBSERVABLE = ("training", "graphs")  # what a loop of calls and steps can see


def named_differences(path: Path, folder: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    fixed = fix_source(text, path, unsafe=True).fixed
    if fixed == text:
        return {}
    after = folder / path.name
    after.write_text(fixed, encoding="utf-8")
    return where_users_run.differences(
        where_users_run.observe(path, inductor=False), where_users_run.observe(after, inductor=False)
    )


def prove(path: Path, folder: Path) -> dict:
    project = folder / path.stem
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
    (project / "model.py").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    (project / "train.py").write_text(LOOP, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "graphmend", "fix", "--prove", "--unsafe-fixes", "--diff", "--", sys.executable]
        + ["train.py"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    records = list((project / ".graphmend" / "proofs").glob("*/proof.json"))
    if done.returncode or not records:
        return {"error": done.stderr[-1500:]}
    return json.loads(records[0].read_text(encoding="utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help="corpus programs' names (default: every pos_*.py)")
    parser.add_argument("--json", type=Path, help="write each program's row here")
    args = parser.parse_args()
    paths = sorted((ROOT / "tests" / "dynamo_corpus").glob("pos_*.py"))
    if args.programs:
        paths = [p for p in paths if p.stem in args.programs]
    rows = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for path in paths:
            found = named_differences(path, folder)
            if not found:
                continue
            record = prove(path, folder)
            verdicts = [f["verdict"] for f in record.get("fixes", [])]
            graphs, recompiles = record.get("graphs", {}), record.get("recompiles", {})
            seen = {
                "training": "differs" in verdicts,
                "graphs": graphs.get("after") not in (None, graphs.get("before"))
                or recompiles.get("after") not in (None, recompiles.get("before")),
            }
            expected = [kind for kind in found if kind in OBSERVABLE]
            missed = [kind for kind in expected if not seen[kind]]
            row = {"program": path.stem, "named": sorted(found), "verdicts": verdicts, "missed": missed}
            if "error" in record:
                row["error"] = record["error"]
            rows.append(row)
            print(f"{path.stem}: named {sorted(found)}; verdicts {verdicts}; missed {missed}", flush=True)
    observable = [r for r in rows if any(k in OBSERVABLE for k in r["named"])]
    print(f"\n{len(rows)} programs with a named difference; {len(observable)} with one a loop can observe")
    for kind in OBSERVABLE:
        named = [r for r in rows if kind in r["named"]]
        caught = [r for r in named if kind not in r["missed"]]
        print(f"  {kind}: named in {len(named)}, reported by the proof in {len(caught)}")
    other = sorted({k for r in rows for k in r["named"] if k not in OBSERVABLE})
    print(f"  not observable by a loop (not expected): {', '.join(other) or 'none'}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 1 if any(r["missed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
