from __future__ import annotations

from ..record.trace import GRAPH_BREAK
from .base import RecordedRule, RuleDocs


class RecordedGraphBreak(RecordedRule):
    """A graph break the recorded run met at a line no static rule reports."""

    docs = RuleDocs(
        what=(
            "reports a graph break that the newest run recorded by `graphmend record` met at one of the "
            "project's lines, where no static rule reports one: Dynamo's reason, how many times, and the "
            "library or torch line it broke at when the break is in code the project calls."
        ),
        why=(
            "Dynamo split the compiled function there while the program ran: it compiled the code before "
            "the line as one graph, ran the line in eager Python and started a new graph after it, so each "
            "call syncs and loses fusion across the break. The reason is Dynamo's own; source alone did not "
            "show it (a value known only at run time, a library's code, an object Dynamo cannot trace)."
        ),
        example=(
            "def forward(self, x):\n"
            "    y = self.encoder(x)\n"
            "    return helpers.normalise(y)  # the run broke inside normalise"
        ),
        action=(
            "Follow Dynamo's reason and its page: rewrite the construct it names, or move the call out of "
            "the compiled region (`torch.compiler.disable` on a helper you own). For a break inside a "
            "library, the finding says what to do at your call: the library's own switch when its source "
            "has one (a keyword argument of the function you call, such as `use_cache=False`, or a config "
            "flag, that keeps it off the line it broke at), else the escape hatch below. Every library line "
            "the call broke at is a related location, with how many times."
        ),
        fix=(
            "for a break inside a library the line calls directly (a function, or one module's call) with no "
            "switch: `torch.compiler.disable` on the callee at the call, **unsafe**: the call then runs in "
            "eager Python on every call (its breaks become one at the call, nothing fuses across it), and "
            "under `fullgraph=True` it fails the compile; record again to see the result. Where a static rule "
            "can rewrite the line, that rule reports it instead, confirmed by the run, with its fix and its "
            "safety: the run shows the function is compiled (Dynamo traced it) though no compile site in the "
            "checked files says so, and the function is analysed as compiled. The finding goes when a new "
            "run no longer meets the break."
        ),
    )

    code = "GM501"
    name = "recorded-graph-break"
    message = "Remove the graph break the recorded run met here"
    fixable = True  # the escape hatch at a library call; a line a static rule rewrites is that rule's finding
    event_kind = GRAPH_BREAK
