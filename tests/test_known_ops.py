"""Every entry of the allowlist (`graphmend.analysis.known_ops`) holds in the installed torch.

A predicated rewrite is safe only when every operation it newly runs is on the allowlist, so each
entry is a claim: the operation exists, writes nothing it was given, draws no random number, warns
of nothing, and (unless `hazards.py` shields it) gives a finite gradient where `torch.where` sends it
a zero one. These tests make torch answer for each claim instead of trusting the list: each entry is
called on zeros, negatives and large values under a dispatch mode that sees every ATen operator it
runs (its schema says whether it writes an input; its tags whether it draws random numbers), with
warnings recorded and the global generator's state compared; then a zero gradient is sent back.
The generated facts (`torch_ops`) are checked against the entries too: nothing allowlisted is
random, in place or a host sync by torch's own account.
"""

from __future__ import annotations

import ast
import copy
import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from graphmend.analysis import hazards, known_ops, torch_ops  # noqa: E402

# Values an operation may meet on the side a condition excluded: zeros (a whole row), negatives,
# large magnitudes.
X = [[0.0, -1.0, 2.0, -3.0], [1e4, -1e4, 0.5, 0.0], [0.0, 0.0, 0.0, 0.0]]
Y = [[1.0, 2.0, 0.0, -2.0], [3.0, -0.5, 4.0, 1.0], [0.0, 1.0, 0.0, -1.0]]
# One element along the last dimension: where a statistic of one value is undefined (`std`).
NARROW_X = [[0.0], [1e4], [-2.0]]
NARROW_Y = [[1.0], [0.0], [3.0]]

# The arguments after the tensor each operation is called on (`torch.add(x, y)`, `x.add(y)`), or the
# whole call where the first argument is not `x` (`{}` stands for the callable).
ARGUMENTS: dict[str, str] = {
    **dict.fromkeys("add sub subtract mul multiply rsub maximum minimum fmax fmin isclose".split(), "y"),
    **dict.fromkeys("eq ne gt ge lt le greater greater_equal less less_equal not_equal".split(), "y"),
    **dict.fromkeys("logical_and logical_or logical_xor div divide true_divide floor_divide fmod".split(), "y"),
    "remainder": "y",
    "pow": "2.5",
    "addcmul": "y, y",
    "lerp": "y, 0.3",
    "clamp": "-1.0, 1.0",
    "clip": "-1.0, 1.0",
    "clamp_min": "0.0",
    "clamp_max": "0.0",
    "amax": "-1",
    "amin": "-1",
    "logsumexp": "-1",
    "cumsum": "0",
    "sort": "-1",
    "argsort": "-1",
    "softmax": "-1",
    "log_softmax": "-1",
    "softmin": "-1",
    "view": "12",
    "view_as": "y",
    "reshape": "(4, 3)",
    "reshape_as": "y",
    "unflatten": "1, (2, 2)",
    "unsqueeze": "0",
    "transpose": "0, 1",
    "swapaxes": "0, 1",
    "swapdims": "0, 1",
    "permute": "(1, 0)",
    "movedim": "0, 1",
    "moveaxis": "0, 1",
    "expand": "(2, 3, 4)",
    "expand_as": "y",
    "broadcast_to": "(2, 3, 4)",
    "repeat": "2, 1",
    "tile": "(2, 1)",
    "split": "2",
    "chunk": "2",
    "tensor_split": "2",
    "narrow": "1, 0, 2",
    "select": "0, 1",
    "flip": "(0,)",
    "roll": "1, 0",
    "to": "torch.float64",
    "type_as": "y",
    "masked_fill": "m, 0.5",
    "index_select": "1, j",
    "gather": "1, i",
    "take_along_dim": "i, 1",
    "matmul": "y.t()",
    "mm": "y.t()",
    "where": "m, y",
    "pad": "(1, 1)",
    "new_zeros": "(2, 2)",
    "new_ones": "(2, 2)",
    "new_full": "(2, 2), 3.0",
    "full_like": "2.0",
    "layer_norm": "(4,)",
    "rms_norm": "(4,)",
    "group_norm": "1",
    "glu": "-1",
    "prelu": "torch.tensor([0.25])",
}
# Whole calls, where the tensor `x` is not the first argument, or another input fits the operation.
CALLS: dict[str, str] = {
    "torch.where": "{}(m, x, y)",
    "Tensor.where": "x.where(m, y)",
    "torch.bmm": "{}(x.unsqueeze(0), y.t().unsqueeze(0))",
    "Tensor.bmm": "x.unsqueeze(0).bmm(y.t().unsqueeze(0))",
    "torch.baddbmm": "{}(torch.zeros(1, 3, 3), x.unsqueeze(0), y.t().unsqueeze(0))",
    "Tensor.baddbmm": "x[:, :3].unsqueeze(0).baddbmm(x.unsqueeze(0), y.t().unsqueeze(0))",
    "torch.addmm": "{}(x[:, :3], x, y.t())",
    "Tensor.addmm": "x[:, :3].addmm(x, y.t())",
    "torch.einsum": '{}("ij,kj->ik", x, y)',
    "torch.outer": "{}(x[0], y[0])",
    "Tensor.outer": "x[0].outer(y[0])",
    "torch.cat": "{}([x, y])",
    "torch.concat": "{}([x, y])",
    "torch.concatenate": "{}([x, y])",
    "torch.stack": "{}([x, y])",
    "torch.hstack": "{}([x, y])",
    "torch.vstack": "{}([x, y])",
    "torch.zeros": "{}(2, 3)",
    "torch.ones": "{}(2, 3)",
    "torch.full": "{}((2, 3), 1.5)",
    "torch.arange": "{}(5)",
    "torch.eye": "{}(3)",
    "torch.nn.functional.linear": "{}(x, w)",
    "torch.nn.functional.bilinear": "{}(x, y, torch.ones(2, 4, 4))",
    "torch.nn.functional.conv1d": "{}(seq, torch.ones(3, 2, 3))",
    "torch.nn.functional.conv2d": "{}(img, torch.ones(3, 2, 3, 3))",
    "torch.nn.functional.conv3d": "{}(vol, torch.ones(3, 2, 3, 3, 3))",
    "torch.nn.functional.conv_transpose1d": "{}(seq, torch.ones(2, 3, 3))",
    "torch.nn.functional.conv_transpose2d": "{}(img, torch.ones(2, 3, 3, 3))",
    "torch.nn.functional.conv_transpose3d": "{}(vol, torch.ones(2, 3, 3, 3, 3))",
    "torch.nn.functional.embedding": "{}(i, w)",
    "torch.nn.functional.batch_norm": "{}(x, torch.zeros(4), torch.ones(4))",
    "torch.nn.functional.pixel_shuffle": "{}(img.repeat(1, 2, 1, 1), 2)",
    "torch.nn.functional.pixel_unshuffle": "{}(img, 2)",
}
POOLING_INPUT = {"1d": ("seq", "2"), "2d": ("img", "2"), "3d": ("vol", "2")}


def _call_text(name: str) -> str:
    """The call that exercises allowlisted `name` on the module's inputs."""
    if name in CALLS:
        return CALLS[name].format(_callable(name))
    bare = name.rsplit(".", 1)[-1]
    arguments = ARGUMENTS.get(bare, "")
    if "pool" in bare:
        tensor, size = POOLING_INPUT[bare[-2:]]
        return f"{_callable(name)}({tensor}, {size if 'adaptive' not in bare else '1'})"
    if name.startswith(known_ops.METHOD):
        return f"x.{bare}({arguments})"
    return f"{_callable(name)}(x{', ' + arguments if arguments else ''})"


def _callable(name: str) -> str:
    return name.replace(known_ops.FUNCTIONAL, "F.", 1)


def _inputs(x: list[list[float]] = X, y: list[list[float]] = Y) -> dict[str, Any]:
    """Fresh leaves (the floating ones require grad) and the other values the calls use."""
    leaves = {
        "x": torch.tensor(x),
        "y": torch.tensor(y),
        "w": torch.tensor([[0.5, -1.0, 2.0, 0.0]] * 5),
        "seq": torch.randn(1, 2, 8, generator=torch.Generator().manual_seed(0)),
        "img": torch.randn(1, 2, 4, 4, generator=torch.Generator().manual_seed(1)),
        "vol": torch.randn(1, 2, 4, 4, 4, generator=torch.Generator().manual_seed(2)),
    }
    for value in leaves.values():
        value.requires_grad_(True)
    return {
        **leaves,
        "m": torch.tensor(x) > 0,
        "i": torch.tensor([[0, 1], [2, 3], [1, 1]]),
        "j": torch.tensor([0, 2]),
        "torch": torch,
        "F": F,
    }


class _Dispatched(TorchDispatchMode):
    """Every ATen operator a call runs, with the storages it writes."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[Any, list[int]]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        written = []
        schema = func._schema
        flat = list(args) + list((kwargs or {}).values())
        for argument, value in zip(schema.arguments, flat):
            if argument.alias_info is not None and argument.alias_info.is_write and isinstance(value, torch.Tensor):
                written.append(value.untyped_storage().data_ptr())
        self.seen.append((func, written))
        return func(*args, **(kwargs or {}))


def _allowlisted_operations() -> list[str]:
    return sorted(name for name in known_ops.ALLOWED if not known_ops.is_layer(name))


@pytest.mark.parametrize("name", _allowlisted_operations())
def test_an_allowlisted_operation_writes_draws_and_warns_nothing(name: str) -> None:
    _effect_free(name, _inputs())
    try:
        eval(_call_text(name), {}, _inputs(NARROW_X, NARROW_Y))  # noqa: S307
    except (RuntimeError, IndexError, ValueError):
        return  # the call's sizes need more than one element
    _effect_free(name, _inputs(NARROW_X, NARROW_Y))


def _effect_free(name: str, inputs: dict[str, Any]) -> None:
    storages = {v.untyped_storage().data_ptr() for v in inputs.values() if isinstance(v, torch.Tensor)}
    before = {key: value.detach().clone() for key, value in inputs.items() if isinstance(value, torch.Tensor)}
    state = torch.get_rng_state()
    with warnings.catch_warnings(record=True) as caught, _Dispatched() as dispatched:
        warnings.simplefilter("always")
        eval(_call_text(name), {}, inputs)  # noqa: S307 - the test's own call texts
    assert not [str(w.message) for w in caught], f"{name} warns"
    assert torch.equal(torch.get_rng_state(), state), f"{name} draws from the global generator"
    for func, written in dispatched.seen:
        assert torch.Tag.nondeterministic_seeded not in func.tags, f"{name} runs the random {func}"
        assert not set(written) & storages, f"{name} runs {func}, which writes an input in place"
    for key, value in before.items():
        assert torch.equal(inputs[key].detach(), value), f"{name} changed `{key}`"


@pytest.mark.parametrize(
    "name", [n for n in _allowlisted_operations() if not known_ops.ALLOWED[n].shielded and "pool" not in n]
)
def test_a_total_operation_turns_a_zero_gradient_into_a_finite_one(name: str) -> None:
    """`torch.where` sends a zero gradient to the side it does not select: a total operation must
    give back a finite one (0 × a finite derivative), on zeros, negatives and large values, and
    on one element along the last dimension."""
    _finite_from_zero(name, _inputs())
    narrow = _inputs(NARROW_X, NARROW_Y)
    try:
        eval(_call_text(name), {}, _inputs(NARROW_X, NARROW_Y))  # noqa: S307
    except (RuntimeError, IndexError, ValueError):
        return  # the call's sizes need more than one element (`view(12)`, `narrow(1, 0, 2)`)
    _finite_from_zero(name, narrow)


def _finite_from_zero(name: str, inputs: dict[str, Any]) -> None:
    result = eval(_call_text(name), {}, inputs)  # noqa: S307
    outputs = [t for t in (result if isinstance(result, (tuple, list)) else [result]) if isinstance(t, torch.Tensor)]
    outputs = [t for t in outputs if t.requires_grad]
    if not outputs:
        return  # a comparison, a cast to an integer, a factory: no gradient flows back
    for output in outputs:
        if output.is_floating_point():
            assert torch.isfinite(output).all(), f"{name} gives inf or NaN on finite inputs"
    leaves = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    gradients = torch.autograd.grad(
        outputs, leaves, grad_outputs=[torch.zeros_like(t) for t in outputs], allow_unused=True
    )
    for gradient in gradients:
        if gradient is not None:
            assert torch.isfinite(gradient).all(), f"{name}: a zero gradient becomes NaN or inf"


# Values a guard keeps from a branch (`torch.isfinite(x).all()`, an fp16 overflow clamp's test).
NON_FINITE_X = [[float("inf"), float("-inf"), float("nan"), 1.0], [3e38, -3e38, 0.0, 2.0], [0.0, 1.0, -1.0, 0.5]]
NON_FINITE_Y = [[float("nan"), 1.0, float("inf"), 2.0], [1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5]]


@pytest.mark.parametrize(
    "name", sorted(n for n in known_ops.FINITE_BACKWARD if not known_ops.is_layer(n) and n not in known_ops.SCALINGS)
)
def test_a_finite_backward_keeps_a_zero_gradient_zero_on_inf_and_nan(name: str) -> None:
    """Review 7 (issue 67): `sin`'s derivative at inf is NaN, and 0 × NaN reaches the weights. What
    `FINITE_BACKWARD` holds must give a finite gradient from a zero one on inf, -inf, NaN and
    values near float32's largest (the loss may hold inf or NaN: those are not judged)."""
    for inputs in (_inputs(NON_FINITE_X, NON_FINITE_Y), _complex(_inputs(NON_FINITE_X, NON_FINITE_Y))):
        try:
            result = eval(_call_text(name), {}, inputs)  # noqa: S307 - the test's own call texts
        except (RuntimeError, NotImplementedError, TypeError):
            assert inputs["x"].is_complex(), name
            continue  # no complex kernel or derivative (DTYPE_LIMITED, judged apart)
        outputs = [
            t for t in (result if isinstance(result, (tuple, list)) else [result]) if isinstance(t, torch.Tensor)
        ]
        outputs = [t for t in outputs if t.requires_grad]
        leaves = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
        if not outputs:
            continue  # no gradient flows back
        gradients = torch.autograd.grad(
            outputs, leaves, grad_outputs=[torch.zeros_like(t) for t in outputs], allow_unused=True
        )
        finite = all(torch.isfinite(g).all() for g in gradients if g is not None)
        if inputs["x"].is_complex() and name in known_ops.REAL_FINITE_BACKWARD:
            assert not finite, f"{name} keeps a complex zero gradient finite: not for REAL_FINITE_BACKWARD"
        else:
            assert finite, f"{name}: a zero gradient becomes NaN or inf on inf or NaN ({inputs['x'].dtype})"


def _complex(inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs with `x` and `y` complex (review 10: `sgn`'s complex backward divides by |z|)."""
    for key in ("x", "y"):
        inputs[key] = inputs[key].detach().to(torch.complex64).requires_grad_()
    return inputs


def test_an_operation_outside_the_finite_backward_makes_nan_from_a_zero_gradient() -> None:
    """The reason the list exists: `sin` (total on finite values, allowlisted) at inf."""
    x = torch.tensor([float("inf"), 1.0], requires_grad=True)
    (gradient,) = torch.autograd.grad(torch.sin(x), x, torch.zeros(2))
    assert torch.isnan(gradient[0]) and not known_ops.finite_backward("torch.sin")


_DTYPE_KINDS = {"integer": (torch.int64, torch.uint8), "bool": (torch.bool,), "complex": (torch.complex64,)}
_CASTS = frozenset("float double half bfloat16 long int bool to type_as".split())


def _inputs_of(dtype: Any) -> dict[str, Any]:
    """The calls' inputs, every floating one as `dtype` (rounded first for an integer one)."""
    values = _inputs()
    for key in ("x", "y", "w", "seq", "img", "vol"):
        value = values[key].detach()
        values[key] = (
            value.to(dtype).requires_grad_()  # an operation with no complex derivative raises as autograd records
            if dtype.is_complex
            else (value > 0 if dtype == torch.bool else value.round().to(dtype))
        )
    values["m"] = values["x"].real > 0 if dtype.is_complex else values["x"] if dtype == torch.bool else values["x"] > 0
    return values


@pytest.mark.parametrize("name", sorted(n for n in known_ops.ALLOWED if not known_ops.is_layer(n)))
def test_the_dtypes_an_operation_raises_for_are_the_ones_torch_has_no_kernel_for(name: str) -> None:
    """`known_ops.DTYPE_LIMITED` is what torch does: each dtype kind listed raises (or warns, a
    cast of a complex tensor, which torch warns about once a process), and no other does. Every
    allowlisted operation, a complex input requiring grad (review 10: `nan_to_num` computes a
    complex tensor but raises as autograd records it)."""
    raising = set()
    for kind, dtypes in _DTYPE_KINDS.items():
        for dtype in dtypes:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    eval(_call_text(name), {}, _inputs_of(dtype))  # noqa: S307 - the test's own call texts
            except Exception:  # noqa: BLE001 - any error (or warning) is what is measured
                raising.add(kind)
    listed = set(known_ops.dtype_limited(name))
    if name.removeprefix(known_ops.METHOD) in _CASTS and name.startswith(known_ops.METHOD):
        raising.add("complex")  # warned once already in this process, or now
    assert raising == listed, f"{name} raises for {sorted(raising)}, listed {sorted(listed)}"


def test_every_shielded_operation_has_a_shield() -> None:
    """A restricted domain is allowlisted only because `hazards.py` shields it; and every
    operation `hazards.py` shields is allowlisted as shielded, not as total."""
    shielded = {n.rsplit(".", 1)[-1] for n, entry in known_ops.ALLOWED.items() if entry.shielded}
    domains = hazards._AT_ONE | hazards._AT_ZERO | hazards._DIVISORS | {"pow"}
    assert shielded <= domains
    assert not {n.rsplit(".", 1)[-1] for n, e in known_ops.ALLOWED.items() if not e.shielded} & domains


def test_torch_states_no_effect_for_an_allowlisted_operation() -> None:
    """What torch says of its own operators (`torch_ops`, generated from its schemas, tags and
    signatures) contradicts no entry: none is random, in place or a host sync, and an entry whose
    functional form has a training path on by default, or an effect an argument turns on, names
    that argument (but `inplace=`, which `purity.call_impurity` refuses wherever it is given)."""
    for name, entry in known_ops.ALLOWED.items():
        assert name not in torch_ops.RANDOM, name
        assert name not in torch_ops.MUTATES, name
        assert name not in torch_ops.SYNCS or name.rsplit(".", 1)[-1] in ("max", "min", "any", "all"), name
        conditional = torch_ops.CONDITIONAL.get(name)
        if conditional is not None and conditional[0] != "inplace":  # `inplace=` is refused on every call
            assert entry.falsy == conditional[0], name
        training = torch_ops.TRAINING.get(name)
        if training is not None and training[1] is not False:
            assert entry.falsy == training[0], name
        warned = torch_ops.WARNS_WITHOUT.get(name)
        if warned is not None:
            assert entry.needs == warned, name


@pytest.mark.parametrize("name", sorted(n for n in known_ops.ALLOWED if known_ops.is_layer(n)))
def test_an_allowlisted_layer_exists(name: str) -> None:
    assert isinstance(getattr(torch.nn, name.rsplit(".", 1)[-1]), type)


@pytest.mark.parametrize(
    "name", sorted(n for n in known_ops.FINITE_BACKWARD if not known_ops.is_layer(n) and known_ops.finite_backward(n))
)
def test_no_finite_backward_gives_torchs_immutable_zero_gradient(name: str) -> None:
    """Review 10: `torch.sgn`'s gradient is torch's immutable zero tensor (`w.grad.mul_(2)` raises);
    merged by torch.where it is an ordinary one, so code that raised no longer does. An operation
    whose backward keeps a zero gradient zero gives an ordinary gradient, as the merge does."""
    inputs = _inputs()
    result = eval(_call_text(name), {}, inputs)  # noqa: S307 - the test's own call texts
    outputs = [t for t in (result if isinstance(result, (tuple, list)) else [result]) if isinstance(t, torch.Tensor)]
    outputs = [t for t in outputs if t.requires_grad]
    leaves = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    if not outputs:
        return
    gradients = torch.autograd.grad(outputs, leaves, [torch.ones_like(t) for t in outputs], allow_unused=True)
    assert not [g for g in gradients if g is not None and torch._is_zerotensor(g)], name


@pytest.mark.parametrize("name", ["torch.div", "torch.divide", "Tensor.div", "Tensor.divide"])
def test_the_dtypes_division_with_a_rounding_mode_raises_for_are_listed(name: str) -> None:
    """Review 10: `h.div(2, rounding_mode="floor")` raises for a complex `h`, which plain `h / 2`
    does not; `dtype_limited(name, ["rounding_mode"])` says so, measured for both modes."""
    raising = set()
    for kind, dtypes in _DTYPE_KINDS.items():
        for dtype in dtypes:
            x = _inputs_of(dtype)["x"]
            for mode in ("floor", "trunc"):
                try:
                    getattr(torch if name.startswith("torch.") else x, name.rsplit(".", 1)[-1])(
                        *((x, 2) if name.startswith("torch.") else (2,)), rounding_mode=mode
                    )
                except Exception:  # noqa: BLE001 - any error is what is measured
                    raising.add(kind)
    assert raising == set(known_ops.dtype_limited(name, ["rounding_mode"])), name


# Ranks and sizes a tensor may have where the branch did not run (issue 67, reviews 9 and 10:
# `torch.cumsum(h, 1)`, `h.tril()`, `h.repeat(1)` of a 1-d or 0-d `h`): none, an empty vector, a
# vector, an empty matrix, a matrix, three dimensions.
SHAPES = ((), (0,), (5,), (3, 0), (3, 4), (2, 3, 4))
# What a probe call may use: the tensors it is called on (all of one shape), a mask of them, torch.
_PROBE_NAMES = frozenset({"x", "y", "m", "torch", "F"})


def _probe_calls(name: str) -> list[str]:
    """The calls that measure whether `name` runs on every shape: its sample call where that passes
    only tensors of `x`'s shape, numbers and dimensions 0 or -1 (else none: its calls pass sizes),
    and, where it takes a `dim`, the call with `dim=0` and with `dim=-1`."""
    if known_ops.is_layer(name):
        return [f"torch.nn.{name.rsplit('.', 1)[-1]}()(x)"]
    text = _call_text(name)
    tree = ast.parse(text, mode="eval")
    call = tree.body
    if not isinstance(call, ast.Call) or not _probeable(call):
        return []
    calls = [text]
    positions = dict(torch_ops.INTEGER_ARGUMENTS.get(name, ()))
    if "dim" in positions:
        for dim in (0, -1):
            probe = copy.deepcopy(call)
            position = positions["dim"]
            offset = 0 if name.startswith(known_ops.METHOD) else 0
            if position >= 0 and len(probe.args) > position - offset:
                del probe.args[position - offset :]
            probe.keywords = [k for k in probe.keywords if k.arg != "dim"] + [
                ast.keyword("dim", ast.Constant(dim) if dim >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(1)))
            ]
            calls.append(ast.unparse(probe))
    return calls


def _probeable(call: ast.Call) -> bool:
    """Only `x`, `y`, `m`, numbers, dimensions 0 or -1 and `torch.float64`-like attributes."""
    for node in ast.walk(call):
        if isinstance(node, ast.Name) and node.id not in _PROBE_NAMES:
            return False
        if isinstance(node, (ast.Subscript, ast.Lambda)):
            return False
        if isinstance(node, ast.Call) and node is not call and ast.unparse(node.func) != "torch.tensor":
            return False
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value not in (0, 1):
            return False
        if isinstance(node, ast.Constant) and node.value == 1 and type(node.value) is int:
            parent = next((p for p in ast.walk(call) if isinstance(p, ast.UnaryOp) and p.operand is node), None)
            if parent is None:
                return False  # 1 itself (a dimension of a matrix), not -1
    return True


def _runs_on(probe: str, shape: tuple[int, ...]) -> bool:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).requires_grad_()
    y = torch.randn(shape, generator=torch.Generator().manual_seed(1)).requires_grad_()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = eval(probe, {}, {"x": x, "y": y, "m": x > 0, "torch": torch, "F": F})  # noqa: S307
            outputs = [
                t
                for t in (result if isinstance(result, (tuple, list)) else [result])
                if isinstance(t, torch.Tensor) and t.requires_grad
            ]
            if outputs:
                torch.autograd.grad(outputs, [x, y], [torch.ones_like(t) for t in outputs], allow_unused=True)
    except Exception:  # noqa: BLE001 - any error (or warning) is what is measured
        return False
    return True


def shape_free(name: str) -> bool:
    """`name` runs (forward and backward, no warning) on every shape of `SHAPES`, in each probe call."""
    probes = _probe_calls(name)
    return bool(probes) and all(_runs_on(probe, shape) for probe in probes for shape in SHAPES)


@pytest.mark.parametrize("name", sorted(known_ops.ALLOWED))
def test_the_operations_taken_as_shape_free_are_the_ones_torch_runs_on_every_shape(name: str) -> None:
    """`known_ops.SHAPE_FREE` is what torch does: each listed operation runs on every shape of
    `SHAPES` (forward, backward, no warning), with its `dim` as 0 and as -1 where it takes one; each
    other one fails on some shape, or its calls pass sizes (no probe), so it is not listed."""
    assert (name in known_ops.SHAPE_FREE) == shape_free(name), (
        f"{name}: runs on every shape: {shape_free(name)}, listed: {name in known_ops.SHAPE_FREE}"
    )


def test_an_operation_on_a_sequence_of_tensors_raises_for_an_empty_one() -> None:
    """`torch_ops.TENSOR_LISTS` (review 10, S1: a helper's `torch.cat(parts)` of an empty list)."""
    for name in torch_ops.TENSOR_LISTS:
        with pytest.raises((RuntimeError, ValueError, IndexError)):
            eval(f"{name}([])", {}, {"torch": torch})  # noqa: S307 - the names of the generated facts


# Layers the freshness of whose output is measured, built as a model would build them (a layer that
# needs no argument is built bare).
LAYER_CALLS: dict[str, str] = {
    "torch.nn.Linear": "torch.nn.Linear(4, 4)(x)",
    "torch.nn.Bilinear": "torch.nn.Bilinear(4, 4, 5)(x, y)",
    "torch.nn.LayerNorm": "torch.nn.LayerNorm(4)(x)",
    "torch.nn.RMSNorm": "torch.nn.RMSNorm(4)(x)",
    "torch.nn.GroupNorm": "torch.nn.GroupNorm(1, 2)(img)",
    "torch.nn.Embedding": "torch.nn.Embedding(5, 4)(i)",
    "torch.nn.Conv1d": "torch.nn.Conv1d(2, 3, 3)(seq)",
    "torch.nn.Conv2d": "torch.nn.Conv2d(2, 3, 3)(img)",
    "torch.nn.Conv3d": "torch.nn.Conv3d(2, 3, 3)(vol)",
    "torch.nn.ConvTranspose1d": "torch.nn.ConvTranspose1d(2, 3, 3)(seq)",
    "torch.nn.ConvTranspose2d": "torch.nn.ConvTranspose2d(2, 3, 3)(img)",
    "torch.nn.ConvTranspose3d": "torch.nn.ConvTranspose3d(2, 3, 3)(vol)",
    "torch.nn.Softmax": "torch.nn.Softmax(dim=-1)(x)",
    "torch.nn.LogSoftmax": "torch.nn.LogSoftmax(dim=-1)(x)",
    "torch.nn.Softmin": "torch.nn.Softmin(dim=-1)(x)",
    "torch.nn.Unflatten": "torch.nn.Unflatten(1, (2, 2))(x)",
    "torch.nn.PixelShuffle": "torch.nn.PixelShuffle(2)(img.repeat(1, 2, 1, 1))",
    "torch.nn.PixelUnshuffle": "torch.nn.PixelUnshuffle(2)(img)",
    **{
        f"torch.nn.{kind}Pool{n}d": f"torch.nn.{kind}Pool{n}d(2)({t})"
        for kind in ("Avg", "Max")
        for n, t in ((1, "seq"), (2, "img"), (3, "vol"))
    },
    **{
        f"torch.nn.Adaptive{kind}Pool{n}d": f"torch.nn.Adaptive{kind}Pool{n}d(1)({t})"
        for kind in ("Avg", "Max")
        for n, t in ((1, "seq"), (2, "img"), (3, "vol"))
    },
}
# The dtypes each fresh operation is run in: one it may convert to (a cast to what the tensor is
# already gives the tensor itself: `x.float()` of a float tensor).
_FRESH_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool)


def _fresh_call(name: str) -> str:
    if known_ops.is_layer(name):
        return LAYER_CALLS.get(name, f"torch.nn.{name.rsplit('.', 1)[-1]}()(x)")
    return _call_text(name)


def fresh(name: str) -> bool:
    """Every tensor `name`'s call gives has memory of its own (no input's storage, not an input
    itself), in every dtype of `_FRESH_DTYPES` it runs for (a layer: on float32)."""
    for dtype in _FRESH_DTYPES[:1] if known_ops.is_layer(name) else _FRESH_DTYPES:
        inputs = _inputs_of(dtype) if dtype != torch.float32 else _inputs()
        storages = {
            v.untyped_storage().data_ptr() for v in inputs.values() if isinstance(v, torch.Tensor) and v.numel()
        }
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = eval(_fresh_call(name), {}, inputs)  # noqa: S307 - the test's own call texts
        except Exception:  # noqa: BLE001 - no kernel for the dtype: nothing to give back
            continue
        results = result if isinstance(result, (tuple, list)) else [result]
        for tensor in (t for t in results if isinstance(t, torch.Tensor) and t.numel()):
            if tensor.untyped_storage().data_ptr() in storages:
                return False
    return True


@pytest.mark.parametrize("name", sorted(known_ops.ALLOWED))
def test_the_operations_taken_as_making_new_tensors_are_the_ones_torch_allocates_for(name: str) -> None:
    """`known_ops.FRESH` is what torch does (review 11: `torch.atleast_1d(x)` and `x.float()` of a
    float tensor give `x` itself, so a rewrite that selects a new tensor in their place changes what
    an in-place change of the result reaches)."""
    assert (name in known_ops.FRESH) == fresh(name), f"{name}: fresh {fresh(name)}, listed {name in known_ops.FRESH}"


def gradient_free(name: str) -> bool:
    """No tensor `name`'s call gives requires grad, called on inputs that do (a comparison, an
    index, a cast to an integer, `zeros_like`, `detach`)."""
    inputs = _inputs() if not known_ops.is_layer(name) else _inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = eval(_fresh_call(name), {}, inputs)  # noqa: S307 - the test's own call texts
    results = result if isinstance(result, (tuple, list)) else [result]
    return not any(isinstance(t, torch.Tensor) and t.requires_grad for t in results)


@pytest.mark.parametrize("name", sorted(known_ops.ALLOWED))
def test_the_operations_taken_as_giving_no_gradient_are_the_ones_whose_results_never_require_it(name: str) -> None:
    """`known_ops.NO_GRADIENT` is what torch does (review 12: `torch.where(h > 0, 1.0, 0.0)` and
    `zeros_like(h).masked_fill(...)` beside a path with a gradient: the original's backward raised,
    or gave none; merged, a zero gradient)."""
    assert (name in known_ops.NO_GRADIENT) == gradient_free(name), name


def saves_output(name: str) -> bool:
    """Autograd saves `name`'s result for its backward (`exp`, `sigmoid`, `relu`): an in-place change
    of the result before backward raises, which a new tensor from `torch.where` no longer does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = eval(_fresh_call(name), {}, _inputs())  # noqa: S307 - the test's own call texts
    results = result if isinstance(result, (tuple, list)) else [result]
    for tensor in results:
        function = getattr(tensor, "grad_fn", None) if isinstance(tensor, torch.Tensor) else None
        if function is not None and hasattr(function, "_saved_result"):
            return True
    return False


@pytest.mark.parametrize("name", sorted(known_ops.ALLOWED))
def test_the_operations_taken_as_saving_their_result_are_the_ones_autograd_saves(name: str) -> None:
    """`known_ops.SAVES_OUTPUT` is what autograd does (review 12: `return torch.relu(h)`,
    `h.exp() if ... else h + 2`, `h = x.exp()` before the `if`)."""
    assert (name in known_ops.SAVES_OUTPUT) == saves_output(name), name
