from __future__ import annotations

import ast
from collections.abc import Iterator

from ..diagnostics import Severity
from ..recompiles import Compiled, Program, Values
from ..recompiles.program import def_name, first_read, first_self_read
from ..semantics import FunctionInfo
from .base import Prediction, ProgramRule, RuleDocs
from .gm601_changing_number import EVERY_VALUE, ONCE


class CompileInLoop(ProgramRule):
    """`torch.compile` called again and again, on code that changes each time."""

    docs = RuleDocs(
        what=(
            "flags a `torch.compile` run again for each step (in a loop, or in a function called repeatedly) on "
            "a function that closes over a changing number or on a module rebuilt with a changing hyperparameter."
        ),
        why=(
            "Dynamo caches compiled code on the code object, so a function or module compiled again reuses the "
            "first compile while its guards hold. A closure's number (`scale == 1`) or a rebuilt module's "
            "attribute (`negative_slope == 0.01`) is guarded: each new value compiles again. A module rebuilt with "
            "the same structure does not recompile (its parameters are graph inputs), so it is not flagged."
        ),
        why_title="Why it recompiles",
        example=("for scale in range(1, 5):\n    scaled = torch.compile(lambda t: t * scale)\n    scaled(x)"),
        action="Compile once, outside the loop, and pass what changes as an argument (a tensor, to avoid its guard).",
        fix="none: hoisting the compile moves what the closure or the module captures.",
    )

    code = "GM603"
    confirmed_by = frozenset({"value", "object", "size"})
    name = "compile-in-loop"
    message = "Compile once, outside the loop: each new compile of this code guards a changing value and recompiles"

    def predict(self, program: Program, values: Values) -> Iterator[Prediction]:
        for compiled in program.compiled:
            if not isinstance(compiled.site, ast.Call) or compiled.target is None:
                continue
            target = compiled.target
            if isinstance(target, ast.Lambda):
                yield from self._closure(compiled, target, target, values)
            elif (
                isinstance(target, ast.Name) and compiled.function is not None and compiled.function.parent is not None
            ):
                yield from self._closure(compiled, target, compiled.function.node, values)
            elif isinstance(target, ast.Call) and compiled.library is not None:
                yield from self._rebuilt(compiled, target, program, values)
            elif isinstance(target, ast.Call) and compiled.cls is not None:
                yield from self._rebuilt_here(compiled, target, values)

    def _closure(self, compiled: Compiled, target: ast.expr, body: ast.AST, values: Values) -> Iterator[Prediction]:
        """A lambda or nested function compiled where it is made, reading a number that changes."""
        assert isinstance(compiled.site, ast.Call)
        own = {a.arg for a in ast.walk(body) if isinstance(a, ast.arg)}
        free = sorted(
            {
                n.id
                for n in ast.walk(body)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in own
            }
        )
        for name in free:
            change = values.changing_number(ast.Name(name, ast.Load()), compiled.site)
            read = first_read(body, name) if change is not None else None
            if change is None or read is None:
                continue
            yield Prediction(
                read,
                self.message,
                f"{name} == {values.first.value(ast.Name(name, ast.Load()), compiled.site) or '<its value at the first compile>'}",
                EVERY_VALUE if change.kind == "int" else ONCE,
                ((compiled.site, f"compiled again each time, closing over `{name}`: {change.why}"),),
                Severity.WARNING if change.kind == "int" else Severity.INFORMATION,
            )

    def _rebuilt_here(self, compiled: Compiled, made: ast.Call, values: Values) -> Iterator[Prediction]:
        """`torch.compile(MLP(hidden))` per setting, `MLP` this file's module: an argument that sizes a
        layer in `__init__` changes the parameters' shapes (a guard on the whole call, at `forward`'s
        `def`); one kept as `self.<name>` is guarded where `forward` reads it."""
        assert compiled.cls is not None and isinstance(compiled.site, ast.Call)
        init, forward = compiled.cls.find_method("__init__"), compiled.cls.find_method("forward")
        if init is None or forward is None:
            return
        parameters = [a.arg for a in (*init.node.args.posonlyargs, *init.node.args.args)][1:]
        passed = [*zip(parameters, made.args), *((k.arg, k.value) for k in made.keywords if k.arg)]
        for parameter, argument in passed:
            change = values.changing_number(argument, compiled.site)
            if change is None:
                continue
            at, guard = _where_init_uses(init.node, forward, parameter)
            if at is None:
                continue
            yield Prediction(
                at,
                self.message,
                guard,
                ONCE if change.kind == "float" or guard.startswith("tensor") else EVERY_VALUE,
                ((compiled.site, f"`{ast.unparse(made)}` is built and compiled again each time: {change.why}"),),
                Severity.INFORMATION,
                forward.qualname,
            )
            return

    def _rebuilt(self, compiled: Compiled, made: ast.Call, program: Program, values: Values) -> Iterator[Prediction]:
        """`torch.compile(nn.LeakyReLU(slope))` in a loop over slopes: the guard is made in torch's
        `forward`, the recompile is recorded at the program's call of the compiled module."""
        assert isinstance(compiled.site, ast.Call)
        for argument in [*made.args, *(k.value for k in made.keywords)]:
            change = values.changing_number(argument, compiled.site)
            if change is None:
                continue
            calls = [site.call for site in program.sites_of(compiled)]
            if not calls:
                return
            yield Prediction(
                calls[0],
                self.message,
                f"<the attribute `{ast.unparse(made)}` keeps `{ast.unparse(argument)}` in> == "
                f"{values.first.value(argument, compiled.site) or '<its first value>'}",
                ONCE if change.kind == "float" else EVERY_VALUE,
                ((compiled.site, f"`{ast.unparse(made)}` is rebuilt and compiled each time: {change.why}"),),
                Severity.INFORMATION if change.kind == "float" else Severity.WARNING,
            )
            return


def _where_init_uses(
    init: ast.FunctionDef | ast.AsyncFunctionDef, forward: FunctionInfo, parameter: str
) -> tuple[ast.AST | None, str]:
    """Where a guard on what `__init__` makes of `parameter` is recorded: `forward`'s first read of
    the attribute it is kept in, or `forward`'s `def` when it sizes a layer (a parameter's shape)."""
    for node in ast.walk(init):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Name)
            and node.value.id == parameter
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
        ):
            read = first_self_read(forward, node.targets[0].attr)
            if read is not None:
                return read, f"self.{node.targets[0].attr} == <its first value>"
    for node in ast.walk(init):
        if isinstance(node, ast.Call) and any(
            isinstance(n, ast.Name) and n.id == parameter for a in node.args for n in ast.walk(a)
        ):
            return def_name(forward.node), f"tensor parameters' size mismatch (sized by `{parameter}`)"
    return None, ""
