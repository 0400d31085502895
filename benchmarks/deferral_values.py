"""Which values a deferred message may carry: what Dynamo does with each kind of argument.

    python benchmarks/deferral_values.py

A helper registered in `torch.compiler.config.reorderable_logging_functions` (graphmend's deferral)
is called from a compiled function with one kind of value, passed as is or inside one lazy
`"...".format(...)`. Each case is compiled with backend="eager" and called three times: static
(the same input length), `dynamic=True`, and automatic dynamic (three lengths, no `dynamic=`).
Printed per case and mode: "defers" (no graph break, the text equal to eager's) or the break's gb id.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import sys
from collections.abc import Callable

import torch
import torch._dynamo


@torch.compiler.disable
def _deferred(*args):  # noqa: ANN002, ANN202 - the shape graphmend writes
    print(*args)


torch.compiler.config.reorderable_logging_functions.add(_deferred)

VALUES: dict[str, Callable[[torch.Tensor, int], object]] = {
    "a tensor": lambda x, n: x.sum(),
    "x.dtype": lambda x, n: x.dtype,
    "x.device": lambda x, n: x.device,
    "a str constant": lambda x, n: "hello",
    "x.size(0)": lambda x, n: x.size(0),
    "x.shape[0]": lambda x, n: x.shape[0],
    "len(x)": lambda x, n: len(x),
    "an int parameter": lambda x, n: n,
    "x.shape": lambda x, n: x.shape,
    "x.size()": lambda x, n: x.size(),
    "a tuple": lambda x, n: (1, 2, 3),
}
MODES = {"static": (4, 4, 4), "dynamic": (4, 5, 6), "automatic": (4, 5, 6)}


class _Breaks(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        match = re.search(r"/gb/(gb\d+)\.html", record.getMessage())
        self.ids.append(match.group(1) if match else "break")


def measure(value: Callable[[torch.Tensor, int], object], formatted: bool, mode: str) -> str:
    def program(x: torch.Tensor, n: int) -> torch.Tensor:
        if formatted:
            _deferred(f"v={value(x, n)}")
        else:
            _deferred("v=", value(x, n))
        return x * 2

    torch._dynamo.reset()
    compiled = torch.compile(program, backend="eager", dynamic=True if mode == "dynamic" else None)
    handler = _Breaks()
    breaks = logging.getLogger("torch._dynamo.symbolic_convert.__graph_breaks")
    breaks.addHandler(handler)
    breaks.propagate = False
    torch._logging.set_logs(graph_breaks=True)
    same_text = True
    try:
        for length in MODES[mode]:
            x = torch.ones(length, 3)
            eager, traced = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(eager):
                program(x, length)
            with contextlib.redirect_stdout(traced):
                compiled(x, length)
            same_text &= eager.getvalue() == traced.getvalue()
    finally:
        breaks.removeHandler(handler)
        torch._logging.set_logs()
    if not same_text:
        return "WRONG TEXT"
    return "defers" if not handler.ids else "breaks (" + ", ".join(sorted(set(handler.ids))) + ")"


def main() -> int:
    print("| value | passed as | " + " | ".join(MODES) + " |")
    print("|---|---|" + "---|" * len(MODES))
    for name, value in VALUES.items():
        for formatted in (False, True):
            cells = [measure(value, formatted, mode) for mode in MODES]
            how = '`"v={}".format(...)`' if formatted else "an argument"
            print(f"| {name} | {how} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
