"""The context matrix of issue 50: every rewrite of the corpus and the fixtures, where its code runs.

    python benchmarks/context_matrix.py [--json OUT] [--contexts a,b] [--cheap] [--shard I/N] [NAME ...]

Each corpus program with a fix (`tests/dynamo_corpus/pos_*.py`, fixed with `--unsafe-fixes`) and
each rewrite fixture that says how it runs (`ENTRY`, `INPUTS`) runs before and after its fix in
every context of `tests/where_code_runs.py` (the program compiled as it is, as a submodule, in an
`nn.Sequential`, through `super()`, under `checkpoint`, `no_grad`, `inference_mode`, fp16 and bf16
autocast, strict and non-strict export, with hooks, at other sizes; issue 67: on fake and meta
tensors, under `torch.func.grad` and `vmap`, traced by `symbolic_trace`, with warnings as errors,
trained by AdamW, compiled with inductor in training and eval, under DDP on 2 ranks, against a warm
inductor cache in a fresh process, a traced module loaded in a fresh process). Per context: how
many programs it applies to, and for safe and unsafe fixes how many differ there, and how many of
those differences no hazard names (which must be 0); then each difference a safe fix makes and each
one no hazard names, and the seconds each context took a program. `--json OUT` writes each
program's differences and times; `--contexts` and `--cheap` (no DDP, inductor or processes) run
fewer contexts, NAMEs fewer programs (those whose name holds one), `--shard I/N` every Nth (run N
at once, then add their JSON up). The tests run the same
comparison (`tests/test_fix_proofs.py`: every fixture and a sample of the corpus in CI, the
expensive contexts on a sample of 4, all of it with `GRAPHMEND_FULL=1`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "tests")]

import where_code_runs  # noqa: E402

from graphmend.api import check_source, fix_source  # noqa: E402

UNSAFE = "# fix-applicability: unsafe"


def cases(folder: Path) -> list[tuple[str, Path, Path, list[str], bool]]:
    """(name, before, after, hazards, safe) for every corpus program a fix changes and every
    runnable rewrite fixture."""
    found = []
    for path in sorted((ROOT / "tests" / "dynamo_corpus").glob("pos_*.py")):
        text = path.read_text(encoding="utf-8")
        fixed = fix_source(text, path, unsafe=True).fixed
        if fixed == text:
            continue
        after = folder / path.name
        after.write_text(fixed, encoding="utf-8")
        hazards = [h for d in check_source(text, path) if d.fix for h in d.fix.hazards]
        found.append((path.stem, path, after, hazards, not hazards))
    for path in sorted((ROOT / "tests" / "fixtures").glob("GM*/fix_*.in.py")):
        text = path.read_text(encoding="utf-8")
        if "\nENTRY = " not in text:
            continue
        hazards = [h for d in check_source(text, path) if d.fix for h in d.fix.hazards]
        after = path.with_name(path.name.replace(".in.py", ".out.py"))
        name = f"{path.parent.name}/{path.name.removesuffix('.in.py')}"
        found.append((name, path, after, hazards, not text.startswith(UNSAFE)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write each program's differences here")
    parser.add_argument("--contexts", help="only these contexts (comma-separated)")
    parser.add_argument("--cheap", action="store_true", help="only the contexts that start no process nor compile C++")
    parser.add_argument("--shard", help="I/N: only every Nth program from the Ith (0-based), to run N at once")
    parser.add_argument("names", nargs="*", help="only the programs whose name holds one of these")
    args = parser.parse_args()
    contexts = where_code_runs.CHEAP if args.cheap else where_code_runs.CONTEXTS
    if args.contexts:
        # with `plain`, whose differences the hazards name whatever the context
        contexts = tuple(c for c in where_code_runs.CONTEXTS if c == "plain" or c in args.contexts.split(","))
    applies: Counter[str] = Counter()
    differs: Counter[tuple[str, bool]] = Counter()
    unnamed: Counter[str] = Counter()
    seconds: dict[str, list[float]] = {}
    rows: list[dict[str, Any]] = []
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as name:
        runs = [run for run in cases(Path(name)) if not args.names or any(n in run[0] for n in args.names)]
        if args.shard:
            index, count = (int(part) for part in args.shard.split("/"))
            runs = runs[index::count]
        for program, before, after, hazards, safe in runs:
            times: dict[str, float] = {}
            try:
                seen_before = where_code_runs.observe(before, contexts, times)
                seen_after = where_code_runs.observe(after, contexts, times)
            except Exception as error:  # noqa: BLE001 - a program that does not load: said, and the next one
                failed.append(f"{program}: {type(error).__name__}: {error}")
                print(f"{program}: failed: {failed[-1]}", file=sys.stderr, flush=True)
                continue
            found = where_code_runs.differences(seen_before, seen_after)
            left = where_code_runs.unnamed(found, hazards) if not safe else found
            for context, seen in seen_before.items():
                if seen != where_code_runs.NOT_APPLICABLE:
                    applies[context] += 1
                    seconds.setdefault(context, []).append(times[context] / 2)
            for context in found:
                differs[context, safe] += 1
            for context in left:
                unnamed[context] += 1
            rows.append(
                {
                    "program": program,
                    "safe": safe,
                    "hazards": hazards,
                    "differences": found,
                    "unnamed": left,
                    "seconds": times,
                    "applies": [c for c, seen in seen_before.items() if seen != where_code_runs.NOT_APPLICABLE],
                }
            )
            print(f"{program}: {sorted(found)}", file=sys.stderr, flush=True)
    safe_count = sum(row["safe"] for row in rows)
    print(f"{len(rows)} rewrites ({safe_count} safe, {len(rows) - safe_count} unsafe)\n")
    print(
        "| context | applies to | safe fixes that differ | unsafe fixes that differ | differences no hazard names "
        "| seconds a program (mean, max) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for context in contexts:
        spent = seconds.get(context, [0.0])
        print(
            f"| {context} | {applies[context]} | {differs[context, True]} | {differs[context, False]} | "
            f"{unnamed[context]} | {sum(spent) / len(spent):.2f}, {max(spent):.2f} |"
        )
    for title, key in (("Safe fixes that differ", "differences"), ("Differences no hazard names", "unnamed")):
        print(f"\n{title}:")
        for row in rows:
            if key == "differences" and not row["safe"]:
                continue
            for context, kinds in row[key].items():
                for kind, seen in kinds.items():
                    print(f"- {row['program']} | {context} | {kind}: {seen[:400]}")
    if failed:
        print("\nPrograms that did not run:\n" + "\n".join(f"- {line}" for line in failed))
    if args.json:
        args.json.write_text(
            json.dumps(rows + [{"program": line, "failed": True} for line in failed], indent=1, default=str)
        )
    return 1 if any(unnamed.values()) or failed else 0


if __name__ == "__main__":
    sys.exit(main())
