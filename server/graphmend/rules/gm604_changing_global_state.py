from __future__ import annotations

import ast
from collections.abc import Iterator

from ..diagnostics import Severity
from ..recompiles import Compiled, Program, Values
from ..recompiles.calls import autocast, grad_mode, run_order, run_orders
from ..recompiles.program import CallSite, def_name
from .base import Prediction, ProgramRule, RuleDocs

_CASTS = {"double": "float64", "half": "float16", "bfloat16": "bfloat16"}
_DTYPES = {
    "torch.float64": "float64",
    "torch.double": "float64",
    "torch.float16": "float16",
    "torch.half": "float16",
    "torch.bfloat16": "bfloat16",
}


class ChangingGlobalState(ProgramRule):
    """One compiled function called under different grad modes, autocast or dtypes."""

    docs = RuleDocs(
        what=(
            "flags a compiled function or module the program calls in more than one global state: with and "
            "without grad (`torch.no_grad()`, a `@torch.no_grad()` helper), inside and outside `torch.autocast`, "
            "or on inputs cast to another dtype (`x.double()`, `x.half()`)."
        ),
        why=(
            "Dynamo's guards cover the grad mode, the autocast state and each input's dtype. A call in another "
            "state fails them and compiles again, once per state; both graphs are kept and reused after that "
            "(measured on torch 2.13: one recompile for training then evaluation under `no_grad`)."
        ),
        why_title="Why it recompiles",
        example=(
            "@torch.compile\n"
            "def predict(x, w):\n"
            "    return (x @ w).tanh()\n"
            "\n"
            "predict(x, w).sum().backward()\n"
            "with torch.no_grad():\n"
            "    predict(x, w)"
        ),
        action=(
            "Expect one compile per state; where that is too many, give each state its own compiled function "
            "or call it in one state."
        ),
        fix="none: the states are the program's choice.",
    )

    code = "GM604"
    confirmed_by = frozenset({"global", "tensor"})
    name = "changing-global-state"
    message = "Expect one compile per state here: the program calls this compiled code under different grad modes, autocast or dtypes"

    def predict(self, program: Program, values: Values) -> Iterator[Prediction]:
        for compiled in program.compiled:
            sites = sorted(program.sites_of(compiled), key=lambda site: run_order(program, site.call))
            if not sites:
                continue
            cast = _cast_between(compiled, sites, program)
            if cast is not None:
                yield self._cast(compiled, cast, sites)
                continue
            states = [(site, _state(site, program)) for site in sites]
            first = states[0][1]
            other = next(((site, state) for site, state in states[1:] if state != first), None)
            if other is None:
                continue
            site, state = other
            function = compiled.function
            at: ast.AST = site.call if function is None or compiled.library is not None else def_name(function.node)
            first_words, words = _words(first, state), _words(state, first)
            yield Prediction(
                at,
                self.message,
                _guard(first, state, site, compiled),
                "once per state; every graph is kept and reused",
                (
                    (states[0][0].call, f"called here {first_words}"),
                    (site.call, f"and here {words}"),
                ),
                Severity.INFORMATION,
                function.qualname if function is not None else None,
            )

    def _cast(self, compiled: Compiled, cast: ast.Call, sites: list[CallSite]) -> Prediction:
        """The module's parameters cast to another dtype between its calls (`model.to(torch.bfloat16)`)."""
        function = compiled.function
        at: ast.AST = sites[-1].call if function is None or compiled.library is not None else def_name(function.node)
        return Prediction(
            at,
            self.message,
            f"tensor parameters' dtype mismatch (`{ast.unparse(cast)}`)",
            "once per dtype; every graph is kept and reused",
            ((cast, "the parameters are cast here, between calls of the compiled module"),),
            Severity.INFORMATION,
            function.qualname if function is not None else None,
        )


def _cast_between(compiled: Compiled, sites: list[CallSite], program: Program) -> ast.Call | None:
    """A cast of the compiled module's parameters (`model.to(torch.bfloat16)`, `model.half()`) that
    runs after one of its calls and before another."""
    if not compiled.instance:
        return None
    keys = sorted(key for site in sites for key in run_orders(program, site.call))
    for call in program.calls_on_lines(compiled.instance):
        func = call.func
        if not (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in compiled.instance
        ):
            continue
        if _dtype(call, program) == "as given":
            continue
        when = run_order(program, call)
        if keys and keys[0] < when < keys[-1]:
            return call
    return None


State = tuple[str, str, tuple[tuple[str, str], ...]]  # grad mode, autocast, the casts at the call


def _state(site: CallSite, program: Program) -> State:
    """A call's state: its grad mode, its autocast block, and the arguments it casts to another
    dtype in the call (position or keyword → dtype; those it passes as they are do not count)."""
    mode = grad_mode(program, site.call)
    block = autocast(program, site.call)
    arguments = [
        *((str(i), a) for i, a in enumerate(site.call.args)),
        *((k.arg or "", k.value) for k in site.call.keywords),
    ]
    casts = tuple((key, dtype) for key, argument in arguments if (dtype := _dtype(argument, program)) != "as given")
    return ("no_grad" if mode == "inference_mode" else mode, block or "no autocast", casts)


def _dtype(argument: ast.expr, program: Program) -> str:
    """The dtype a call casts its argument to in the call (`x.double()`, `x.to(torch.float16)`), or "as given"."""
    if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute):
        method = argument.func.attr
        if method in _CASTS and not argument.args:
            return _CASTS[method]
        if method == "to":
            for value in [*argument.args, *(k.value for k in argument.keywords if k.arg == "dtype")]:
                dtype = _DTYPES.get(program.qualified(value) or "")
                if dtype is not None:
                    return dtype
    return "as given"


def _words(state: State, other: State) -> str:
    """What sets a call's state apart from the other's, in words."""
    mode, autocast, dtypes = state
    found = []
    if mode != other[0]:
        found.append("with grad" if mode == "grad" else "without grad")
    if autocast != other[1]:
        found.append(f"under `{autocast}`" if autocast != "no autocast" else "outside autocast")
    if dtypes != other[2]:
        found.append("on inputs " + (", ".join(f"cast to {dtype}" for _, dtype in dtypes) or "as given"))
    return ", ".join(found)


def _guard(first: State, other: State, site: CallSite, compiled: Compiled) -> str:
    """The guard that fails, in Dynamo's words: the global state's, else an input's dtype (named
    by the compiled function's parameter where known)."""
    changed = [name for name, a, b in zip(("grad_mode", "autocast"), first, other) if a != b]
    if changed:
        return f"GLOBAL_STATE changed: {', '.join(changed)}"
    parameters = compiled.positional
    for key in sorted(set(first[2]) ^ set(other[2])):
        position = key[0]
        name = parameters[int(position)] if position.isdigit() and int(position) < len(parameters) else position
        return f"tensor '{name}' dtype mismatch"
    return "each input's dtype"
