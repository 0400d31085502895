"""How often a control-flow finding in real code comes with a fix, and why the others do not.

    python benchmarks/fix_coverage.py PATH [PATH ...]

Runs `graphmend check --output-format json` on each path (a package's source folder) and prints,
per path: the GM101/GM102 findings, how many carry a fix (safe / unsafe), the same for logging
(GM201-GM203), and the refusal reasons by count (the words of "(no automatic fix: ...)", with
names masked so that one reason is counted once).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from harness import graphmend_check

REASON = re.compile(r"\(no automatic fix: (.*)\)$")
NAME = re.compile(r"`[^`]*`")


def report(path: Path) -> None:
    diagnostics = graphmend_check(path)
    control = [d for d in diagnostics if d["code"] in ("GM101", "GM102")]
    messages = [d for d in diagnostics if d["code"] in ("GM201", "GM202", "GM203")]
    fixed = [d for d in control if d.get("fix")]
    kinds = Counter(d["fix"]["applicability"] for d in fixed)
    message_kinds = Counter(d["fix"]["applicability"] for d in messages if d.get("fix"))
    share = len(fixed) / max(1, len(control))
    print(f"## {path}\n")
    print(
        f"control flow (GM101+GM102): {len(control)} findings, {len(fixed)} with a fix ({share:.0%}; "
        f"safe {kinds['safe']}, unsafe {kinds['unsafe']}); logging (GM201-GM203): "
        f"{sum(1 for d in messages if d.get('fix'))}/{len(messages)} with a fix (safe {message_kinds['safe']}, "
        f"unsafe {message_kinds['unsafe']})\n"
    )
    reasons: Counter[str] = Counter()
    for d in control:
        match = REASON.search(d["message"]) if not d.get("fix") else None
        if match:
            reasons[NAME.sub("`…`", match.group(1))] += 1
    if reasons:
        print("| refusals | reason |\n|---:|---|")
        for reason, count in reasons.most_common():
            print(f"| {count} | {reason} |")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path)
    for path in parser.parse_args().paths:
        report(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
