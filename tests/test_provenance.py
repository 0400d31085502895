"""Why a finding's value is a tensor: the chain of bindings in its related information (issue 18, item 5)."""

from __future__ import annotations

from pathlib import Path

from graphmend.api import check_source

SOURCE = """import torch


class Net(torch.nn.Module):
    def forward(self, x: torch.Tensor, scale):
        finite = torch.isfinite(x)
        ok = finite.all()
        for row in x:
            ok = ok & (row.sum() > 0)
        if not ok:
            x = torch.zeros_like(x)
        return x
"""


def _chain(source: str) -> list[tuple[int, str]]:
    (diagnostic,) = check_source(source, Path("net.py"))
    return [(r.range.start.line + 1, r.message) for r in diagnostic.related if r.kind == "value"]


def test_the_chain_follows_each_binding_back_to_the_parameter() -> None:
    assert _chain(SOURCE) == [
        (9, "`ok` ← `ok & (row.sum() > 0)`"),
        (7, "`ok` ← `finite.all()`"),
        (6, "`finite` ← `torch.isfinite(x)`"),
        (5, "`x`: a parameter of `Net.forward` (annotated `torch.Tensor`)"),
    ]


def test_a_loop_target_is_an_element_of_its_iterable() -> None:
    source = SOURCE.replace("        if not ok:", "        if not row.any():")
    assert _chain(source) == [
        (8, "`row` ← an element of `x`"),
        (5, "`x`: a parameter of `Net.forward` (annotated `torch.Tensor`)"),
    ]
