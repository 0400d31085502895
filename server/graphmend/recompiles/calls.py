"""When and how a call of compiled code runs: how often (in a loop, or in a function called from
one), in what order with the program's other calls, and under which grad mode and autocast block."""

from __future__ import annotations

import ast

from .program import CallSite, Program

# Context managers and decorators that set the grad mode, and the mode each sets.
_GRAD_MODES = {
    "torch.no_grad": "no_grad",
    "torch.inference_mode": "inference_mode",
    "torch.enable_grad": "grad",
    "torch.autograd.no_grad": "no_grad",
    "torch.autograd.grad_mode.no_grad": "no_grad",
}
_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast", "torch.cuda.amp.autocast"})


def run_orders(program: Program, node: ast.AST, depth: int = 3) -> list[tuple[int, ...]]:
    """Every time a call runs, as `run_order` keys: once per call of its function (at module level,
    its own line)."""
    scope = program.scope_of(node)
    line = getattr(node, "lineno", 0)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        calls = program.calls_of(scope) if depth else []
        return [(*key, line) for call, _ in calls for key in run_orders(program, call, depth - 1)] or [(1 << 30, line)]
    return [(line,)]


def run_order(program: Program, node: ast.AST) -> tuple[int, ...]:
    """When a call runs first, as a key: its line at module level; in a function, its line after
    the key of the function's first call (a helper defined above the loop runs when called)."""
    return min(run_orders(program, node))


def repeated(program: Program, site: CallSite, depth: int = 2) -> bool:
    """Whether a call runs more than once: in a loop, or in a function called in one (or twice)."""
    if site.loops:
        return True
    scope = site.scope
    if depth and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        calls = program.calls_of(scope)
        if len(calls) > 1:
            return True
        return any(
            repeated(program, CallSite(call, site.compiled, outer, program.ancestors(call)), depth - 1)
            for call, outer in calls
        )
    return False


# -- the state a call runs in ------------------------------------------------------------------


def grad_mode(program: Program, node: ast.AST, depth: int = 2) -> str:
    """The grad mode a call runs in: "grad", "no_grad" or "inference_mode", from the `with`
    blocks and decorators above it, else what its function's callers run it in (all alike)."""
    for above in reversed(program.ancestors(node)):
        if isinstance(above, (ast.With, ast.AsyncWith)):
            for item in above.items:
                mode = _mode_of(program, item.context_expr)
                if mode is not None:
                    return mode
        if isinstance(above, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in above.decorator_list:
                mode = _mode_of(program, decorator)
                if mode is not None:
                    return mode
            if depth:
                modes = {grad_mode(program, call, depth - 1) for call, _ in program.calls_of(above)}
                if len(modes) == 1:
                    return modes.pop()
    return "grad"


def _mode_of(program: Program, expr: ast.expr) -> str | None:
    call = expr if isinstance(expr, ast.Call) else None
    name = program.qualified(call.func if call else expr)
    if name in _GRAD_MODES:
        return _GRAD_MODES[name]
    if name == "torch.set_grad_enabled" and call and call.args and isinstance(call.args[0], ast.Constant):
        return "grad" if call.args[0].value else "no_grad"
    return None


def autocast(program: Program, node: ast.AST) -> str | None:
    """The autocast block a call runs in, in its own words, or None."""
    for above in reversed(program.ancestors(node)):
        if isinstance(above, (ast.With, ast.AsyncWith)):
            for item in above.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call) and program.qualified(expr.func) in _AUTOCAST:
                    return ast.unparse(expr)
    return None
