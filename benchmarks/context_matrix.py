"""The context matrix of issue 50: every rewrite of the corpus and the fixtures, where its code runs.

    python benchmarks/context_matrix.py [--json OUT]

Each corpus program with a fix (`tests/dynamo_corpus/pos_*.py`, fixed with `--unsafe-fixes`) and
each rewrite fixture that says how it runs (`ENTRY`, `INPUTS`) runs before and after its fix in
every context of `tests/where_code_runs.py` (the program compiled as it is, as a submodule, in an
`nn.Sequential`, through `super()`, under `checkpoint`, `no_grad`, `inference_mode`, fp16 and bf16
autocast, strict and non-strict export, with hooks, at other sizes). Per context: how many
programs it applies to, and for safe and unsafe fixes how many differ there, and how many of those
differences no hazard names (which must be 0). The tests run the same comparison
(`tests/test_fix_proofs.py`: every fixture and a sample of the corpus in CI, all of it with
`GRAPHMEND_FULL=1`).
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
    args = parser.parse_args()
    applies: Counter[str] = Counter()
    differs: Counter[tuple[str, bool]] = Counter()
    unnamed: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as name:
        runs = cases(Path(name))
        for program, before, after, hazards, safe in runs:
            seen_before, seen_after = where_code_runs.observe(before), where_code_runs.observe(after)
            found = where_code_runs.differences(seen_before, seen_after)
            left = where_code_runs.unnamed(found, hazards) if not safe else found
            for context, seen in seen_before.items():
                if seen != where_code_runs.NOT_APPLICABLE:
                    applies[context] += 1
            for context in found:
                differs[context, safe] += 1
            for context in left:
                unnamed[context] += 1
            rows.append({"program": program, "safe": safe, "differences": found, "unnamed": left})
    safe_count = sum(row["safe"] for row in rows)
    print(f"{len(rows)} rewrites ({safe_count} safe, {len(rows) - safe_count} unsafe)\n")
    print("| context | applies to | safe fixes that differ | unsafe fixes that differ | differences no hazard names |")
    print("|---|---:|---:|---:|---:|")
    for context in where_code_runs.CONTEXTS:
        print(
            f"| {context} | {applies[context]} | {differs[context, True]} | {differs[context, False]} | "
            f"{unnamed[context]} |"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 1 if any(unnamed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
