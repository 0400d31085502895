from __future__ import annotations

import ast
from collections.abc import Iterator

from ..diagnostics import Severity
from ..recompiles import Program, Values
from ..recompiles.calls import repeated
from ..recompiles.program import def_name
from .base import Prediction, ProgramRule, RuleDocs

ONCE_THEN_DYNAMIC = (
    "once, for the second shape; Dynamo then compiles the dimension as dynamic (`automatic_dynamic_shapes`) "
    "and later shapes reuse it"
)


class ChangingShapes(ProgramRule):
    """Inputs whose shapes change between calls of compiled code."""

    docs = RuleDocs(
        what=(
            "flags compiled code the program calls with inputs of changing shapes: the short last batch of a "
            "`DataLoader` without `drop_last=True`, tensors built in a loop from a changing size, a sequence "
            "grown by `torch.cat` each step, and generation with a compiled transformers model."
        ),
        why=(
            "Dynamo guards each input's sizes. The first new size fails once; Dynamo then compiles the "
            "dimension as dynamic and later sizes reuse that graph (measured on torch 2.13), so this is one "
            "compile more, not one per size. Reported as information: it is worth acting on only where a "
            "dynamic dimension is slower or the one extra compile matters."
        ),
        why_title="Why it recompiles",
        example=(
            "loader = DataLoader(TensorDataset(torch.randn(10, 3)), batch_size=4)\n"
            "for (batch,) in loader:\n"
            "    train_step(batch)"
        ),
        action=(
            "Accept the one extra compile, or avoid it: `drop_last=True`, padding to fixed sizes, or "
            "`torch._dynamo.mark_dynamic(x, 0)` on the first input when the code is known to trace with a "
            "dynamic size."
        ),
        fix="none: `mark_dynamic` can turn a recompile into a compile failure where the code specialises the size.",
    )

    code = "GM605"
    confirmed_by = frozenset({"size"})
    name = "changing-shapes"
    message = "Expect one more compile here: the program calls this compiled code with inputs of a changing shape"

    def predict(self, program: Program, values: Values) -> Iterator[Prediction]:
        for compiled in program.compiled:
            function = compiled.function
            for site in program.sites_of(compiled):
                at: ast.AST = site.call if function is None else def_name(function.node)
                call = site.call
                if isinstance(call.func, ast.Attribute) and call.func.attr == "generate":
                    if (compiled.library or "").startswith("transformers."):
                        yield Prediction(
                            call,
                            self.message,
                            "tensor 'input_ids' size mismatch at index 1",
                            ONCE_THEN_DYNAMIC,
                            ((call, "`generate` runs the prompt, then one token at a time with a growing cache"),),
                        )
                    continue
                if not repeated(program, site):
                    continue
                for argument in [*call.args, *(k.value for k in call.keywords)]:
                    why = values.shapes.changing(argument, call)
                    if why is None:
                        continue
                    yield Prediction(
                        at,
                        self.message,
                        f"tensor '{ast.unparse(argument)}' size mismatch",
                        ONCE_THEN_DYNAMIC,
                        ((call, f"`{ast.unparse(argument)}` changes shape between calls: {why}"),),
                        Severity.INFORMATION,
                        function.qualname if function is not None else None,
                    )
                    break
