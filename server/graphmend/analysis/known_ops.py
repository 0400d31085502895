"""The operations a predicated rewrite may run where the original did not: an allowlist.

A rewrite that computes both branches runs each operation of the branch not taken on values its
condition kept away from it. Four reviews showed that a list of what is *unsafe* never closes:
torch has thousands of operators, and each review found the next dozen that warn, draw random
numbers, write in place or leave their domain there. So the question is turned around: a fix is
safe only when every operation it newly runs is on this list, where each entry states why running it
anywhere is harmless:

- **total**: finite with a finite derivative for every finite input of any dtype it takes, so the
  zero gradient `torch.where` sends to the side not taken stays zero; or **shielded**: its domain is
  restricted (a division, a root, a logarithm), and `hazards.py` feeds it a value inside the domain
  on the side not taken, the fix saying so where it cannot;
- **no effect**: no in-place write, no random draw, no warning, no host sync;
- **differentiable the same way** wherever it runs.

An operation not on the list does not make the fix impossible: it makes it unsafe, naming the
operation ("calls `torch.logit`, whose behaviour on values the branch did not see graphmend does not
know"). What torch states about its own operators is read from torch, not typed here:
`torch_ops.py` is generated from the operator schemas (in-place writes, views), the
`nondeterministic_seeded` tag (random draws) and the functional forms' signatures (a `training`
path); `tests/test_known_ops.py` checks every entry below against it, and runs each entry under
torch (no mutating or random ATen operator dispatched, no warning, a finite gradient from a zero
one on zeros, negatives and large values).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from . import torch_ops

# Where an operation may be written: `torch.add`, `x.add(...)` (a tensor's method),
# `F.relu` (`torch.nn.functional`), `torch.special.erf`, and `self.layer(...)` for a `torch.nn` layer.
TORCH = "torch."
METHOD = "Tensor."
FUNCTIONAL = "torch.nn.functional."
SPECIAL = "torch.special."
LAYER = "torch.nn."


@dataclass(frozen=True)
class KnownOp:
    """One allowlisted operation: why it may run where the branch did not, and what its call must
    say for that to hold."""

    reason: str
    shielded: bool = False  # a restricted domain that `hazards.py` shields (else total)
    needs: str | None = None  # an argument that must be given: omitted, torch warns (softmax's `dim`)
    position: int | None = None  # where `needs` may be passed positionally (counting the tensor itself)
    falsy: str | None = None  # a keyword that must be absent, None, False or "none" (an embedding's `max_norm`)
    arguments: int | None = None  # the call must pass exactly this many positional arguments


_ARITHMETIC = KnownOp(
    "elementwise arithmetic: finite for finite inputs, with a finite derivative; writes, draws and warns nothing"
)
_SHIELDED_DIVISION = KnownOp(
    "division: inf or NaN (for integers, an error) where the divisor is 0, which `hazards.py` keeps off the values "
    "the condition excluded (a shield of 1)",
    shielded=True,
)
_SHIELDED_DOMAIN = KnownOp(
    "a root, logarithm, exponential or inverse function: outside its domain (or past overflow) inf or NaN with an "
    "infinite derivative, which `hazards.py` keeps off the values the condition excluded (a shield of 1 or 0)",
    shielded=True,
)
_TOTAL_UNARY = KnownOp(
    "elementwise and total: finite with a finite (or zero) derivative for every finite input; no effect"
)
_COMPARISON = KnownOp("a comparison or logical test: a bool result with no gradient; no effect")
_REDUCTION = KnownOp(
    "a sum, mean or extreme over dimensions: finite with a finite derivative for finite inputs (an empty tensor's "
    "max/min/argmax raise, which `hazards.py` refuses); no effect"
)
_ORDERING = KnownOp(
    "sorts values (with their indices): a permutation, whose gradient moves the incoming one back to where each "
    "value came from; no effect"
)
_SOFTMAX = KnownOp(
    "normalised exponentials along `dim`: finite with a finite derivative for finite inputs; with `dim` omitted "
    "torch warns (an implicit dimension), so the call must give it",
    needs="dim",
    position=1,
)
_SHAPE = KnownOp(
    "moves, copies, views or casts values without computing new ones: no effect, a gradient that passes through "
    "(a view shares memory, which the alias analysis follows)"
)
_FACTORY = KnownOp("makes a tensor from sizes or a fill value: no input to misbehave on, no effect")
_INDEXING = KnownOp(
    "a lookup by index: raises for an index out of range, which the rewrite refuses where the condition tests the "
    "indices (`purity._indexes`); no effect"
)
_PRODUCT = KnownOp(
    "sums of products (matrix products, linear maps, convolutions): finite with a finite derivative for finite "
    "inputs (an overflowing operand is shielded by `hazards.py`); no effect"
)
_NORMALISATION = KnownOp(
    "a normalisation with `eps` in its denominator: finite with a finite derivative even for a constant input; "
    "uses no running statistics; no effect"
)
_ACTIVATION = KnownOp(
    "an activation: finite with a finite derivative for every finite input; no effect (built or called with "
    "`inplace=True` it writes its input, which is refused)"
)
_GELU = KnownOp(
    "the exact GELU: finite with a finite derivative for every finite input, no effect; its tanh approximation "
    "has a NaN derivative past about 1e13 (masked logits reach that), so the call must not ask for it",
    falsy="approximate",
)
_POOLING = KnownOp("pooling or resampling: deterministic, finite with a finite derivative; no effect")
_WHERE = KnownOp(
    "a selection between two values (the three-argument form; one argument returns indices, a host sync)",
    arguments=3,
)
_EMBEDDING = KnownOp(
    "a lookup by index (see indexing); with `max_norm` it renormalises the weight in place on every call, so the "
    "call must not give one",
    falsy="max_norm",
)
_BATCH_NORM = KnownOp(
    "a normalisation by the running statistics it is given; with `training=True` it updates them in place, so the "
    "call must not ask for it",
    falsy="training",
)


# (where it may be written, the names, the entry), read into `ALLOWED`.
_GROUPS: tuple[tuple[tuple[str, ...], str, KnownOp], ...] = (
    (
        (TORCH, METHOD),
        "add sub subtract mul multiply neg negative positive addcmul square lerp",
        _ARITHMETIC,
    ),
    ((TORCH,), "rsub", _ARITHMETIC),
    ((TORCH, METHOD), "div divide true_divide reciprocal floor_divide fmod remainder", _SHIELDED_DIVISION),
    ((TORCH, METHOD), "log log2 log10 log1p sqrt rsqrt exp expm1 exp2 pow", _SHIELDED_DOMAIN),
    ((TORCH, METHOD), "digamma lgamma acos asin atanh erfinv sinh cosh tan", _SHIELDED_DOMAIN),
    ((SPECIAL,), "expm1 exp2 log1p digamma erfinv", _SHIELDED_DOMAIN),
    (
        (TORCH, METHOD),
        "abs absolute sign sgn sin cos atan arctan asinh arcsinh erf erfc sigmoid tanh relu floor ceil round "
        "trunc frac clamp clip clamp_min clamp_max nan_to_num",
        _TOTAL_UNARY,
    ),
    ((SPECIAL,), "erf erfc expit", _TOTAL_UNARY),
    (
        (TORCH, METHOD),
        "eq ne gt ge lt le greater greater_equal less less_equal not_equal isnan isinf isfinite isneginf "
        "isposinf signbit logical_and logical_or logical_xor logical_not isclose maximum minimum fmax fmin",
        _COMPARISON,
    ),
    ((TORCH, METHOD), "where", _WHERE),  # `x.where(condition, y)`: the receiver is the first of three
    (
        (TORCH, METHOD),
        "sum nansum mean amax amin max min argmax argmin any all logsumexp cumsum count_nonzero",
        _REDUCTION,
    ),
    ((TORCH, METHOD), "sort argsort", _ORDERING),
    ((TORCH, METHOD, FUNCTIONAL), "softmax log_softmax", _SOFTMAX),
    ((FUNCTIONAL,), "softmin", _SOFTMAX),
    (
        (TORCH, METHOD),
        "reshape flatten unflatten squeeze unsqueeze transpose swapaxes swapdims permute movedim moveaxis t "
        "broadcast_to tile split chunk unbind tensor_split narrow select flip roll tril triu diagonal diag_embed "
        "clone detach masked_fill",
        _SHAPE,
    ),
    (
        (METHOD,),
        "view view_as reshape_as contiguous expand expand_as repeat to float double half bfloat16 long int bool "
        "type_as",
        _SHAPE,
    ),
    ((TORCH,), "cat concat concatenate stack hstack vstack", _SHAPE),
    ((FUNCTIONAL,), "pad", _SHAPE),
    ((TORCH,), "zeros_like ones_like full_like zeros ones full arange eye", _FACTORY),
    ((METHOD,), "new_zeros new_ones new_full", _FACTORY),
    ((TORCH, METHOD), "index_select gather take_along_dim", _INDEXING),
    ((TORCH, METHOD), "matmul mm bmm baddbmm addmm outer", _PRODUCT),
    ((TORCH,), "einsum", _PRODUCT),
    (
        (FUNCTIONAL,),
        "linear bilinear conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d",
        _PRODUCT,
    ),
    ((FUNCTIONAL,), "layer_norm group_norm rms_norm normalize", _NORMALISATION),
    (
        (FUNCTIONAL,),
        "relu relu6 leaky_relu elu selu celu silu mish hardtanh hardswish hardsigmoid softplus softsign "
        "logsigmoid glu prelu hardshrink softshrink tanhshrink",
        _ACTIVATION,
    ),
    ((FUNCTIONAL,), "gelu", _GELU),
    (
        (FUNCTIONAL,),
        "max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d "
        "adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d "
        "pixel_shuffle pixel_unshuffle",
        _POOLING,
    ),
    ((FUNCTIONAL,), "embedding", _EMBEDDING),
    ((FUNCTIONAL,), "batch_norm", _BATCH_NORM),
    (
        (LAYER,),
        "Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d",
        _PRODUCT,
    ),
    ((LAYER,), "LayerNorm RMSNorm GroupNorm", _NORMALISATION),
    ((LAYER,), "Identity Flatten Unflatten", _SHAPE),
    (
        (LAYER,),
        "ReLU ReLU6 SiLU Mish Tanh Sigmoid LeakyReLU ELU SELU CELU Hardtanh Hardswish Hardsigmoid PReLU "
        "Softplus Softsign GLU",
        _ACTIVATION,
    ),
    ((LAYER,), "GELU", _GELU),
    ((LAYER,), "Softmax LogSoftmax Softmin", KnownOp(_SOFTMAX.reason, needs="dim", position=0)),
    (
        (LAYER,),
        "MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d "
        "AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d PixelShuffle PixelUnshuffle",
        _POOLING,
    ),
    ((LAYER,), "Embedding", KnownOp(_EMBEDDING.reason, falsy="max_norm")),
)
# Each allowlisted name (`torch.add`, `Tensor.add`, `torch.nn.functional.relu`, `torch.nn.Linear`) → its entry.
ALLOWED: dict[str, KnownOp] = {
    prefix + name: entry for prefixes, names, entry in _GROUPS for prefix in prefixes for name in names.split()
}

# The allowlisted operations whose backward is a selection or a constant scale: the zero gradient
# `torch.where` sends to the side not taken stays zero for *every* input, inf and NaN included (a
# caller's inf, or a value that overflowed, is what a guard like `torch.isfinite(x).all()` or an fp16
# clamp's test keeps from the branch). Every other one (`sin`, `sigmoid`, `softmax`, a product of two
# tensors, `amax`, whose backward divides by the count of the maximum, NaN for a NaN input) has a
# derivative that is inf or NaN at some value, and 0 × inf is NaN: review 7 (issue 67) measured it for
# 23 total operations. `tests/test_known_ops.py` makes torch confirm each name on inf, -inf and NaN.
_FINITE_BACKWARD_NAMES: tuple[tuple[tuple[str, ...], str], ...] = (
    ((TORCH, METHOD), "add sub subtract neg negative positive"),
    ((TORCH,), "rsub"),
    ((TORCH, METHOD), "abs sign sgn floor ceil round trunc frac clamp clip clamp_min clamp_max relu nan_to_num"),
    (
        (TORCH, METHOD),
        "eq ne gt ge lt le greater greater_equal less less_equal not_equal isnan isinf isfinite isneginf "
        "isposinf signbit logical_and logical_or logical_xor logical_not isclose maximum minimum fmax fmin where",
    ),
    ((TORCH, METHOD), "sum nansum mean max min argmax argmin any all cumsum count_nonzero sort argsort"),
    (
        (TORCH, METHOD),
        "reshape flatten unflatten squeeze unsqueeze transpose swapaxes swapdims permute movedim moveaxis t "
        "broadcast_to tile split chunk unbind tensor_split narrow select flip roll tril triu diagonal diag_embed "
        "clone detach masked_fill index_select gather take_along_dim",
    ),
    (
        (METHOD,),
        "view view_as reshape_as contiguous expand expand_as repeat to float double half bfloat16 long int bool "
        "type_as new_zeros new_ones new_full",
    ),
    ((TORCH,), "cat concat concatenate stack hstack vstack zeros_like ones_like full_like zeros ones full arange eye"),
    (
        (FUNCTIONAL,),
        "pad relu relu6 hardtanh embedding max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d "
        "adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d "
        "adaptive_max_pool3d pixel_shuffle pixel_unshuffle",
    ),
    (
        (LAYER,),
        "Identity Flatten Unflatten ReLU ReLU6 Hardtanh Embedding MaxPool1d MaxPool2d MaxPool3d AvgPool1d "
        "AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d "
        "AdaptiveMaxPool2d AdaptiveMaxPool3d PixelShuffle PixelUnshuffle",
    ),
)
FINITE_BACKWARD: frozenset[str] = frozenset(
    prefix + name for prefixes, names in _FINITE_BACKWARD_NAMES for prefix in prefixes for name in names.split()
)
# What torch has no kernel for among them: each raises for an input of these dtype kinds ("bool",
# "integer", "complex"), measured on bool, int64, uint8 and complex64 tensors (`tests/test_known_ops.py`
# keeps this equal to what torch does; a cast of a complex tensor to a real dtype warns, once a
# process, which that test cannot see again: the casts are listed for "complex" by hand). A branch
# that calls one on a tensor not proven floating point may raise where the original did not run it
# (issue 67, review 7: `x.mean()` of an int64 tensor a caller passed where the branch was not taken).
_DTYPE_LIMITED_NAMES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    ((TORCH, METHOD), "abs neg negative positive sub subtract", "bool"),
    ((TORCH,), "rsub", "bool"),
    ((TORCH, METHOD), "argmax argmin ceil floor relu round trunc", "bool complex"),
    ((FUNCTIONAL,), "max_pool2d max_pool3d relu relu6", "bool complex"),
    ((TORCH, METHOD), "frac", "bool complex integer"),
    (
        (FUNCTIONAL,),
        "adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d avg_pool1d avg_pool2d avg_pool3d hardtanh "
        "max_pool1d",
        "bool complex integer",
    ),
    ((TORCH, METHOD), "mean", "bool integer"),
    ((FUNCTIONAL,), "adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d", "bool integer"),
    (
        (TORCH, METHOD),
        "argsort clamp clamp_max clamp_min clip fmax fmin ge greater greater_equal gt isneginf isposinf le less "
        "less_equal lt max maximum min minimum nansum sign signbit sort",
        "complex",
    ),
    ((METHOD,), "float double half bfloat16 long int bool to type_as", "complex"),
    # shielded ones (an integer divisor of 0 raises, which the shield of 1 keeps off the values the
    # condition excluded; listed as torch measures them)
    ((TORCH, METHOD), "floor_divide fmod remainder", "bool complex integer"),
    ((TORCH, METHOD), "digamma erfinv lgamma", "complex"),
    ((SPECIAL,), "digamma erfinv", "complex"),
    # The rest of the allowlist, as torch 2.13 measures it (review 10: `test_the_dtypes_an_operation_
    # raises_for_...` over every entry, a complex input requiring grad): no kernel, or no complex
    # derivative (`nan_to_num` computes a complex tensor, then raises as autograd records it).
    ((TORCH, METHOD), "absolute addcmul addmm bmm matmul mm", "bool"),
    ((TORCH,), "einsum", "bool"),
    ((METHOD,), "baddbmm", "bool"),
    ((TORCH,), "baddbmm", "bool complex integer"),
    ((TORCH, METHOD), "lerp", "bool integer"),
    ((TORCH, METHOD), "amax amin nan_to_num", "complex"),
    ((TORCH, METHOD, SPECIAL), "erf erfc", "complex"),
    ((TORCH, METHOD, FUNCTIONAL), "log_softmax softmax", "bool complex integer"),
    ((FUNCTIONAL,), "linear softsign tanhshrink", "bool"),
    ((FUNCTIONAL,), "normalize rms_norm", "bool integer"),
    ((FUNCTIONAL,), "embedding", "complex"),
    (
        (FUNCTIONAL,),
        "batch_norm bilinear celu conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d elu gelu "
        "glu group_norm hardshrink hardsigmoid hardswish layer_norm leaky_relu logsigmoid mish prelu selu silu "
        "softmin softplus softshrink",
        "bool complex integer",
    ),
)
DTYPE_LIMITED: dict[str, frozenset[str]] = {
    prefix + name: frozenset(kinds.split())
    for prefixes, names, kinds in _DTYPE_LIMITED_NAMES
    for prefix in prefixes
    for name in names.split()
}


# What a keyword given (not None) adds: floor and trunc division have no complex kernel (review 10).
_KEYWORD_DTYPE_LIMITED: dict[str, dict[str, frozenset[str]]] = {
    "rounding_mode": {prefix + name: frozenset({"complex"}) for prefix in (TORCH, METHOD) for name in ("div", "divide")}
}


def dtype_limited(name: str, keywords: Iterable[str] = ()) -> frozenset[str]:
    """The dtype kinds (`bool`, `integer`, `complex`) `name` raises (or, for a cast of a complex
    tensor, warns) for, called with `keywords` given; empty where it takes every dtype."""
    name = name.replace("torch.Tensor.", METHOD, 1)
    kinds = DTYPE_LIMITED.get(name, frozenset())
    for keyword in keywords:
        kinds |= _KEYWORD_DTYPE_LIMITED.get(keyword, {}).get(name, frozenset())
    return kinds


# The operations that run on a tensor of every rank and size (none, an empty vector, a vector, an
# empty matrix, a matrix, three dimensions), forward and backward, called with tensors of one shape,
# numbers, and a `dim` of 0 or -1 at most: measured on torch by `test_known_ops.py` (issue 67,
# reviews 9 and 10: `torch.cumsum(h, 1)`, `h.tril()`, `F.normalize(h)` of a 1-d `h` raise where the
# branch never saw one). Any other operation, or one of these given another dimension or a size, may
# raise where the original did not run it.
_SHAPE_FREE_NAMES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (TORCH, METHOD),
        "abs absolute acos add addcmul all any arcsinh arctan argsort asin asinh atan atanh ceil clamp "
        "clamp_max clamp_min clip clone cos cosh count_nonzero cumsum detach div divide eq exp flatten flip "
        "floor fmax fmin fmod frac ge greater greater_equal gt isclose isfinite isinf isnan isneginf isposinf "
        "le lerp less less_equal lgamma log log10 log2 logical_and logical_not logical_or logical_xor "
        "logsumexp lt masked_fill maximum mean minimum mul multiply nan_to_num nansum ne neg negative "
        "not_equal positive pow reciprocal remainder round rsqrt sgn sigmoid sign signbit sin sinh sort sqrt "
        "square squeeze sub subtract sum tan tanh true_divide trunc unsqueeze where",
    ),
    (
        (FUNCTIONAL,),
        "celu elu gelu hardshrink hardsigmoid hardswish hardtanh leaky_relu logsigmoid mish prelu relu6 selu "
        "silu softmin softplus softshrink softsign tanhshrink",
    ),
    (
        (LAYER,),
        "CELU ELU GELU Hardsigmoid Hardswish Hardtanh Identity LeakyReLU Mish PReLU ReLU ReLU6 SELU SiLU "
        "Sigmoid Softplus Softsign Tanh",
    ),
    (
        (METHOD,),
        "bfloat16 bool contiguous double expand_as float half int long reshape_as to type_as view_as",
    ),
    (
        (TORCH, METHOD, SPECIAL),
        "digamma erf erfc erfinv exp2 expm1 log1p",
    ),
    (
        (TORCH,),
        "full_like hstack ones_like rsub stack vstack zeros_like",
    ),
    (
        (TORCH, METHOD, FUNCTIONAL),
        "log_softmax relu softmax",
    ),
    (
        (SPECIAL,),
        "expit",
    ),
)
SHAPE_FREE: frozenset[str] = frozenset(
    prefix + name for prefixes, names in _SHAPE_FREE_NAMES for prefix in prefixes for name in names.split()
)


def shape_limit(name: str, call: ast.Call, is_tensor: Callable[[ast.expr], bool]) -> str | None:
    """Why `call` of allowlisted `name` may raise for a tensor of another rank or size, or None: the
    operation is not `SHAPE_FREE`, or the call gives one of its integer arguments (a dimension other
    than 0 or -1, a size, an index: `torch_ops.INTEGER_ARGUMENTS`). `is_tensor` tells a tensor given
    where an overload takes an integer (`torch.max(a, b)` beside `torch.max(a, 1)`)."""
    name = name.replace("torch.Tensor.", METHOD, 1)
    if name in torch_ops.TENSOR_LISTS and not _listed(argument_at(call, "tensors", 0)):
        return "with a sequence graphmend does not know to hold a tensor, which raises where it is empty"
    if name not in SHAPE_FREE:
        return "which raises for a tensor of some rank or size (not every shape runs it, measured on torch)"
    for keyword, position in torch_ops.INTEGER_ARGUMENTS.get(name, ()):
        value = argument_at(call, keyword, position if position >= 0 else None)
        if value is None or is_tensor(value) or (keyword == "dim" and _edge_dimension(value)):
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, float):
            continue  # a number where an overload takes one (`pow(x, 2.5)`), not a size
        return f"with `{keyword}` {ast.unparse(value)}, which raises for a tensor of too few dimensions or another size"
    if any(k.arg is None for k in call.keywords) and name in torch_ops.INTEGER_ARGUMENTS:
        return "with `**` arguments that may give a dimension or a size, which raises for a tensor of another shape"
    return None


def argument_at(call: ast.Call, keyword: str, position: int | None) -> ast.expr | None:
    """What `call` passes as `keyword`, by name or at `position`; a `*args` at or before it counts as it."""
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    if position is None:
        return None
    for index, value in enumerate(call.args[: position + 1]):
        if isinstance(value, ast.Starred):
            return value
        if index == position:
            return value
    return None


def _listed(expr: ast.expr | None) -> bool:
    """A list or tuple written with at least one element and no `*` (`torch.stack([a, b])`)."""
    return (
        isinstance(expr, (ast.List, ast.Tuple))
        and bool(expr.elts)
        and not any(isinstance(e, ast.Starred) for e in expr.elts)
    )


def _edge_dimension(expr: ast.expr) -> bool:
    """0 or -1: a dimension every tensor has (a 0-d one too, as torch takes it)."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return isinstance(expr.operand, ast.Constant) and expr.operand.value == 1 and type(expr.operand.value) is int
    return isinstance(expr, ast.Constant) and expr.value == 0 and type(expr.value) is int


# The operations whose every result has memory of its own: never an input itself, nor a view of
# one, in any dtype (a cast to the dtype a tensor has gives the tensor: `x.float()`), measured on
# torch by `test_known_ops.py`. A rewrite that selects `torch.where`'s new tensor where a path gave
# one of these changes nothing anyone can see; where it gave any other value, it may have been a
# tensor somebody else holds (issue 67, review 11: `torch.atleast_1d(x)`, `x.float()`).
_FRESH_NAMES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (TORCH, METHOD),
        "abs absolute acos add addcmul addmm all amax amin any arcsinh arctan argmax argmin argsort asin "
        "asinh atan atanh baddbmm bmm ceil clamp clamp_max clamp_min clip clone cos cosh count_nonzero cumsum "
        "diag_embed div divide eq exp flip floor floor_divide fmax fmin fmod frac gather ge greater "
        "greater_equal gt index_select isclose isfinite isinf isnan isneginf isposinf le lerp less less_equal "
        "lgamma log log10 log2 logical_and logical_not logical_or logical_xor logsumexp lt masked_fill matmul "
        "max maximum mean min minimum mm mul multiply nan_to_num nansum ne neg negative not_equal outer pow "
        "reciprocal remainder roll round rsqrt sgn sigmoid sign signbit sin sinh sort sqrt square sub "
        "subtract sum take_along_dim tan tanh tile tril triu true_divide trunc where",
    ),
    (
        (FUNCTIONAL,),
        "adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d "
        "adaptive_max_pool3d avg_pool1d avg_pool2d avg_pool3d batch_norm bilinear celu conv1d conv2d conv3d "
        "conv_transpose1d conv_transpose2d conv_transpose3d elu embedding gelu glu group_norm hardshrink "
        "hardsigmoid hardswish hardtanh layer_norm leaky_relu linear logsigmoid max_pool1d max_pool2d "
        "max_pool3d mish normalize pad pixel_shuffle pixel_unshuffle prelu relu6 rms_norm selu silu softmin "
        "softplus softshrink softsign tanhshrink",
    ),
    (
        (LAYER,),
        "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d "
        "AdaptiveMaxPool3d AvgPool1d AvgPool2d AvgPool3d Bilinear CELU Conv1d Conv2d Conv3d ConvTranspose1d "
        "ConvTranspose2d ConvTranspose3d ELU Embedding GELU GLU GroupNorm Hardsigmoid Hardswish Hardtanh "
        "LayerNorm LeakyReLU Linear LogSoftmax MaxPool1d MaxPool2d MaxPool3d Mish PReLU PixelShuffle "
        "PixelUnshuffle RMSNorm ReLU ReLU6 SELU SiLU Sigmoid Softmax Softmin Softplus Softsign Tanh",
    ),
    (
        (TORCH,),
        "arange cat concat concatenate einsum eye full full_like hstack ones ones_like rsub stack vstack "
        "zeros zeros_like",
    ),
    (
        (TORCH, METHOD, SPECIAL),
        "digamma erf erfc erfinv exp2 expm1 log1p",
    ),
    (
        (METHOD,),
        "new_full new_ones new_zeros repeat",
    ),
    (
        (TORCH, METHOD, FUNCTIONAL),
        "log_softmax relu softmax",
    ),
    (
        (SPECIAL,),
        "expit",
    ),
)
FRESH: frozenset[str] = frozenset(
    prefix + name for prefixes, names in _FRESH_NAMES for prefix in prefixes for name in names.split()
)


# The operations whose results never require grad, called on tensors that do: comparisons, tests,
# indices, casts to integers, `zeros_like`, `detach` (measured on torch by `test_known_ops.py`). A
# value made only of these, of numbers and of other such values has no gradient; merged beside a
# path that has one, it passes a zero gradient where the original gave none (issue 67, review 12).
_NO_GRADIENT_NAMES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (TORCH, METHOD),
        "all any argmax argmin argsort count_nonzero detach eq ge greater greater_equal gt isclose isfinite "
        "isinf isnan isneginf isposinf le less less_equal logical_and logical_not logical_or logical_xor lt "
        "ne not_equal signbit",
    ),
    (
        (TORCH,),
        "arange eye full full_like ones ones_like zeros zeros_like",
    ),
    (
        (METHOD,),
        "bool int long new_full new_ones new_zeros",
    ),
)
NO_GRADIENT: frozenset[str] = frozenset(
    prefix + name for prefixes, names in _NO_GRADIENT_NAMES for prefix in prefixes for name in names.split()
)


# The operations whose result autograd saves for their backward (`exp`, `sigmoid`, `relu`, `softmax`:
# the grad_fn's `_saved_result`, measured on torch by `test_known_ops.py`): an in-place change of the
# result before backward raises. A rewrite that selects `torch.where`'s new tensor in its place
# raises no more (issue 67, reviews 9 and 12).
_SAVES_OUTPUT_NAMES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (TORCH, METHOD),
        "amax amin exp logsumexp max min reciprocal rsqrt sgn sigmoid sqrt tan tanh",
    ),
    (
        (LAYER,),
        "LogSoftmax ReLU Sigmoid Softmax Softmin Tanh",
    ),
    (
        (TORCH, METHOD, FUNCTIONAL),
        "log_softmax relu softmax",
    ),
    (
        (TORCH, METHOD, SPECIAL),
        "exp2 expm1",
    ),
    (
        (FUNCTIONAL,),
        "softmin",
    ),
    (
        (SPECIAL,),
        "expit",
    ),
)
SAVES_OUTPUT: frozenset[str] = frozenset(
    prefix + name for prefixes, names in _SAVES_OUTPUT_NAMES for prefix in prefixes for name in names.split()
)


# Products whose derivative is the other operand: finite wherever that operand is a number.
SCALINGS = frozenset({"mul", "multiply", "div", "divide", "true_divide"})


# Of FINITE_BACKWARD, those whose complex backward divides by |z|: a zero gradient becomes NaN at a
# complex inf or NaN (review 10; `test_a_finite_backward_keeps_a_zero_gradient_zero_on_inf_and_nan`).
REAL_FINITE_BACKWARD = frozenset({TORCH + "abs", METHOD + "abs", TORCH + "sgn", METHOD + "sgn"})


def finite_backward(name: str) -> bool:
    """`name` (as `known` takes it) has a backward that keeps a zero gradient zero on every value
    of every dtype (for a real one only: `REAL_FINITE_BACKWARD`)."""
    name = name.replace("torch.Tensor.", METHOD, 1)
    return name in FINITE_BACKWARD and name not in REAL_FINITE_BACKWARD


def is_layer(name: str) -> bool:
    """`torch.nn.Linear`, a layer's class (not `torch.nn.functional.linear`)."""
    return name.startswith(LAYER) and "." not in name[len(LAYER) :]


def known(name: str) -> KnownOp | None:
    """The entry for `torch.add`, `Tensor.add`, `torch.nn.functional.relu` or `torch.nn.Linear`;
    None for an operation graphmend does not know."""
    return ALLOWED.get(name.replace("torch.Tensor.", METHOD, 1))


def unmet(entry: KnownOp, call: ast.Call, method: bool = False) -> str | None:
    """What `call` lacks for `entry` to hold (`dim` omitted, `max_norm` given), or None. A tensor's
    method takes the tensor as its receiver, so its positions count from the second argument."""
    if entry.needs is not None:
        offset = 1 if method else 0
        given = any(k.arg == entry.needs for k in call.keywords) or (
            entry.position is not None and len(call.args) > entry.position - offset
        )
        if not given:
            return f"without `{entry.needs}`"
    if entry.falsy is not None:
        for keyword in call.keywords:
            if keyword.arg == entry.falsy and not (
                isinstance(keyword.value, ast.Constant) and keyword.value.value in (None, False, "none")
            ):
                return f"with `{keyword.arg}=`"
    if entry.arguments is not None and (len(call.args) + (1 if method else 0) != entry.arguments or call.keywords):
        return f"with other than {entry.arguments} arguments"
    return None


def stated_effect(name: str, call: ast.Call | None = None) -> str | None:
    """What torch itself states this operation does that a branch must not do where it did not
    run (`torch_ops`, read from its schemas, tags and signatures): a random draw, an in-place
    write, a host sync, a training path on by default, or an effect `call`'s arguments turn on."""
    name = name.replace("torch.Tensor.", METHOD, 1)
    if name in torch_ops.RANDOM:
        return (
            "draws random numbers (it runs an operator torch tags `nondeterministic_seeded`): running it always "
            "shifts every later draw"
        )
    written = torch_ops.MUTATES.get(name)
    if written:
        return f"writes `{'`, `'.join(written)}` in place (torch's schema of it says so)"
    training = torch_ops.TRAINING.get(name)
    if training is not None and training[1] is True and not _turned_off(call, name, training[0]):
        return f"runs its training path by default (`{training[0]}=True`): it draws random numbers or updates state"
    conditional = torch_ops.CONDITIONAL.get(name)
    if conditional is not None and call is not None and given(call, name, conditional[0]):
        return f"with `{conditional[0]}` {conditional[1]}"
    if name in torch_ops.SYNCS:
        return "reads tensor values on the host (a data-dependent result)"
    return None


def argument(call: ast.Call, name: str, keyword: str) -> ast.expr | None:
    """What `call` of `name` passes as `keyword`: by keyword, or at the position torch's signature
    gives it (`torch_ops.POSITIONS`: `F.relu(x, True)`, `nn.LeakyReLU(0.1, True)`); None if nothing."""
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    position = torch_ops.POSITIONS.get(f"{name}:{keyword}")
    if (
        position is not None
        and len(call.args) > position
        and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1])
    ):
        return call.args[position]
    return None


def given(call: ast.Call, name: str, keyword: str) -> bool:
    """`call` of `name` passes `keyword` as something other than None or False, or may pass it
    (`**config`, or `*args` reaching its position)."""
    position = torch_ops.POSITIONS.get(f"{name}:{keyword}")
    takes = position is not None or keyword in (
        torch_ops.CONDITIONAL.get(name, ("",))[0],
        torch_ops.TRAINING.get(name, ("",))[0],
    )
    if takes and (
        any(k.arg is None for k in call.keywords)
        or (position is not None and any(isinstance(a, ast.Starred) for a in call.args[: position + 1]))
    ):
        return True
    value = argument(call, name, keyword)
    return value is not None and not (isinstance(value, ast.Constant) and value.value in (None, False))


def _turned_off(call: ast.Call | None, name: str, keyword: str) -> bool:
    """`call` of `name` passes `keyword` as a literal False."""
    value = None if call is None else argument(call, name, keyword)
    return isinstance(value, ast.Constant) and value.value is False


def unknown_words(name: str, unmet: str | None = None) -> str:
    """The hazard of running an operation graphmend has no facts for (or called `unmet`: without
    what its entry needs)."""
    return (
        f"a branch calls `{name}`{'' if unmet is None else ' ' + unmet}, which graphmend does not know to be harmless "
        "where the branch did not run "
        "(it is not on the allowlist of operations: it may warn, raise, give NaN gradients or have an effect on "
        "values the condition excluded)"
    )
