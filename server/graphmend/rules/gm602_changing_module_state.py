from __future__ import annotations

import ast
from collections.abc import Iterator

from ..diagnostics import Severity
from ..recompiles import Change, Compiled, Program, Values
from ..recompiles.calls import grad_mode
from ..recompiles.program import def_name, first_self_read
from ..semantics import ClassInfo, FunctionInfo
from .base import Prediction, ProgramRule, RuleDocs
from .gm601_changing_number import EVERY_VALUE, ONCE

# torch modules whose forward reads `self.training` (their guard fails when the mode switches).
_READS_TRAINING = (
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "SyncBatchNorm",
    "RReLU",
)


class ChangingModuleState(ProgramRule):
    """Module state a program changes between calls of the compiled module."""

    docs = RuleDocs(
        what=(
            "flags the read, in a compiled module's `forward`, of an attribute the program assigns between "
            "calls (a flag, a temperature, the epoch), and the mode switch of `.train()`/`.eval()` between calls."
        ),
        why=(
            "Dynamo guards a module's attributes where `forward` reads them (`self.use_cache == True`) and its "
            "`training` flag where a submodule reads it. A flag or a float fails once and both graphs are kept; "
            "an int attribute is static: every new value compiles again, up to `recompile_limit` (8), then "
            "the module runs eagerly (measured on torch 2.13). Switching between training and evaluation costs "
            "one compile per mode, once."
        ),
        why_title="Why it recompiles",
        example=("model = torch.compile(net)\nfor epoch in range(10):\n    net.epoch = epoch\n    model(x)"),
        action=(
            "Keep a changing number in a 0-d tensor buffer updated in place (`self.epoch.fill_(epoch)`); a "
            "flag or a train/eval switch costs one compile per value, once."
        ),
        fix="none: what the attribute is elsewhere (a Python number, a checkpoint's state) would change.",
    )

    code = "GM602"
    confirmed_by = frozenset({"value"})
    name = "changing-module-state"
    message = "Keep this changing module attribute in a tensor buffer: compiled code guards its value and recompiles"

    def predict(self, program: Program, values: Values) -> Iterator[Prediction]:
        for compiled in program.compiled:
            function = compiled.function
            if compiled.cls is not None and compiled.instance:  # a compiled module: its `forward`
                forward, instance = compiled.cls.find_method("forward"), compiled.instance
            elif function is not None and function.owner is not None and compiled.site in function.node.decorator_list:
                forward, instance = function, frozenset({"self"})  # a compiled method, called by its class
            else:
                continue
            if forward is None:
                continue
            sites = program.sites_of(compiled)
            loops = {id(loop): loop for site in sites for loop in site.loops}
            for loop in loops.values():
                yield from self._attributes(instance, forward, loop, values, program)
                if compiled.cls is not None:
                    yield from self._mode_switch(compiled, forward, loop, program)

    def _attributes(
        self, instance: frozenset[str], forward: FunctionInfo, loop: ast.AST, values: Values, program: Program
    ) -> Iterator[Prediction]:
        """Attributes the loop sets (`model.temperature = t`, `self.step += 1`) that `forward` reads."""
        for node in ast.walk(loop):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                change = values.changing_number(node.value, node)
            elif isinstance(node, ast.AugAssign):  # `self.step += 1`: a new value every time it runs
                target = node.target
                kind = values.kinds.of(node.value, program.scope_of(node))
                why = f"`{ast.unparse(node).strip()}` at line {node.lineno}"
                change = Change(kind, why, node.lineno, loop) if kind is not None else None
            else:
                continue
            if not isinstance(target, ast.Attribute) or change is None:
                continue
            owner = target.value
            if isinstance(owner, ast.Name) and owner.id in instance:
                read: ast.AST | None = first_self_read(forward, target.attr)
            elif (
                isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id in instance
            ):  # `model.drop.p = ...`: the submodule's forward reads it, called from this forward
                read = _submodule_call(forward, owner.attr)
                if read is not None and not program.stacks_of_guards:
                    read = def_name(forward.node)
            else:
                continue
            if read is None:
                continue
            first = (
                values.first.value(node.value, node) if isinstance(node, ast.Assign) else None
            )  # `+=`: not its start
            # a module's int attribute is static (every value compiles); another object's is made dynamic
            static = change.kind == "int" and forward.owner is not None and forward.owner.is_module
            often = EVERY_VALUE if static else "once per value (two graphs)" if change.kind == "bool" else ONCE
            yield Prediction(
                read,
                self.message,
                f"self.{target.attr} == {first or '<its value at the first call>'}",
                often,
                ((node, f"`{ast.unparse(target)}` is set between calls: {change.why}"),),
                Severity.WARNING if static else Severity.INFORMATION,
                forward.qualname,
            )

    def _mode_switch(
        self, compiled: Compiled, forward: FunctionInfo, loop: ast.AST, program: Program
    ) -> Iterator[Prediction]:
        switches = {
            node.func.attr: node
            for node in ast.walk(loop)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("train", "eval")
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in compiled.instance
        }
        if len(switches) < 2:
            return
        modes = {grad_mode(program, site.call) for site in program.sites_of(compiled) if loop in site.ancestors}
        if len(modes) > 1:
            return  # the grad mode's guard fails first: GM604 reports it
        assert compiled.cls is not None
        read = _training_read(forward, compiled.cls, program)
        if read is None:
            return
        if isinstance(read, ast.Call) and not program.stacks_of_guards:  # a submodule's guard, torch < 2.13
            read = def_name(forward.node)
        yield Prediction(
            read,
            "Expect one compile per mode here: the program switches the compiled module between train() and eval()",
            "self.training == True (or a submodule's)",
            "once, for the second mode; both graphs are kept",
            ((switches["eval"], "the loop switches to evaluation here, and back with `.train()`"),),
            Severity.INFORMATION,
            forward.qualname,
        )


def _submodule_call(forward: FunctionInfo, submodule: str) -> ast.Call | None:
    """The first call of `self.<submodule>(...)` in `forward`: where a guard made in its forward is
    recorded (the innermost line of the program)."""
    calls = [
        n
        for n in ast.walk(forward.node)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == submodule
        and forward.is_self(n.func.value)
    ]
    return min(calls, key=lambda n: (n.lineno, n.col_offset), default=None)


def _training_read(forward: FunctionInfo, cls: ClassInfo, program: Program) -> ast.AST | None:
    """The first line of `forward` that reads the training flag: `self.training`, or a call of a
    submodule whose forward does (`nn.Dropout`, `nn.BatchNorm1d`, ...)."""
    reads: list[ast.AST] = []
    own = first_self_read(forward, "training")
    if own is not None:
        reads.append(own)
    init = cls.find_method("__init__")
    submodules: set[str] = set()
    if init is not None:
        for node in ast.walk(init.node):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
                target = node.targets[0]
                qualified = program.index.qualified_name(node.value.func) or ""
                if (
                    isinstance(target, ast.Attribute)
                    and init.is_self(target.value)
                    and qualified.startswith("torch.nn.")
                    and qualified.rsplit(".", 1)[-1] in _READS_TRAINING
                ):
                    submodules.add(target.attr)
    reads += [call for name in submodules if (call := _submodule_call(forward, name)) is not None]
    return min(reads, key=lambda n: (n.lineno, n.col_offset), default=None)  # type: ignore[attr-defined]
