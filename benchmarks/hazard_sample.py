"""Draw a seeded sample of unsafe fixes from real code, as a worksheet for judging their hazards.

    python benchmarks/hazard_sample.py PATH [--sample 40] [--seed 54] [--context 12] > worksheet.md

Runs `graphmend check PATH --output-format json` and draws `--sample` of the diagnostics whose fix is
unsafe (every rule), seeded. For each: the file and line, the fix's title, its hazards numbered, and
the source around the line (`--context` lines before, twice that after), so that a reader can judge
each named hazard against the code: *can happen* (the program as users run it can meet it),
*cosmetic* (it happens, but changes nothing a user sees), or *cannot happen* (with the reason).
The judged table goes to benchmarks/README.md (issue 54's acceptance: at least 90% can happen).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from harness import graphmend_check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--seed", type=int, default=54)
    parser.add_argument("--context", type=int, default=12)
    args = parser.parse_args()
    unsafe = [d for d in graphmend_check(args.path) if (d.get("fix") or {}).get("applicability") == "unsafe"]
    unsafe.sort(key=lambda d: (d["path"], d["line"], d["column"], d["code"]))
    drawn = random.Random(args.seed).sample(unsafe, min(args.sample, len(unsafe)))
    hazards = sum(len(d["fix"]["hazards"]) for d in drawn)
    print(f"# {len(drawn)} of {len(unsafe)} unsafe fixes under {args.path} (seed {args.seed}); {hazards} hazards\n")
    for number, diagnostic in enumerate(drawn, 1):
        path = Path(diagnostic["path"])
        shown = path.relative_to(args.path) if path.is_relative_to(args.path) else path
        lines = path.read_text(encoding="utf-8").splitlines()
        first = max(1, diagnostic["line"] - args.context)
        last = min(len(lines), diagnostic["line"] + 2 * args.context)
        print(f"## {number}. {shown}:{diagnostic['line']} {diagnostic['code']}: {diagnostic['fix']['title']}\n")
        for index, hazard in enumerate(diagnostic["fix"]["hazards"], 1):
            print(f"- H{number}.{index}: {hazard}")
        print("\n```python")
        for line_number in range(first, last + 1):
            marker = ">" if line_number == diagnostic["line"] else " "
            print(f"{marker}{line_number:5d} {lines[line_number - 1]}")
        print("```\n")


if __name__ == "__main__":
    main()
