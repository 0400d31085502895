from __future__ import annotations

from ..record.trace import COMPILE_FAILURE
from .base import RecordedRule, RuleDocs


class RecordedCompileFailure(RecordedRule):
    """A compile that failed in the recorded run, at the user's line it failed on."""

    docs = RuleDocs(
        what=(
            "reports a compilation that failed in the newest run recorded by `graphmend record`: Dynamo's "
            "or the backend's exception, at the project line it was tracing."
        ),
        why=(
            "A failed compile either stops the program or, with `torch._dynamo.config.suppress_errors`, "
            "runs the whole function eagerly: no graph at all, so none of the compile's speed."
        ),
        why_title="Why it hurts",
        example=(
            "@torch.compile(fullgraph=True)\n"
            "def f(x):\n"
            "    return lib.scaled(x)  # fullgraph: a break inside `scaled` fails the compile"
        ),
        action="Read the failure's reason: rewrite what it names, or keep that code out of the compiled region.",
        fix="none: a failure's cause varies; the finding quotes it.",
    )

    code = "GM503"
    name = "recorded-compile-failure"
    message = "Fix what failed to compile here in the recorded run"
    event_kind = COMPILE_FAILURE
