"""Generate `graphmend/analysis/torch_ops.py`: the effects torch declares for its own Python-visible ops.

A predicated rewrite runs both branches of an `if`, so it is safe only when every op a branch calls has no
effect. Which ops draw random numbers, write an argument, alias one, or read values back to the host is
torch's own knowledge (ATen schemas and tags), so it is read from torch here rather than typed by hand,
and committed as plain literals: graphmend's core never imports torch.

    python tests/torch_op_facts.py           # print the diff against the committed module (exit 1 if any)
    python tests/torch_op_facts.py --write   # rewrite the committed module
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import inspect
import json
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "server" / "graphmend" / "analysis" / "torch_ops.py"
FUNCTIONAL = "torch.nn.functional."
# The written prefix of a namespace -> (its module, the prefix of its ATen op names).
NAMESPACES: dict[str, tuple[types.ModuleType, str]] = {
    "torch.": (torch, ""),
    FUNCTIONAL: (F, ""),
    "torch.special.": (torch.special, "special_"),
    "torch.linalg.": (torch.linalg, "linalg_"),
    "torch.fft.": (torch.fft, "fft_"),
}
# torch.nn.functional also re-exports typing and dispatch helpers: only its own functions and torch's builtins.
FUNCTIONAL_MODULES = {"torch.nn.functional", "torch._C._nn", "torch", "torch._C._VariableFunctions"}
SYNC_TAGS = (torch.Tag.data_dependent_output, torch.Tag.dynamic_output_shape)
TRAINING_PARAMETERS = ("training", "use_input_stats")
LINE_LENGTH = 120  # pyproject's, which the rendered module keeps

Call = tuple[tuple[Any, ...], dict[str, Any]]


def release() -> str:
    """The installed torch's release, without a local build tag ("2.13.0+cpu" -> "2.13.0")."""
    return torch.__version__.split("+", 1)[0]


# --- ATen: what each op's schemas and tags declare ---------------------------------------------------------


@dataclass(frozen=True)
class OpFacts:
    """The effects of one ATen op over all its overloads (out= variants aside)."""

    random: bool = False
    written: tuple[str, ...] = ()
    view: bool = False
    sync: bool = False


def _written(schema: torch._C.FunctionSchema, tensors_only: bool = True) -> list[torch._C.Argument]:
    """The arguments a schema marks written (`Tensor(a!)`, `Tensor(a!)[]`); by default only tensors, since
    the aten namespace also holds TorchScript's ops on lists and generators (`sort.Tensor(Tensor[](a!) self)`
    sorts a list, `manual_seed(Generator(a!) self, int seed)`)."""
    return [
        a
        for a in schema.arguments
        if a.alias_info is not None and a.alias_info.is_write and _tensor_write(a, tensors_only)
    ]


def _tensor_write(argument: torch._C.Argument, tensors_only: bool = True) -> bool:
    if not tensors_only:
        return True
    container = isinstance(argument.type, torch._C.ListType) and bool(argument.alias_info.before_set)
    return "Tensor" in str(argument.type) and not container


def _is_out_variant(op: torch._ops.OpOverload) -> bool:
    """`out=` overloads write only the result buffers the caller passes: not an effect on the inputs."""
    name = op._overloadname
    written = _written(op._schema)
    return (
        torch.Tag.out in op.tags
        or name == "out"
        or name.endswith("_out")
        or bool(written and all(a.kwarg_only for a in written))
    )


@functools.cache
def aten_names() -> frozenset[str]:
    """Every op in the aten namespace (from the registered schemas, so a missing name costs no lookup)."""
    return frozenset(s.name.split("::", 1)[1] for s in torch._C._jit_get_all_schemas() if s.name.startswith("aten::"))


@functools.cache
def aten_facts(name: str) -> OpFacts | None:
    """What `torch.ops.aten.<name>`'s overloads declare, or None when there is no such op."""
    if name not in aten_names():
        return None
    packet = getattr(torch.ops.aten, name)
    random = sync = view = False
    written: list[str] = []
    for overload in packet.overloads():
        op = getattr(packet, overload)
        random |= torch.Tag.nondeterministic_seeded in op.tags
        sync |= any(tag in op.tags for tag in SYNC_TAGS)
        if _is_out_variant(op):
            continue
        writes = [a.name for a in _written(op._schema)]
        if op._schema.is_mutable and not _written(op._schema, tensors_only=False):
            raise AssertionError(f"{op} is mutable but names no written argument")
        written += [w for w in writes if w not in written]
        view |= not writes and any(r.alias_info is not None and not r.alias_info.is_write for r in op._schema.returns)
    return OpFacts(random=random, written=tuple(written), view=view, sync=sync)


# --- The Python names -----------------------------------------------------------------------------------------


def _public_callables(module: types.ModuleType) -> Iterator[tuple[str, Any]]:
    for name in dir(module):
        value = getattr(module, name, None)
        if name.startswith("_") or not callable(value) or isinstance(value, (type, types.ModuleType)):
            continue
        if module is F and getattr(value, "__module__", None) not in FUNCTIONAL_MODULES:
            continue
        yield name, value


@functools.cache
def python_names() -> dict[str, tuple[str, Any]]:
    """Written name ("torch.add", "Tensor.add_", "torch.nn.functional.relu") -> (its ATen name, the callable)."""
    names: dict[str, tuple[str, Any]] = {}
    for prefix, (module, aten_prefix) in NAMESPACES.items():
        for name, value in _public_callables(module):
            names[prefix + name] = (aten_prefix + name, value)
    for name in dir(torch.Tensor):
        value = getattr(torch.Tensor, name, None)
        if not name.startswith("_") and callable(value) and not isinstance(value, type):
            names["Tensor." + name] = (name, value)
    return names


# --- Sample calls: the ops a Python function reaches, traced under a dispatch mode ---------------------------


@dataclass(frozen=True)
class Sample:
    """A call of one function (built afresh for every run: calls may write their inputs), and the
    arguments that may add an effect when given, each tried on top of it in order."""

    build: Callable[[], Call]
    variants: tuple[tuple[str, Callable[[], dict[str, Any]]], ...] = ()


@dataclass
class Trace:
    """What one sample call reached: the ops, and which of its parameters they wrote in place."""

    ops: set[torch._ops.OpOverload] = field(default_factory=set)
    writes: dict[str, set[str]] = field(default_factory=dict)  # parameter -> ATen ops that wrote it
    aliases: bool = False  # the result shares memory with an input

    @property
    def random(self) -> set[str]:
        return {op._schema.name for op in self.ops if torch.Tag.nondeterministic_seeded in op.tags}

    @property
    def sync(self) -> bool:
        return any(tag in op.tags for op in self.ops for tag in SYNC_TAGS)


def _tensors(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


def _storage(tensor: torch.Tensor) -> int | None:
    """The tensor's memory, shared by its views (None when empty: every empty storage is at 0)."""
    return tensor.untyped_storage().data_ptr() or None


class _Recorder(TorchDispatchMode):
    """Records every ATen overload a call reaches, and which input it writes: by the written arguments
    its schema declares, and by the values themselves (`native_batch_norm` updates running statistics
    its schema does not mark written)."""

    def __init__(self, inputs: dict[str, list[torch.Tensor]], trace: Trace) -> None:
        super().__init__()
        self.inputs = inputs
        self.trace = trace

    def __torch_dispatch__(
        self,
        func: torch._ops.OpOverload,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        before = {name: [(t.shape, t.clone()) for t in ts] for name, ts in self.inputs.items()}
        result = func(*args, **kwargs)
        self.trace.ops.add(func)
        declared: set[int | None] = set()
        for position, argument in enumerate(func._schema.arguments):
            if argument.alias_info is not None and argument.alias_info.is_write:
                value = args[position] if position < len(args) else kwargs.get(argument.name)
                declared |= {_storage(t) for t in _tensors(value)} - {None}
        for name, tensors in self.inputs.items():
            for tensor, (shape, copy) in zip(tensors, before[name]):
                if _storage(tensor) in declared or tensor.shape != shape or not torch.equal(tensor, copy):
                    self.trace.writes.setdefault(name, set()).add(func._schema.name)
        return result


def _parameters(function: Any, call: Call) -> dict[str, list[torch.Tensor]]:
    """The call's tensors by the parameter they were passed as (builtins: by keyword, else `argN`)."""
    args, kwargs = call
    try:
        bound: dict[str, Any] = dict(inspect.signature(function).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        bound = {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}
    found = {name: _tensors(value) for name, value in bound.items()}
    return {name: tensors for name, tensors in found.items() if tensors}


def trace(function: Any, call: Call) -> Trace:
    """Run `function` on `call` under the recorder (its warnings silenced: `warns` measures them)."""
    found = Trace()
    inputs = _parameters(function, call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _Recorder(inputs, found):
            result = function(*call[0], **call[1])
    memory = {_storage(t) for ts in inputs.values() for t in ts} - {None}
    found.aliases = any(_storage(t) in memory for t in _tensors(result))
    return found


def warns(function: Any, call: Call) -> bool:
    """Whether the call warns (any category, every time: the registry of warnings already shown is ignored)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        function(*call[0], **call[1])
    return bool(caught)


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _long(*values: int) -> torch.Tensor:
    return torch.tensor(values)


def _args(*args: Any, **kwargs: Any) -> Callable[[], Call]:
    """A sample whose arguments are built by calling each zero-argument lambda afresh, constants kept."""

    def build() -> Call:
        def fresh(value: Any) -> Any:
            return value() if callable(value) else value

        return tuple(fresh(a) for a in args), {k: fresh(v) for k, v in kwargs.items()}

    return build


def _x4() -> torch.Tensor:
    return _x(1, 2, 4, 4)


def _prob() -> torch.Tensor:
    return torch.rand(3)


def _target() -> torch.Tensor:
    return _long(1, 0, 4)


def _logits() -> torch.Tensor:
    return _x(3, 5)


def _vec() -> torch.Tensor:
    return _x(6)


def _running_stats() -> dict[str, Any]:
    return {"running_mean": torch.zeros(3), "running_var": torch.ones(3)}


def _heads() -> torch.Tensor:
    """A query, key or value for scaled_dot_product_attention: batch 1, 2 heads, length 3, 4 features."""
    return _x(1, 2, 3, 4)


def _attention() -> tuple[Callable[[], torch.Tensor], ...]:
    """query, key, value (length 2, batch 1, 4 features) for multi_head_attention_forward."""
    return (lambda: _x(2, 1, 4), lambda: _x(2, 1, 4), lambda: _x(2, 1, 4))


def _attention_weights() -> dict[str, Any]:
    return {
        "embed_dim_to_check": 4,
        "num_heads": 2,
        "in_proj_weight": lambda: _x(12, 4),
        "in_proj_bias": lambda: _x(12),
        "bias_k": None,
        "bias_v": None,
        "add_zero_attn": False,
        "dropout_p": 0.0,
        "out_proj_weight": lambda: _x(4, 4),
        "out_proj_bias": lambda: _x(4),
    }


# torch.nn.functional: common functions with example arguments. Tensors are zero-argument callables, so that
# each run gets fresh ones; builtins (no inspect.signature) take their tensors by keyword, to name them.
FUNCTIONAL_SAMPLES: dict[str, Sample] = {
    "dropout": Sample(_args(_vec)),
    "dropout1d": Sample(_args(lambda: _x(2, 3, 4))),
    "dropout2d": Sample(_args(_x4)),
    "dropout3d": Sample(_args(lambda: _x(1, 2, 2, 2, 2))),
    "alpha_dropout": Sample(_args(_vec)),
    "feature_alpha_dropout": Sample(_args(_x4)),
    "rrelu": Sample(_args(_vec)),
    "gumbel_softmax": Sample(_args(_logits)),
    "fractional_max_pool2d": Sample(_args(lambda: _x(1, 1, 8, 8), 2, output_size=4)),
    "fractional_max_pool2d_with_indices": Sample(_args(lambda: _x(1, 1, 8, 8), 2, output_size=4)),
    "fractional_max_pool3d": Sample(_args(lambda: _x(1, 1, 6, 6, 6), 2, output_size=3)),
    "fractional_max_pool3d_with_indices": Sample(_args(lambda: _x(1, 1, 6, 6, 6), 2, output_size=3)),
    "batch_norm": Sample(_args(lambda: _x(4, 3), lambda: torch.zeros(3), lambda: torch.ones(3))),
    "instance_norm": Sample(_args(lambda: _x(2, 3, 5)), (("running_mean", _running_stats),)),
    "embedding": Sample(
        _args(lambda: _long(1, 2, 4), lambda: _x(5, 3) * 3), (("max_norm", lambda: {"max_norm": 1.0}),)
    ),
    "embedding_bag": Sample(
        _args(lambda: _long(1, 2, 3, 4).view(2, 2), lambda: _x(5, 3) * 3), (("max_norm", lambda: {"max_norm": 1.0}),)
    ),
    "softmax": Sample(_args(_logits, dim=-1)),
    "softmin": Sample(_args(_logits, dim=-1)),
    "log_softmax": Sample(_args(_logits, dim=-1)),
    "layer_norm": Sample(_args(lambda: _x(2, 3), [3])),
    "group_norm": Sample(_args(lambda: _x(2, 4, 3), 2)),
    "rms_norm": Sample(_args(lambda: _x(2, 3), [3])),
    "local_response_norm": Sample(_args(_x4, 2)),
    "normalize": Sample(_args(_logits)),
    "linear": Sample(_args(input=_logits, weight=lambda: _x(2, 5))),
    "bilinear": Sample(_args(input1=_logits, input2=_logits, weight=lambda: _x(2, 5, 5))),
    "conv1d": Sample(_args(input=lambda: _x(1, 2, 5), weight=lambda: _x(3, 2, 2))),
    "conv2d": Sample(_args(input=_x4, weight=lambda: _x(3, 2, 2, 2))),
    "conv_transpose2d": Sample(_args(input=_x4, weight=lambda: _x(2, 3, 2, 2))),
    "relu": Sample(_args(_vec)),
    "relu6": Sample(_args(_vec)),
    "elu": Sample(_args(_vec)),
    "selu": Sample(_args(_vec)),
    "celu": Sample(_args(_vec)),
    "leaky_relu": Sample(_args(_vec)),
    "hardtanh": Sample(_args(_vec)),
    "hardsigmoid": Sample(_args(_vec)),
    "hardswish": Sample(_args(_vec)),
    "silu": Sample(_args(_vec)),
    "mish": Sample(_args(_vec)),
    "sigmoid": Sample(_args(_vec)),
    "tanh": Sample(_args(_vec)),
    "softsign": Sample(_args(_vec)),
    "tanhshrink": Sample(_args(_vec)),
    "threshold": Sample(_args(_vec, 0.0, 0.5)),
    "glu": Sample(_args(lambda: _x(2, 4))),
    "gelu": Sample(_args(input=_vec)),
    "softplus": Sample(_args(input=_vec)),
    "softshrink": Sample(_args(input=_vec)),
    "hardshrink": Sample(_args(input=_vec)),
    "logsigmoid": Sample(_args(input=_vec)),
    "prelu": Sample(_args(input=_vec, weight=lambda: torch.full((1,), 0.25))),
    "relu_": Sample(_args(input=_vec)),
    "elu_": Sample(_args(input=_vec)),
    "selu_": Sample(_args(input=_vec)),
    "celu_": Sample(_args(input=_vec)),
    "leaky_relu_": Sample(_args(input=_vec)),
    "hardtanh_": Sample(_args(input=_vec)),
    "rrelu_": Sample(_args(input=_vec)),
    "threshold_": Sample(_args(input=_vec, threshold=0.0, value=0.5)),
    "max_pool1d": Sample(_args(lambda: _x(1, 2, 6), 2)),
    "max_pool2d": Sample(_args(_x4, 2)),
    "max_pool3d": Sample(_args(lambda: _x(1, 1, 4, 4, 4), 2)),
    "max_unpool2d": Sample(
        _args(lambda: torch.ones(1, 1, 2, 2), lambda: torch.tensor([[[[0, 3], [8, 11]]]]), 2, output_size=[4, 4])
    ),
    "avg_pool1d": Sample(_args(input=lambda: _x(1, 2, 6), kernel_size=2)),
    "avg_pool2d": Sample(_args(input=_x4, kernel_size=2)),
    "adaptive_avg_pool1d": Sample(_args(input=lambda: _x(1, 2, 6), output_size=3)),
    "adaptive_avg_pool2d": Sample(_args(_x4, 2)),
    "adaptive_max_pool1d": Sample(_args(lambda: _x(1, 2, 6), 3)),
    "adaptive_max_pool2d": Sample(_args(_x4, 2)),
    "lp_pool2d": Sample(_args(_x4, 2, 2)),
    "pad": Sample(_args(_x4, (1, 1, 1, 1))),
    "interpolate": Sample(_args(_x4, scale_factor=2.0)),
    "upsample": Sample(_args(_x4, scale_factor=2.0)),
    "upsample_nearest": Sample(_args(_x4, scale_factor=2.0)),
    "upsample_bilinear": Sample(_args(_x4, scale_factor=2.0)),
    "grid_sample": Sample(_args(_x4, lambda: torch.rand(1, 3, 3, 2) * 2 - 1, align_corners=False)),
    "affine_grid": Sample(_args(lambda: _x(1, 2, 3), [1, 2, 4, 4], align_corners=False)),
    "pixel_shuffle": Sample(_args(input=_x4, upscale_factor=1)),
    "pixel_unshuffle": Sample(_args(input=_x4, downscale_factor=2)),
    "unfold": Sample(_args(_x4, 2)),
    "fold": Sample(_args(lambda: _x(1, 4, 9), (4, 4), 2)),
    "one_hot": Sample(_args(input=_target)),
    "cosine_similarity": Sample(_args(x1=_logits, x2=_logits)),
    "pairwise_distance": Sample(_args(x1=_logits, x2=_logits)),
    "pdist": Sample(_args(input=_logits)),
    "scaled_dot_product_attention": Sample(
        _args(query=_heads, key=_heads, value=_heads),
        (("dropout_p", lambda: {"dropout_p": 0.5}),),
    ),
    "multi_head_attention_forward": Sample(
        _args(*_attention(), **_attention_weights()), (("dropout_p", lambda: {"dropout_p": 0.5}),)
    ),
    "cross_entropy": Sample(_args(_logits, _target)),
    "linear_cross_entropy": Sample(_args(lambda: _x(3, 4), lambda: _x(5, 4), _target)),
    "nll_loss": Sample(_args(_logits, _target)),
    "multi_margin_loss": Sample(_args(_logits, _target)),
    "kl_div": Sample(_args(_logits, lambda: torch.rand(3, 5), reduction="batchmean")),
    "mse_loss": Sample(_args(_prob, _prob)),
    "l1_loss": Sample(_args(_prob, _prob)),
    "smooth_l1_loss": Sample(_args(_prob, _prob)),
    "huber_loss": Sample(_args(_prob, _prob)),
    "soft_margin_loss": Sample(_args(_prob, _prob)),
    "binary_cross_entropy": Sample(_args(_prob, _prob)),
    "binary_cross_entropy_with_logits": Sample(_args(_prob, _prob)),
    "poisson_nll_loss": Sample(_args(_prob, _prob)),
    "gaussian_nll_loss": Sample(_args(_prob, _prob, lambda: torch.ones(3))),
    "hinge_embedding_loss": Sample(_args(_prob, lambda: torch.tensor([1.0, -1.0, 1.0]))),
    "margin_ranking_loss": Sample(_args(_prob, _prob, lambda: torch.tensor([1.0, -1.0, 1.0]))),
    "cosine_embedding_loss": Sample(_args(_logits, _logits, lambda: torch.tensor([1.0, -1.0, 1.0]))),
    "triplet_margin_loss": Sample(_args(_logits, _logits, _logits)),
    "multilabel_margin_loss": Sample(_args(_logits, lambda: torch.tensor([[1, 2, -1, 0, 0]] * 3))),
    "multilabel_soft_margin_loss": Sample(_args(_logits, lambda: torch.rand(3, 5).round())),
    "ctc_loss": Sample(
        _args(
            lambda: _x(6, 2, 4).log_softmax(2),
            lambda: torch.tensor([[1, 2], [3, 1]]),
            lambda: _long(6, 5),
            lambda: _long(2, 2),
        )
    ),
}

# The few torch and Tensor functions with no ATen op of their name, whose ops a sample call finds.
OTHER_SAMPLES: dict[str, Sample] = {
    "torch.unique": Sample(_args(_vec)),
    "Tensor.unique": Sample(_args(_vec)),
    "Tensor.tolist": Sample(_args(_vec)),
    "torch.is_nonzero": Sample(_args(lambda: torch.ones(1))),
    "Tensor.is_nonzero": Sample(_args(lambda: torch.ones(1))),
}


def samples() -> dict[str, tuple[Any, Sample]]:
    """Written name -> (the function, its sample)."""
    names = python_names()
    found = {FUNCTIONAL + name: sample for name, sample in FUNCTIONAL_SAMPLES.items()} | OTHER_SAMPLES
    return {name: (names[name][1], sample) for name, sample in found.items()}


def variants(function: Any, sample: Sample) -> list[tuple[str, Callable[[], dict[str, Any]]]]:
    """The sample's own variants, then `training=True` where it defaults off, then `inplace=True`."""
    tried = list(sample.variants)
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return tried
    if "training" in parameters and parameters["training"].default is False:
        tried.append(("training", lambda: {"training": True}))
    if "inplace" in parameters:
        tried.append(("inplace", lambda: {"inplace": True}))
    return tried


def _added_effect(base: Trace, variant: Trace) -> str | None:
    """What the variant's call does that the base call does not, in words, or None."""
    effects = []
    written = sorted(set(variant.writes) - set(base.writes))
    if written:
        ops = sorted({op for name in written for op in variant.writes[name]})
        effects.append(f"writes {', '.join(written)} in place ({', '.join(ops)})")
    if variant.random and not base.random:
        effects.append(f"draws random numbers ({', '.join(sorted(variant.random))})")
    return "; ".join(effects) or None


# --- Warnings of torch.nn.functional ------------------------------------------------------------------------


def warning_candidates() -> set[str]:
    """F's functions that call `warnings.warn`, directly or through one of F's private helpers (as
    softmax does through `_get_softmax_dim`), read from F's source."""
    tree = ast.parse(inspect.getsource(F))
    calls: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            called = set()
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call):
                    target = inner.func
                    if isinstance(target, ast.Name):
                        called.add(target.id)
                    elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                        called.add(f"{target.value.id}.{target.attr}")
            calls[node.name] = called
    helpers = {name for name, called in calls.items() if name.startswith("_") and "warnings.warn" in called}
    return {
        name for name, called in calls.items() if not name.startswith("_") and called & (helpers | {"warnings.warn"})
    }


def warned_omission(function: Any, sample: Sample) -> str | None:
    """The keyword whose omission alone makes the (otherwise silent) sample call warn."""
    args, kwargs = sample.build()
    if warns(function, (args, kwargs)):
        return None
    parameters = inspect.signature(function).parameters
    for keyword in sorted(k for k in kwargs if parameters[k].default is not inspect.Parameter.empty):
        args, kwargs = sample.build()
        del kwargs[keyword]
        if warns(function, (args, kwargs)):
            return keyword
    return None


# --- The facts -----------------------------------------------------------------------------------------------


@dataclass
class Facts:
    """Everything the data module holds."""

    release: str
    random: set[str] = field(default_factory=set)
    mutates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    views: set[str] = field(default_factory=set)
    syncs: set[str] = field(default_factory=set)
    training: dict[str, tuple[str, object]] = field(default_factory=dict)
    warns_without: dict[str, str] = field(default_factory=dict)
    conditional: dict[str, tuple[str, str]] = field(default_factory=dict)
    positions: dict[str, int] = field(default_factory=dict)
    integers: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    tensor_lists: set[str] = field(default_factory=set)


def _declared(facts: Facts) -> None:
    """RANDOM, MUTATES, VIEWS and SYNCS from the ATen op each Python name maps to by name."""
    for name, (aten, _) in python_names().items():
        op = aten_facts(aten)
        if op is not None:
            if op.random:
                facts.random.add(name)
            if op.written:
                facts.mutates[name] = op.written
            if op.view:
                facts.views.add(name)
            if op.sync:
                facts.syncs.add(name)
        tail = name.rsplit(".", 1)[1]
        if tail.endswith("_") and not tail.endswith("__") and name not in facts.mutates:
            facts.mutates[name] = ("self",) if name.startswith("Tensor.") else ("input",)


def _traced(facts: Facts) -> None:
    """The ops sample calls reach add their effects; arguments that add one when given are CONDITIONAL."""
    for name, (function, sample) in samples().items():
        base = trace(function, sample.build())
        if base.random:
            facts.random.add(name)
        if base.sync:
            facts.syncs.add(name)
        if base.writes:  # by the Python parameter written, which the sample call knows
            facts.mutates[name] = tuple(sorted(base.writes))
        if name.startswith(FUNCTIONAL) and not base.writes:  # F.unfold is im2col, not aten::unfold's view
            (facts.views.add if base.aliases else facts.views.discard)(name)
        for argument, extra in variants(function, sample):
            args, kwargs = sample.build()
            effect = _added_effect(base, trace(function, (args, {**kwargs, **extra()})))
            if effect is not None:
                facts.conditional[name] = (argument, effect)
                break


def _functional(facts: Facts) -> None:
    """TRAINING from F's signatures, WARNS_WITHOUT from calling F's warning functions without a keyword."""
    for name, (_, function) in python_names().items():
        if not name.startswith(FUNCTIONAL):
            continue
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):
            continue
        for parameter in TRAINING_PARAMETERS:
            if parameter in parameters:
                facts.training[name] = (parameter, parameters[parameter].default)
                break
    for short in sorted(warning_candidates() & FUNCTIONAL_SAMPLES.keys()):
        keyword = warned_omission(getattr(F, short), FUNCTIONAL_SAMPLES[short])
        if keyword is not None:
            facts.warns_without[FUNCTIONAL + short] = keyword


def _positions(facts: Facts) -> None:
    """POSITIONS: where the argument that switches an effect on (`TRAINING`, `CONDITIONAL`) may be
    passed positionally, and where a `torch.nn` layer's constructor takes `inplace` (`F.relu(x,
    True)`, `nn.LeakyReLU(0.1, True)` write in place as the keyword does)."""
    functions = python_names()
    switches = [(name, facts.training[name][0]) for name in facts.training]
    switches += [(name, facts.conditional[name][0]) for name in facts.conditional]
    calls = [(name, keyword, functions[name][1], 0) for name, keyword in switches if name in functions]
    for short, layer in sorted(vars(torch.nn).items()):
        if isinstance(layer, type) and issubclass(layer, torch.nn.Module):
            calls.append((f"torch.nn.{short}", "inplace", layer.__init__, 1))  # after `self`
    for name, keyword, function, skipped in calls:
        try:
            parameters = list(inspect.signature(function).parameters.values())[skipped:]
        except (TypeError, ValueError):
            continue
        for index, parameter in enumerate(parameters):
            if parameter.name == keyword and parameter.kind in (
                parameter.POSITIONAL_ONLY,
                parameter.POSITIONAL_OR_KEYWORD,
            ):
                facts.positions[f"{name}:{keyword}"] = index


# Typed as integers in the schemas, but options, not shapes: a dtype, a layout, a memory format.
_INTEGER_OPTIONS = frozenset({"dtype", "out_dtype", "layout", "memory_format"})


def _integer_argument(name: str, annotation: object) -> bool:
    return "int" in str(annotation).lower() and not name.startswith("_") and name not in _INTEGER_OPTIONS


def _integer_arguments(facts: Facts) -> None:
    """INTEGER_ARGUMENTS and TENSOR_LISTS: for each allowlisted operation, the arguments its signatures type as integers
    (a dimension, a size, an index: `cumsum(Tensor self, int dim)`), with the position each may be passed
    at (-1: keyword only), counted after the tensor a method is called on. A branch that passes one may
    raise for a tensor of another rank or size (issue 67, reviews 9 and 10: `cumsum(h, 1)` of a 1-d `h`)."""
    from graphmend.analysis import known_ops  # the allowlist: facts are kept for its entries only

    functions = python_names()
    for name in sorted(known_ops.ALLOWED):
        if known_ops.is_layer(name) or name not in functions:
            continue
        aten, function = functions[name]
        skipped = 1 if name.startswith("Tensor.") else 0
        found: dict[str, int] = {}
        try:
            parameters = list(inspect.signature(function).parameters.values())
        except (TypeError, ValueError):
            parameters = []
        annotated = [p for p in parameters if p.annotation is not inspect.Parameter.empty]
        if annotated and not name.startswith("Tensor."):  # a Python function (most of F): its annotations
            for index, parameter in enumerate(parameters):
                if _integer_argument(parameter.name, parameter.annotation):
                    keyword_only = parameter.kind in (parameter.KEYWORD_ONLY, parameter.VAR_KEYWORD)
                    found.setdefault(parameter.name, -1 if keyword_only else index)
        elif aten in aten_names():
            first_types: set[bool] = set()  # whether each overload takes a list of tensors first
            packet = getattr(torch.ops.aten, aten)
            for overload in packet.overloads():
                op = getattr(packet, overload)
                arguments = op._schema.arguments
                if _is_out_variant(op) or not arguments or "Tensor" not in str(arguments[0].type):
                    continue  # TorchScript's ops on numbers and lists share the namespace (`add.int`)
                first_types.add("List[Tensor]" in str(arguments[0].type))
                for index, argument in enumerate(arguments):
                    if _integer_argument(argument.name, argument.type):
                        position = -1 if argument.kwarg_only or index < skipped else index - skipped
                        known = found.get(argument.name, -1)
                        found[argument.name] = max(known, position) if -1 in (known, position) else min(known, position)
            if first_types == {True}:  # not `eq`, whose list overload is TorchScript's
                facts.tensor_lists.add(name)
        if found:
            facts.integers[name] = tuple(sorted(found.items()))


def compute() -> Facts:
    """All facts from the installed torch. Seeded, with the caller's random state and warnings kept."""
    facts = Facts(release=release())
    _declared(facts)
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        torch.manual_seed(0)
        _traced(facts)
        _functional(facts)
    _positions(facts)
    _integer_arguments(facts)
    return facts


# --- The module's text ---------------------------------------------------------------------------------------


def _literal(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        items = [_literal(v) for v in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return repr(value)


def _frozenset(name: str, doc: str, values: set[str]) -> list[str]:
    if not values:
        return [f"# {doc}", f"{name}: frozenset[str] = frozenset()", ""]
    body = [f"        {_literal(v)}," for v in sorted(values)]
    return [f"# {doc}", f"{name}: frozenset[str] = frozenset(", "    {", *body, "    }", ")", ""]


def _dict(name: str, annotation: str, doc: str, values: dict[str, Any]) -> list[str]:
    if not values:
        return [f"# {doc}", f"{name}: {annotation} = {{}}", ""]
    body = []
    for key in sorted(values):
        line = f"    {_literal(key)}: {_literal(values[key])},"
        if len(line) > LINE_LENGTH and isinstance(values[key], tuple):  # split as `ruff format` would
            line = "\n".join([f"    {_literal(key)}: (", *(f"        {_literal(v)}," for v in values[key]), "    ),"])
        body.append(line)
    return [f"# {doc}", f"{name}: {annotation} = {{", *body, "}", ""]


def render(facts: Facts) -> str:
    """The data module: literals only, sorted, one entry a line (as `ruff format` leaves it)."""
    lines = [
        f"# Generated by `python tests/torch_op_facts.py --write` from torch {facts.release}: do not edit.",
        '"""What torch declares about its own Python-visible ops: effects a predicated rewrite cannot run twice.',
        "",
        "Names: `torch.X`, `Tensor.X` (a method), `torch.nn.functional.X`, `torch.special.X`, `torch.linalg.X`,",
        "`torch.fft.X`. Read from ATen's schemas and tags (`torch.ops.aten.<name>`, `special_`/`linalg_`/`fft_`",
        'for the namespaces) and from sample calls traced under a dispatch mode; see the generator."""',
        "",
        "from __future__ import annotations",
        "",
        "# The torch release the facts were read from.",
        f"TORCH_RELEASE: str = {_literal(facts.release)}",
        "",
        *_frozenset(
            "RANDOM", "Reaches an op tagged `nondeterministic_seeded`: draws from the random generator.", facts.random
        ),
        *_dict(
            "MUTATES",
            "dict[str, tuple[str, ...]]",
            "Writes these arguments in place (schema `Tensor(a!)`, out= variants aside; an in-place `_` name).",
            facts.mutates,
        ),
        *_frozenset(
            "VIEWS",
            "Returns an alias of an input (schema `-> Tensor(a)`): a write to it writes the input.",
            facts.views,
        ),
        *_frozenset(
            "SYNCS",
            "Tagged `data_dependent_output` or `dynamic_output_shape`: reads values back to the host.",
            facts.syncs,
        ),
        *_dict(
            "TRAINING",
            "dict[str, tuple[str, object]]",
            "The parameter that switches training behaviour, and its default.",
            facts.training,
        ),
        *_dict(
            "WARNS_WITHOUT", "dict[str, str]", "Warns when this argument is omitted (measured).", facts.warns_without
        ),
        *_dict(
            "CONDITIONAL",
            "dict[str, tuple[str, str]]",
            "An effect only when this argument is given (measured by sample calls).",
            facts.conditional,
        ),
        *_dict(
            "POSITIONS",
            "dict[str, int]",
            "`name:argument`: the position the argument may be given at (from the signature; a layer's after `self`).",
            facts.positions,
        ),
        *_dict(
            "INTEGER_ARGUMENTS",
            "dict[str, tuple[tuple[str, int], ...]]",
            "An allowlisted operation's integer arguments (a dimension, a size, an index) and their positions "
            "(after a method's tensor; -1: keyword only).",
            facts.integers,
        ),
        *_frozenset(
            "TENSOR_LISTS",
            "An allowlisted operation that takes a sequence of tensors first (`torch.cat`): an empty one raises.",
            facts.tensor_lists,
        ),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the diff against the committed module (1 if it differs), or `--write` it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--write", action="store_true", help="rewrite the committed data module")
    options = parser.parse_args(argv)
    text = render(compute())
    unmeasured = sorted(warning_candidates() - FUNCTIONAL_SAMPLES.keys())
    if unmeasured:  # a new warning in F: add a sample call, so that WARNS_WITHOUT measures it
        print(f"note: F functions that may warn, with no sample call: {', '.join(unmeasured)}", file=sys.stderr)
    if options.write:
        TARGET.write_text(text, encoding="utf-8")
        print(f"wrote {TARGET.relative_to(ROOT)}")
        return 0
    old = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
    diff = list(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(TARGET), "torch " + release()))
    sys.stdout.writelines(diff)
    if not diff:
        print(f"{TARGET.relative_to(ROOT)} is up to date with torch {release()}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
