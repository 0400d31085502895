"""A break inside a tensor method call's arguments names the call's own second break (kind "resume")."""

from __future__ import annotations

from pathlib import Path

from graphmend.api import check_source

SOURCE = """import torch


class Layer(torch.nn.Module):
    def forward(self, h: torch.Tensor, mask: torch.BoolTensor, scale):
        h = h.masked_scatter(
            mask.unsqueeze(-1),
            self.norm(h[mask]),
        )
        return scale.apply(
            h[mask],
        )
"""


def _resumes(source: str) -> list[tuple[int, int, str]]:
    return [
        (d.range.start.line + 1, r.range.start.line + 1, r.message)
        for d in check_source(source, Path("layer.py"))
        for r in d.related
        if r.kind == "resume"
    ]


def test_the_call_a_break_is_an_argument_of_breaks_too() -> None:
    assert _resumes(SOURCE) == [
        (
            8,
            6,
            "Dynamo breaks here too: it resumes after this break with "
            "`h.masked_scatter` loaded but not called, a bound method it cannot trace",
        )
    ]


def test_a_call_on_the_same_line_or_on_no_tensor_adds_nothing() -> None:
    one_line = SOURCE.replace(
        "h.masked_scatter(\n            mask.unsqueeze(-1),\n            self.norm(h[mask]),\n        )",
        "h.masked_scatter(mask.unsqueeze(-1), self.norm(h[mask]))",
    )
    assert _resumes(one_line) == []  # the second break has the first one's line; `scale.apply` is no tensor's
