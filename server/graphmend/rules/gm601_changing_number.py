from __future__ import annotations

import ast
from collections.abc import Iterator

from ..diagnostics import Severity
from ..recompiles import Compiled, Program, Values
from ..recompiles.calls import repeated
from ..recompiles.program import CallSite, first_read
from ..recompiles.syntax import method_calls
from ..recompiles.tensors import OPTIMIZERS, SCHEDULERS
from .base import PredictedFix, Prediction, ProgramRule, RuleDocs

ONCE = "once, for its second value; Dynamo then compiles it as a dynamic value (`automatic_dynamic_shapes`)"
EVERY_VALUE = (
    "at every new value, up to `torch._dynamo.config.recompile_limit` (8) compiles; then the function runs eagerly"
)


class ChangingNumber(ProgramRule):
    """A Python number that changes between calls, read by compiled code."""

    docs = RuleDocs(
        what=(
            "flags the read, in compiled code, of a Python number that changes between calls: an argument "
            "(a learning rate from a schedule, a loop index, `len()` of a growing list), a global (a step "
            "counter), or an optimizer's `lr` that a scheduler steps."
        ),
        why=(
            "Dynamo guards a Python number's value where compiled code reads it (`lr == 0.1`). An argument "
            "fails its guard once: Dynamo then compiles it as a dynamic value. A global int is never made "
            "dynamic: every new value compiles again, up to `recompile_limit` (8), then the function runs "
            "eagerly (measured on torch 2.13)."
        ),
        why_title="Why it recompiles",
        example=(
            "@torch.compile\n"
            "def update(w, g, lr):\n"
            "    return w - lr * g\n"
            "\n"
            "for step in range(100):\n"
            "    update(w, g, scheduler.get_last_lr()[0])"
        ),
        action=(
            "Pass the number as a tensor (`torch.tensor(lr)`, updated in place with `fill_`), or read it "
            "outside the compiled function."
        ),
        fix=(
            "for an argument the compiled function only does arithmetic with (`+`, `-`, `*`, `/`), "
            "`torch.tensor(lr)` at every call: a tensor's value is not guarded, one graph serves every value "
            "(measured: the recompile gone, outputs equal). Unsafe: the number becomes a 0-d float32 (int64) "
            "tensor, which may round differently against a float64, float16 or bfloat16 tensor. Refused where "
            "the function reads it as a Python number (a comparison, a call, a loop count, a format string), "
            "or where what is passed may already be a tensor (`torch.tensor` of a tensor copies it with a "
            "warning at every call). A rate that is a tensor (`torch.tensor(0.01)` changed with `fill_`, the "
            "rates of an optimizer built with `lr=torch.tensor(...)`) is not flagged: its value is not guarded."
        ),
    )

    code = "GM601"
    confirmed_by = frozenset({"value", "length"})
    name = "changing-number"
    message = "Pass this changing Python number as a tensor: compiled code guards its value and recompiles"

    def predict(self, program: Program, values: Values) -> Iterator[Prediction]:
        for compiled in program.compiled:
            function = compiled.function
            if function is None:
                continue
            for site in program.sites_of(compiled):
                if not repeated(program, site):
                    continue
                yield from self._arguments(compiled, site, values)
                yield from self._globals(compiled, site, program, values)
                yield from self._optimizer_rates(compiled, site, program, values)

    def _arguments(self, compiled: Compiled, site: CallSite, values: Values) -> Iterator[Prediction]:
        function = compiled.function
        assert function is not None
        passed = list(zip(compiled.positional, site.call.args))
        passed += [(k.arg, k.value) for k in site.call.keywords if k.arg is not None]
        for parameter, argument in passed:
            if isinstance(argument, ast.Starred):
                break
            change = values.changing_number(argument, site.call)
            read = first_read(function.node, parameter) if change is not None else None
            if change is None or read is None:
                continue
            often = "once per value (two graphs)" if change.kind == "bool" else ONCE
            if change.kind == "int" and _counts_a_loop(function.node, parameter):
                often = EVERY_VALUE + " (it sets how many times a loop runs, which Dynamo unrolls)"
            fix, no_fix = _as_tensor(function.node, parameter, change.kind, compiled, values)
            yield Prediction(
                read,
                self.message,
                f"{parameter} == {values.first.value(argument, site.call) or '<its first value>'}",
                often,
                ((site.call, f"`{ast.unparse(argument)}` changes between calls: {change.why}"),),
                Severity.WARNING if often.startswith("at every") else Severity.INFORMATION,
                function.qualname,
                fix,
                no_fix,
            )

    def _globals(self, compiled: Compiled, site: CallSite, program: Program, values: Values) -> Iterator[Prediction]:
        function = compiled.function
        assert function is not None
        local = function.local_names | function.parameter_names
        module_names = program.index.module_names
        for name in sorted(
            {n.id for n in ast.walk(function.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        ):
            if (
                name in local
                or name not in module_names
                or name in program.index.functions
                or name in program.index.classes
            ):
                continue
            change = values.changing_number(ast.Name(name, ast.Load()), site.call)
            read = first_read(function.node, name) if change is not None else None
            if change is None or read is None:
                continue
            often = EVERY_VALUE if change.kind in ("int", "bool") else ONCE
            yield Prediction(
                read,
                self.message,
                f"G['{name}'] == {values.first.value(ast.Name(name, ast.Load()), site.call) or '<its value at the first call>'}",
                often,
                ((site.call, f"the global `{name}` changes between these calls: {change.why}"),),
                Severity.WARNING if change.kind == "int" else Severity.INFORMATION,
                function.qualname,
            )

    def _optimizer_rates(
        self, compiled: Compiled, site: CallSite, program: Program, values: Values
    ) -> Iterator[Prediction]:
        """`optimizer.step()` in compiled code while a scheduler changes the optimizer's float `lr`."""
        function = compiled.function
        assert function is not None
        for call, optimizer in method_calls(function.node, "step"):
            if _bound_to(program, optimizer, OPTIMIZERS) is None:
                continue
            rate = values.kinds.tensors.optimizer_rate(optimizer, program.index.tree)
            if rate is not None and values.kinds.tensors.reason(*rate) is not None:
                continue  # its rate may be a tensor (`lr=torch.tensor(...)`): a tensor's value is not guarded
            for loop in site.loops:
                scheduler = _stepped_scheduler(program, loop, optimizer)
                if scheduler is not None:
                    yield Prediction(
                        call,
                        self.message,
                        f"self.param_groups[0]['lr'] == <{optimizer}'s first rate>",
                        ONCE,
                        (
                            (
                                scheduler,
                                f"`{ast.unparse(scheduler.func)}` changes `{optimizer}`'s float `lr` between calls",
                            ),
                        ),
                        Severity.INFORMATION,
                        function.qualname,
                    )
                    break


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _as_tensor(
    function: ast.FunctionDef | ast.AsyncFunctionDef, parameter: str, kind: str, compiled: Compiled, values: Values
) -> tuple[PredictedFix | None, str | None]:
    """The argument passed as a 0-d tensor at every call of the compiled function (a tensor's value is
    not guarded: one graph for every value), where the function only does arithmetic with it and
    every call passes what is known to be a Python number (`torch.tensor` of a tensor copies it with
    a warning at every call); else why not."""
    program = values.program
    if kind not in ("int", "float"):
        return None, f"`{parameter}` may be a {kind}, which a tensor would not stand for"
    if program.index.imports.get("torch") != "torch":
        return None, "`torch` is not imported under its own name in this file"
    refusal = _arithmetic_only(function, parameter, 2)
    if refusal is not None:
        return None, refusal
    wraps = []
    for site in program.sites_of(compiled):
        argument = _passed(site.call, function, parameter, compiled)
        if argument is None:
            return None, f"the call at line {site.call.lineno} does not pass `{parameter}` by position or keyword"
        tensor = values.kinds.tensors.reason(argument, site.scope, unknown=True)
        if tensor is not None:
            return None, f"`{ast.unparse(argument)}` at line {site.call.lineno} may be a tensor already ({tensor})"
        wraps.append((argument, "torch.tensor({})"))
    dtype = "float32 (the default dtype)" if kind == "float" else "int64"
    hazards = (
        f"`{parameter}` becomes a 0-d {dtype} tensor: with a float64, float16 or bfloat16 tensor the arithmetic may "
        "round differently, and a result that was a Python number is a tensor",
    )
    return PredictedFix(f"Pass `{parameter}` as a 0-d tensor", tuple(wraps), hazards), None


def _arithmetic_only(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, depth: int) -> str | None:
    """Why a tensor in place of the number `name` could change what `function` does, or None: every
    read of it is an operand of `+ - * /` arithmetic whose result is returned or assigned (a name
    assigned it is checked the same way, `depth` names deep); a comparison, a call, a subscript or a
    format string reads a Python number."""
    parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    for read in (n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name):
        if not isinstance(read.ctx, ast.Load):
            if depth == 2:  # the parameter itself: a new value from within the function
                return f"`{name}` is assigned in `{function.name}` at line {read.lineno}"
            continue
        top: ast.AST = read
        while isinstance(parents.get(id(top)), ast.BinOp) and isinstance(parents[id(top)].op, _ARITHMETIC):  # type: ignore[attr-defined]
            top = parents[id(top)]
        holder = parents.get(id(top))
        if top is read or not isinstance(holder, (ast.Return, ast.Assign, ast.AugAssign)):
            return (
                f"`{name}` is read as a Python number at line {read.lineno}, where a tensor would behave "
                "differently (only arithmetic whose result is returned or assigned is rewritten)"
            )
        if isinstance(holder, ast.Assign):
            for target in holder.targets:
                if not isinstance(target, ast.Name):
                    return f"`{name}` goes into `{ast.unparse(target)}` at line {holder.lineno}"
                inner = _arithmetic_only(function, target.id, depth - 1) if depth else "too many names deep"
                if inner is not None and target.id != name:
                    return inner
    return None


def _passed(
    call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef, parameter: str, compiled: Compiled
) -> ast.expr | None:
    """The argument a call passes for `parameter` (by keyword, or by position past `self`)."""
    keyword = next((k.value for k in call.keywords if k.arg == parameter), None)
    if keyword is not None:
        return keyword
    positional = compiled.positional
    if parameter not in positional or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    position = positional.index(parameter)
    return call.args[position] if position < len(call.args) else None


def _counts_a_loop(function: ast.AST, name: str) -> bool:
    """`for _ in range(name)`: the number is a trip count, which Dynamo specialises at every value."""
    return any(
        isinstance(n, ast.For)
        and isinstance(n.iter, ast.Call)
        and isinstance(n.iter.func, ast.Name)
        and n.iter.func.id == "range"
        and any(isinstance(a, ast.Name) and a.id == name for a in ast.walk(n.iter))
        for n in ast.walk(function)
    )


def _bound_to(program: Program, name: str, prefix: str) -> ast.Call | None:
    """The module-level `name = <prefix>...(...)` call, when that is its one binding."""
    values = [
        s.value
        for s in program.index.tree.body
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)
    ]
    if len(values) != 1 or not isinstance(values[0], ast.Call):
        return None
    qualified = program.qualified(values[0].func)
    return values[0] if qualified is not None and qualified.startswith(prefix) else None


def _stepped_scheduler(program: Program, loop: ast.AST, optimizer: str) -> ast.Call | None:
    """`scheduler.step()` in the loop, where `scheduler` is a torch LR scheduler of `optimizer`."""
    for call, receiver in method_calls(loop, "step"):
        made = _bound_to(program, receiver, SCHEDULERS)
        if made is not None and made.args and isinstance(made.args[0], ast.Name) and made.args[0].id == optimizer:
            return call
    return None
