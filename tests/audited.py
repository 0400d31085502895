"""`graphmend` run in a process of its own that reports each file it opens (an audit hook on `open`)
and its peak memory (VmHWM, that process's own: `ru_maxrss` would count the pytest worker it was
forked from), for the tests of what a repository or a trace made elsewhere can make it do."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_SCRIPT = textwrap.dedent(
    """
    import sys
    opened = []
    sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" else None)
    from graphmend.cli import main
    code = main(sys.argv[1:])
    print("OPENED", repr(opened), file=sys.stderr)
    peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print("PEAK_KB", peak, file=sys.stderr)
    sys.exit(code)
    """
)


def graphmend(cwd: Path, *arguments: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """`graphmend ARGUMENTS` in `cwd`, audited; a hang fails the test instead of stopping it."""
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, *arguments], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def opened(done: subprocess.CompletedProcess) -> list[str]:
    line = next(line for line in done.stderr.splitlines() if line.startswith("OPENED "))
    return eval(line.removeprefix("OPENED "))  # noqa: S307  (our own repr of a list of str)


def peak_mb(done: subprocess.CompletedProcess) -> float:
    line = next(line for line in done.stderr.splitlines() if line.startswith("PEAK_KB "))
    return int(line.split()[1]) / 1024
