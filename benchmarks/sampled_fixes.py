"""Sample applied control-flow fixes of real model code and show each one executed, unchanged in behaviour.

    python benchmarks/paper_table2.py --json T2.json      # the runs (before/after, every case)
    python benchmarks/sampled_fixes.py T2.json [--sample 50] [--seed 11]

The population is every GM101/GM102 diagnostic with a fix in the installed transformers `models/`
tree (what `graphmend check` reports there). A fix counts as executed by a Table 2 case when the
case's original model breaks the graph at that site: Dynamo reached the data-dependent test, so the
rewritten code runs in its place in the fixed model. The case then compares the fixed model's
outputs with the original's (`torch.equal`, NaN in the same places counted equal) and, in training
cases, every parameter's gradient after backward (a zero gradient where there was none counts as
unchanged only when the fix's hazards name it) and every parameter after optimiser steps. The sample is drawn, seeded, from the executed
fixes; the report lists each with its shape (the fix title), the cases that run it, and whether
every one of them kept its outputs and gradients.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from harness import graphmend_check


def population(models: Path) -> list[dict[str, Any]]:
    """GM101/GM102 diagnostics with a fix, over the installed models tree."""
    return [d for d in graphmend_check(models) if d["code"] in ("GM101", "GM102") and d.get("fix")]


def executed_by(
    rows: list[dict[str, Any]], fixes: list[dict[str, Any]], models: Path
) -> dict[int, list[dict[str, Any]]]:
    """For each fix (by index), the Table 2 rows whose original model broke the graph at its site."""
    found: dict[int, list[dict[str, Any]]] = {}
    for index, fix in enumerate(fixes):
        relative = "models/" + str(Path(fix["path"]).relative_to(models))
        lines = range(fix["line"], fix["end_line"] + 1)
        for row in rows:
            if any(
                site.rsplit(":", 1)[0] == relative and int(site.rsplit(":", 1)[1]) in lines
                for site in row["sites_before"]
            ):
                found.setdefault(index, []).append(row)
    return found


def shape(title: str) -> str:
    return title.split(" (unsafe")[0]


def _gradients_unchanged(fix: dict[str, Any], cases: list[dict[str, Any]]) -> bool | None:
    """Whether the training cases that run the fix kept every gradient and, after SGD and AdamW
    steps without layerdrop, every parameter (None: no training case runs it); zero gradients where
    there were none are what the fix's title must announce."""
    training = [row for row in cases if row.get("gradients_differ") is not None]
    if not training:
        return None
    announced = "zero gradient instead of none" in " ".join([fix["title"], *fix.get("hazards", [])])
    return all(
        not row["gradients_differ"]
        and not row.get("parameters_after_steps_differ")
        and (announced or not row["gradients_zero_for_none"])
        for row in training
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table2", type=Path, help="the JSON written by paper_table2.py --json")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    import transformers  # the installed package the population is taken from

    models = Path(transformers.__file__).parent / "models"
    rows = [r for r in json.loads(args.table2.read_text()) if not r.get("error_before") and not r.get("error_after")]
    fixes = population(models)
    executed = executed_by(rows, fixes, models)
    chosen = sorted(random.Random(args.seed).sample(sorted(executed), min(args.sample, len(executed))))
    print(
        f"population: {len(fixes)} control-flow fixes in {models}; executed by the {len(rows)} Table 2 cases: {len(executed)}; "
        f"sampled: {len(chosen)} (seed {args.seed})\n"
    )
    print("| # | site | shape | cases that run it | outputs unchanged | gradients and steps unchanged |")
    print("|---:|---|---|---|---|---|")
    changed = 0
    for number, index in enumerate(chosen, 1):
        fix = fixes[index]
        cases = executed[index]
        unchanged = all(row["logits_equal"] for row in cases)
        gradients = _gradients_unchanged(fix["fix"], cases)
        changed += not unchanged or gradients is False
        site = f"{Path(fix['path']).relative_to(models)}:{fix['line']}"
        names = ", ".join(sorted(row["case"] for row in cases))
        print(
            f"| {number} | {site} | {shape(fix['fix']['title'])} | {names} | {'yes' if unchanged else '**no**'} "
            f"| {'—' if gradients is None else 'yes' if gradients else '**no**'} |"
        )
    shapes = Counter(shape(fixes[i]["fix"]["title"]) for i in chosen)
    print(
        f"\nbehaviour changes: {changed} of {len(chosen)}; shapes: "
        + ", ".join(f"{s}: {n}" for s, n in shapes.most_common())
    )
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
