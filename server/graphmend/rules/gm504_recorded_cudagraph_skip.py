from __future__ import annotations

from ..record.runs import RecordedEvent
from ..record.trace import CUDAGRAPH_SKIP
from .base import RecordedRule, RuleDocs


class RecordedCudagraphSkip(RecordedRule):
    """A graph the recorded run kept out of CUDA graphs, with inductor's reason."""

    docs = RuleDocs(
        what=(
            "reports a graph that the newest run recorded by `graphmend record` compiled for CUDA graphs "
            '(`mode="reduce-overhead"`) but ran without them, with inductor\'s reason, at the compiled '
            "function's line."
        ),
        why=(
            "Inductor skips CUDA graphs for a graph with CPU tensors, mutated inputs, dynamic shapes it "
            "cannot record or operators it cannot capture; the graph then pays a kernel launch per operator, "
            "which is what `reduce-overhead` was asked to remove."
        ),
        why_title="Why it hurts",
        example=(
            '@torch.compile(mode="reduce-overhead")\n'
            "def step(x):\n"
            "    return x + torch.tensor(1.0)  # a CPU tensor: skipped"
        ),
        action="Remove what inductor names (the GM4xx rules say how for the common reasons), then record again.",
        fix="none: the reason names the cause; the GM4xx rules fix the ones a rewrite can.",
    )

    code = "GM504"
    name = "recorded-cudagraph-skip"
    message = "Remove what kept this graph out of CUDA graphs in the recorded run"
    event_kind = CUDAGRAPH_SKIP

    @classmethod
    def message_for_event(cls, event: RecordedEvent) -> str:
        reason = event.reason.removeprefix("skipping cudagraphs due to ").strip()
        return f"{cls.message}: {reason}" if reason else cls.message
