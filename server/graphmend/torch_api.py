"""What torch's API returns, as far as graph breaks care: tensors, bool tensors, or Python values.

Only names listed here are trusted; anything else is "unknown" and never flagged.
"""

from __future__ import annotations

import ast

# torch.<name>(...) returning a tensor (or a tuple of tensors, which unpacks to tensors).
TENSOR_FUNCTIONS = frozenset(
    """
    abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr amax amin aminmax angle arange
    arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort as_strided as_tensor asin
    asinh atan atan2 atanh atleast_1d atleast_2d atleast_3d baddbmm bernoulli bitwise_and bitwise_not
    bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift bmm broadcast_to bucketize cartesian_prod
    cat cdist ceil chain_matmul cholesky chunk clamp clamp_max clamp_min clip clone column_stack complex
    concat concatenate conj cos cosh count_nonzero cov cross cummax cummin cumprod cumsum deg2rad diag
    diag_embed diagflat diagonal diff digamma dist div divide dot dsplit dstack einsum empty empty_like
    erf erfc erfinv exp exp2 expm1 eye flatten flip fliplr flipud float_power floor floor_divide fmax fmin
    fmod frac from_numpy full full_like gather gcd heaviside histc hsplit hstack hypot i0 index_add
    index_copy index_fill index_put index_reduce index_select inner inverse kron kthvalue lcm ldexp lerp
    lgamma linspace log log10 log1p log2 logaddexp logaddexp2 logcumsumexp logdet logit logspace
    logsumexp lu masked_fill matmul matrix_exp matrix_power max maximum mean median min minimum mm mode
    moveaxis movedim msort mul multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile
    nansum narrow narrow_copy neg negative nextafter nonzero norm normal ones ones_like outer pdist
    permute pinverse poisson polar polygamma positive pow prod quantile rad2deg rand rand_like randint
    randint_like randn randn_like randperm range ravel real reciprocal remainder renorm repeat_interleave
    reshape resolve_conj resolve_neg roll rot90 round rsqrt scatter scatter_add scatter_reduce
    searchsorted select select_scatter sgn sigmoid sign sin sinc sinh slice_scatter softmax log_softmax
    sort split sqrt square squeeze stack std std_mean sub subtract sum svd swapaxes swapdims t take
    take_along_dim tan tanh tensor tensor_split tensordot tile topk trace transpose trapezoid trapz
    triangular_solve tril tril_indices triu triu_indices true_divide trunc unbind unflatten unsqueeze
    vander var var_mean vdot view_as_complex view_as_real vsplit vstack where xlogy zeros zeros_like
    relu dropout layer_norm group_norm batch_norm embedding conv1d conv2d conv3d baddbmm lstsq
    Tensor FloatTensor LongTensor DoubleTensor HalfTensor IntTensor ByteTensor
    """.split()
)

# torch.<name>(...) returning a bool tensor: usable as a mask, data-dependent when tested.
BOOL_TENSOR_FUNCTIONS = frozenset(
    """
    all any eq ne gt ge lt le greater greater_equal less less_equal not_equal isclose isfinite isin isinf
    isnan isneginf isposinf isreal logical_and logical_not logical_or logical_xor signbit BoolTensor
    """.split()
)

# torch.<name>(...) that return Python values (no tensor in a branch on them).
PYTHON_VALUE_FUNCTIONS = frozenset(
    """
    is_tensor is_storage is_floating_point is_complex is_nonzero numel finfo iinfo get_default_dtype
    is_grad_enabled is_inference_mode_enabled is_autocast_enabled device dtype Size get_num_threads
    result_type promote_types can_cast broadcast_shapes is_deterministic_algorithms_warn_only_enabled
    are_deterministic_algorithms_enabled get_autocast_dtype get_autocast_gpu_dtype get_autocast_cpu_dtype
    """.split()
)

# torch.<name> values that are Python objects (dtypes, layouts, memory formats): comparing with
# one (`h.dtype == torch.float16`) is decided while tracing.
PYTHON_VALUE_ATTRIBUTES = frozenset(
    """
    float16 half float32 float float64 double bfloat16 complex32 complex64 cfloat complex128 cdouble uint8
    int8 int16 short int32 int int64 long bool uint16 uint32 uint64 float8_e4m3fn float8_e5m2 qint8 quint8
    qint32 strided sparse_coo sparse_csr contiguous_format channels_last channels_last_3d preserve_format
    """.split()
)

# Submodules whose functions all return tensors.
TENSOR_NAMESPACES = ("torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")

# Tensor methods returning Python values: branching on them is shape logic, not data.
TENSOR_PYTHON_METHODS = frozenset(
    """
    size dim ndimension numel nelement element_size stride storage_offset data_ptr get_device
    is_contiguous is_floating_point is_complex is_pinned is_shared is_set_to is_signed is_inference
    has_names untyped_storage __len__ type
    """.split()
)
# Tensor attributes holding Python values.
TENSOR_PYTHON_ATTRIBUTES = frozenset(
    """
    shape ndim dtype device layout requires_grad is_cuda is_cpu is_leaf is_sparse is_quantized is_meta
    is_mps is_xpu names itemsize nbytes output_nr grad_fn
    """.split()
)
# Tensor attributes that are tensors.
TENSOR_TENSOR_ATTRIBUTES = frozenset("T mT H mH data grad real imag values indices".split())
# Tensor methods returning bool tensors.
TENSOR_BOOL_METHODS = frozenset(
    """
    all any bool eq ne gt ge lt le greater greater_equal less less_equal not_equal isclose isfinite isinf
    isnan isneginf isposinf isreal logical_and logical_not logical_or logical_xor signbit
    """.split()
)
# Tensor methods and attributes whose result shares the tensor's storage (a view).
VIEW_METHODS = frozenset(
    """
    view view_as reshape reshape_as transpose permute expand expand_as squeeze unsqueeze flatten unflatten narrow select
    t T mT H mH diagonal detach split chunk unbind as_strided movedim swapaxes real imag
    """.split()
)

# Tensor methods whose result has the receiver's dtype (a mask moved, copied or reshaped is still a
# mask); `to` and `view` only when no argument may name a dtype.
DTYPE_KEEPING_METHODS = frozenset(
    """
    to cpu cuda contiguous clone detach view view_as reshape reshape_as expand expand_as broadcast_to
    permute transpose swapaxes swapdims movedim moveaxis squeeze unsqueeze flatten unflatten ravel t
    repeat tile flip fliplr flipud roll narrow index_select gather take_along_dim tril triu
    """.split()
)
# Tensor methods that leave the tensor world (the break is the call itself: GM301).
SCALAR_METHODS = frozenset({"item", "tolist"})
# Builtins that turn a tensor into a Python scalar (same break as .item()).
SCALAR_BUILTINS = frozenset({"int", "float", "bool", "complex"})
# Every public method and attribute of torch.Tensor (torch 2.13: `dir(torch.Tensor)` without `_`
# names). A method outside this list on a value that may be a tensor is not a tensor method
# (`d.items()` on what is really a dict), so its result stays unknown.
TENSOR_METHODS = frozenset(
    """
H T abs abs_ absolute absolute_ acos acos_ acosh acosh_ add add_ addbmm addbmm_ addcdiv addcdiv_
addcmul addcmul_ addmm addmm_ addmv addmv_ addr addr_ adjoint all allclose amax amin aminmax angle
any apply_ arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2 arctan2_
arctan_ arctanh arctanh_ argmax argmin argsort argwhere as_strided as_strided_ as_strided_scatter
as_subclass asin asin_ asinh asinh_ atan atan2 atan2_ atan_ atanh atanh_ backward baddbmm baddbmm_
bernoulli bernoulli_ bfloat16 bincount bitwise_and bitwise_and_ bitwise_left_shift
bitwise_left_shift_ bitwise_not bitwise_not_ bitwise_or bitwise_or_ bitwise_right_shift
bitwise_right_shift_ bitwise_xor bitwise_xor_ bmm bool broadcast_to byte cauchy_ ccol_indices
cdouble ceil ceil_ cfloat chalf char cholesky cholesky_inverse cholesky_solve chunk clamp clamp_
clamp_max clamp_max_ clamp_min clamp_min_ clip clip_ clone coalesce col_indices conj conj_physical
conj_physical_ const_data_ptr contiguous copy_ copysign copysign_ corrcoef cos cos_ cosh cosh_
count_nonzero cov cpu cross crow_indices cuda cummax cummin cumprod cumprod_ cumsum cumsum_ data
data_ptr deg2rad deg2rad_ dense_dim dequantize det detach detach_ device diag diag_embed diagflat
diagonal diagonal_scatter diff digamma digamma_ dim dim_order dist div div_ divide divide_ dot
double dsplit dtype eig element_size eq eq_ equal erf erf_ erfc erfc_ erfinv erfinv_ exp exp2 exp2_
exp_ expand expand_as expm1 expm1_ exponential_ fill_ fill_diagonal_ fix fix_ flatten flip fliplr
flipud float float_power float_power_ floor floor_ floor_divide floor_divide_ fmax fmin fmod fmod_
frac frac_ frexp gather gcd gcd_ ge ge_ geometric_ geqrf ger get_device grad grad_dtype grad_fn
greater greater_ greater_equal greater_equal_ gt gt_ half hardshrink hash_tensor heaviside
heaviside_ histc histogram hsplit hypot hypot_ i0 i0_ igamma igamma_ igammac igammac_ imag index
index_add index_add_ index_copy index_copy_ index_fill index_fill_ index_put index_put_ index_reduce
index_reduce_ index_select indices inner int int_repr inverse ipu is_coalesced is_complex is_conj
is_contiguous is_cpu is_cuda is_distributed is_floating_point is_inference is_ipu is_leaf is_maia
is_meta is_mkldnn is_mps is_mtia is_neg is_nested is_nonzero is_pinned is_quantized is_same_size
is_set_to is_shared is_signed is_sparse is_sparse_csr is_vulkan is_xla is_xpu isclose isfinite isinf
isnan isneginf isposinf isreal istft item itemsize kron kthvalue layout lcm lcm_ ldexp ldexp_ le le_
lerp lerp_ less less_ less_equal less_equal_ lgamma lgamma_ log log10 log10_ log1p log1p_ log2 log2_
log_ log_normal_ log_softmax logaddexp logaddexp2 logcumsumexp logdet logical_and logical_and_
logical_not logical_not_ logical_or logical_or_ logical_xor logical_xor_ logit logit_ logsumexp long
lstsq lt lt_ lu lu_solve mH mT map2_ map_ masked_fill masked_fill_ masked_scatter masked_scatter_
masked_select matmul matrix_exp matrix_power max maximum mean median min minimum mm mode module_load
moveaxis movedim msort mtia mul mul_ multinomial multiply multiply_ mv mvlgamma mvlgamma_ name
nan_to_num nan_to_num_ nanmean nanmedian nanquantile nansum narrow narrow_copy nbytes ndim
ndimension ne ne_ neg neg_ negative negative_ nelement new new_empty new_empty_strided new_full
new_ones new_tensor new_zeros nextafter nextafter_ nonzero nonzero_static norm normal_ not_equal
not_equal_ numel numpy orgqr ormqr outer output_nr permute pin_memory pinverse polygamma polygamma_
positive pow pow_ prelu prod put put_ q_per_channel_axis q_per_channel_scales
q_per_channel_zero_points q_scale q_zero_point qr qscheme quantile rad2deg rad2deg_ random_ ravel
real reciprocal reciprocal_ record_stream register_hook register_post_accumulate_grad_hook reinforce
relu relu_ remainder remainder_ renorm renorm_ repeat repeat_interleave requires_grad requires_grad_
reshape reshape_as resize resize_ resize_as resize_as_ resize_as_sparse_ resolve_conj resolve_neg
retain_grad retains_grad roll rot90 round round_ row_indices rsqrt rsqrt_ scatter scatter_
scatter_add scatter_add_ scatter_reduce scatter_reduce_ select select_scatter set_ sgn sgn_ shape
share_memory_ short sigmoid sigmoid_ sign sign_ signbit sin sin_ sinc sinc_ sinh sinh_ size
slice_inverse slice_scatter slogdet smm softmax solve sort sparse_dim sparse_mask sparse_resize_
sparse_resize_and_clear_ split split_with_sizes sqrt sqrt_ square square_ squeeze squeeze_ sspaddmm
std stft storage storage_offset storage_type stride sub sub_ subtract subtract_ sum sum_to_size svd
swapaxes swapaxes_ swapdims swapdims_ symeig t t_ take take_along_dim tan tan_ tanh tanh_
tensor_split tile to to_dense to_mkldnn to_padded_tensor to_sparse to_sparse_bsc to_sparse_bsr
to_sparse_coo to_sparse_csc to_sparse_csr tolist topk trace transpose transpose_ triangular_solve
tril tril_ triu triu_ true_divide true_divide_ trunc trunc_ type type_as unbind unflatten unfold
uniform_ unique unique_consecutive unsafe_chunk unsafe_split unsafe_split_with_sizes unsqueeze
unsqueeze_ untyped_storage values var vdot view view_as volatile vsplit where xlogy xlogy_ xpu zero_
    """.split()
)
# Methods that are not tensors' own (numpy leaves the graph).
TENSOR_FOREIGN_METHODS = frozenset({"numpy", "__repr__", "__str__", "storage"})

# Reductions and predicates: a call of one of these on a value is itself evidence of a tensor.
REDUCTION_METHODS = frozenset(
    """
    sum any all max min mean norm prod std var amax amin argmax argmin count_nonzero median logsumexp
    nansum nanmean
    """.split()
)
# Methods and attributes whose use marks an unannotated parameter as a tensor.
TENSOR_EVIDENCE = REDUCTION_METHODS | frozenset(
    """
    shape dtype device ndim dim view view_as reshape reshape_as unsqueeze squeeze transpose permute
    contiguous masked_fill masked_fill_ float half bfloat16 softmax log_softmax matmul bmm clamp clamp_
    sigmoid relu tanh exp expand expand_as repeat flatten unflatten numel item tolist detach cpu cuda
    abs sqrt pow nonzero unique gather scatter index_select chunk narrow type_as new_zeros
    new_ones new_full new_empty new_tensor masked_select topk argsort cumsum cumprod clone
    add_ sub_ mul_ div_ copy_ zero_ fill_ clamp_min_ clamp_max_ masked_scatter_ index_put_ scatter_ index_fill_
    """.split()
)
# torch functions whose first argument is a size, a Python value or data, not a tensor: using a
# name there says nothing about it being one (`torch.arange(n)`, `torch.tensor(values)`).
FACTORY_FUNCTIONS = frozenset(
    """
    arange zeros ones full empty rand randn randint randperm tensor as_tensor eye linspace logspace
    from_numpy range Tensor FloatTensor LongTensor DoubleTensor HalfTensor IntTensor ByteTensor BoolTensor
    """.split()
)

# Functions and methods whose output shape depends on data (GM302).
DYNAMIC_SHAPE_FUNCTIONS = frozenset(
    {
        "torch.nonzero",
        "torch.argwhere",
        "torch.unique",
        "torch.unique_consecutive",
        "torch.masked_select",
        "torch.bincount",  # length: the largest value plus one (measured: tests/dynamo_corpus/pos_bincount.py)
    }
)
DYNAMIC_SHAPE_METHODS = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select", "bincount"})

# Calls that are constant True while Dynamo traces: their guarded code is never traced.
IS_COMPILING_FUNCTIONS = frozenset(
    {
        "torch.compiler.is_compiling",
        "torch.compiler.is_dynamo_compiling",
        "torch._dynamo.is_compiling",
        "torch._utils.is_compiling",
        "transformers.utils.is_torchdynamo_compiling",
        "transformers.utils.import_utils.is_torchdynamo_compiling",
    }
)

# Logger factories of libraries (`logger = logging.get_logger(__name__)`).
LIBRARY_LOGGER_FACTORIES = frozenset(
    {
        "transformers.utils.logging.get_logger",
        "transformers.logging.get_logger",
        "diffusers.utils.logging.get_logger",
        "diffusers.logging.get_logger",
        "accelerate.logging.get_logger",
        "huggingface_hub.utils.logging.get_logger",
    }
)

# Calls that are constant False while Dynamo traces (TorchScript is not Dynamo).
IS_SCRIPTING_FUNCTIONS = frozenset({"torch.jit.is_scripting", "torch.jit.is_tracing", "torch._C._get_tracing_state"})

# torch.nn layers whose call returns one tensor (so `self.proj(x)` is a tensor).
SINGLE_TENSOR_MODULES = frozenset(
    """
    Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d LayerNorm
    RMSNorm GroupNorm BatchNorm1d BatchNorm2d BatchNorm3d InstanceNorm1d InstanceNorm2d InstanceNorm3d Embedding
    Dropout Dropout1d Dropout2d Dropout3d ReLU ReLU6 GELU SiLU Mish Tanh Sigmoid Softmax LogSoftmax Identity
    Flatten Unflatten MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d AdaptiveAvgPool1d
    AdaptiveAvgPool2d AdaptiveAvgPool3d Upsample LeakyReLU ELU Hardtanh PReLU Softplus
    """.split()
)

# Standard-library calls Dynamo cannot trace, with the gb page it reports at the call (measured on
# torch 2.13.0, each alone in a compiled function). Not here because they trace: `random.randint`,
# `random.uniform`, `random.randrange`, `os.getenv`, `os.environ.get`; nor where the break is
# reported inside the library rather than at the call (`json.dumps`, `uuid.uuid4`, `os.environ[k] = v`).
UNTRACEABLE_CALLS: dict[str, str] = {
    **dict.fromkeys(
        (
            "random.random",
            "random.seed",
            "random.choice",
            "random.choices",
            "random.sample",
            "random.shuffle",
            "random.gauss",
            "random.normalvariate",
            "random.getrandbits",
            "time.time",
            "time.time_ns",
            "time.perf_counter",
            "time.perf_counter_ns",
            "time.monotonic",
            "time.process_time",
            "time.sleep",
        ),
        "gb0007",
    ),
    **dict.fromkeys(
        ("datetime.datetime.now", "datetime.datetime.utcnow", "sys.stdout.write", "sys.stderr.write"), "gb0156"
    ),
    "builtins.open": "gb0059",
}

# Calls of UNTRACEABLE_CALLS that a later torch traces, and the release that does (measured: the Dynamo
# corpus under torch 2.14.1, benchmarks/README.md): `random.seed` no longer breaks there.
# The same corpus gave: a `with` on a context manager made outside the compiled code
# (`dynamo_corpus/pos_implicit_enter.py`) is entered from 2.14.1, and `a @ b`, `~a` on objects of a user
# class trace again there (`pos_operator_on_object.py`).
TRACEABLE_SINCE: dict[str, tuple[int, int]] = {
    "random.seed": (2, 14),
    "context manager made outside": (2, 14),
    "operator on an object": (2, 14),
}

# Decorators that keep a function out of every graph: Dynamo never traces its body, and each call
# from compiled code splits the graph there ("Skip calling `torch.compiler.disable()`d function", gb0098).
DISABLE_DECORATORS = frozenset({"torch.compiler.disable", "torch._dynamo.disable"})

# The sets a program fills so that Dynamo neither breaks at nor traces a message call: functions it
# records and replays after the graph, and functions it drops (`ignore_logger_methods` is the older
# name of `ignore_logging_functions`), measured on torch 2.13.0 (`dynamo_corpus/neg_registered_messages.py`).
REPLAYED_MESSAGE_SETS = frozenset(
    f"torch.{config}.config.reorderable_logging_functions" for config in ("compiler", "_dynamo")
)
DROPPED_MESSAGE_SETS = frozenset(
    f"torch._dynamo.config.{name}" for name in ("ignore_logging_functions", "ignore_logger_methods")
)

# Breaks an older torch does not have, and the first release that has them. Measured on the Dynamo
# corpus under torch 2.9.1, 2.10.0, 2.11.0 and 2.12.0 (`benchmarks/torch_versions.py`): `.tolist()`
# traces on 2.9.1 and breaks from 2.10.0; a tensor used as a slice bound traces on 2.9.1 and 2.10.0
# and breaks from 2.11.0 (Dynamo made unbacked ints of them before); a `with` on a module-level
# context manager traces on 2.9.1 and 2.10.0 and breaks from 2.11.0 (one a module's `__init__` made
# breaks on all three; `pos_implicit_enter.py`); an unhandled `raise` in the compiled frame breaks
# from 2.11.0 (`pos_unhandled_raise.py`), a `class` statement from 2.10.0 (`pos_class_in_compiled.py`);
# `a @ b` and `~a` on objects of a user class break on 2.11.0 to 2.13.0 only (`pos_operator_on_object.py`);
# a registered message called with a keyword argument (`print(..., sep="")`, `warnings.warn(...,
# stacklevel=2)`) is replayed up to 2.13.0 and breaks on 2.14.1 (`neg_registered_messages.py`).
BREAKS_SINCE: dict[str, tuple[int, int]] = {
    "tolist": (2, 10),
    "class statement": (2, 10),
    "tensor slice bound": (2, 11),
    "module-level context manager": (2, 11),
    "unhandled raise": (2, 11),
    "replayed message with a keyword": (2, 14),
    "operator on an object": (2, 11),
}


def breaks_on(construct: str, torch_version: tuple[int, int] | None) -> bool:
    """Whether `construct` (a key of BREAKS_SINCE) breaks the graph on `torch_version` (None: the newest)."""
    return torch_version is None or torch_version >= BREAKS_SINCE[construct]


def traced_on(construct: str, torch_version: tuple[int, int] | None) -> bool:
    """Whether `torch_version` is known to trace `construct` (a key of TRACEABLE_SINCE, or any other:
    never); an unknown release is taken to break, as the one the tables were measured against."""
    since = TRACEABLE_SINCE.get(construct)
    return since is not None and torch_version is not None and torch_version >= since


# torch functions whose result is not a tensor and that Dynamo does not model: "torch.* op returned
# non-Tensor" (gb0208), each measured on torch 2.13.0. `torch.backends.cudnn.flags(...)` (a
# context manager, wav2vec2's CTC loss) also sends the rest of the frame to eager (gb0142).
NON_TENSOR_TORCH_CALLS = frozenset({"torch.backends.cudnn.flags"})


# NumPy functions that torch._numpy does not implement, so Dynamo cannot trace them ("attempted to
# trace numpy function unsupported by PyTorch", gb0294): the functions of numpy, numpy.random,
# numpy.linalg and numpy.fft missing from Dynamo's `get_np_to_tnp_map()`, torch 2.13.0 with numpy
# 2.4 (kept equal to it by tests/test_coverage.py). Names relative to `numpy.`.
NUMPY_UNSUPPORTED = frozenset(
    f"numpy.{name}"
    for name in """
apply_along_axis apply_over_axes argpartition array2string array_repr array_str asanyarray
asarray_chkfinite asfortranarray asmatrix astype base_repr binary_repr bitwise_count block bmat
busday_count busday_offset compress cumulative_prod cumulative_sum datetime_as_string datetime_data
delete digitize ediff1d einsum_path extract format_float_positional format_float_scientific frexp
frombuffer fromfile fromfunction fromiter frompyfunc fromregex fromstring genfromtxt get_include
get_printoptions getbufsize geterr geterrcall histogram_bin_edges info insert interp intersect1d
is_busday isdtype isfortran isin isnat iterable ix_ lexsort linalg.cross linalg.diagonal
linalg.matmul linalg.matrix_norm linalg.matrix_transpose linalg.outer linalg.svdvals
linalg.tensordot linalg.trace linalg.vecdot linalg.vector_norm load loadtxt mask_indices
matrix_transpose matvec may_share_memory mintypecode nanargmax nanargmin nancumprod nancumsum nanmax
nanmean nanmedian nanmin nanpercentile nanprod nanquantile nanstd nansum nanvar nested_iters
packbits partition piecewise place poly polyadd polyder polydiv polyfit polyint polymul polysub
polyval printoptions promote_types putmask random.beta random.binomial random.bytes random.chisquare
random.default_rng random.dirichlet random.exponential random.f random.gamma random.geometric
random.get_bit_generator random.get_state random.gumbel random.hypergeometric random.laplace
random.logistic random.lognormal random.logseries random.multinomial random.multivariate_normal
random.negative_binomial random.noncentral_chisquare random.noncentral_f random.pareto
random.permutation random.poisson random.power random.random_integers random.ranf random.rayleigh
random.set_bit_generator random.set_state random.standard_cauchy random.standard_exponential
random.standard_gamma random.standard_normal random.standard_t random.triangular random.vonmises
random.wald random.weibull random.zipf ravel_multi_index require roots save savetxt savez
savez_compressed select set_printoptions setbufsize setdiff1d seterr seterrcall setxor1d
shares_memory show_config show_runtime sort_complex spacing trapezoid trim_zeros typename union1d
unique_all unique_counts unique_inverse unique_values unpackbits unravel_index unstack unwrap vecdot
vecmat
""".split()
)

# numpy.random functions and the position of their `size` argument (None: the shape is given as
# `rand(d0, d1, ...)`): called without it they return one number, not an array (measured on torch
# 2.13: each such draw in compiled code breaks, "Data dependent operator", gb0033).
_NUMPY_SCALAR_DRAWS = {
    "rand": None,
    "randn": None,
    "random": 0,
    "random_sample": 0,
    "uniform": 2,
    "normal": 2,
    "randint": 2,
    "choice": 1,
}


def is_numpy_scalar_draw(qualname: str | None, call: ast.Call) -> bool:
    """`np.random.random()`, `np.random.uniform(0, 1)`, `np.random.choice(4)`: one number drawn; and
    `np.random.choice` in every form, whose sampling reads tensor data (measured on torch 2.13 with a
    size, `replace=False` and `p=`: "Data dependent operator", gb0033; wav2vec2's SpecAugment masking)."""
    if qualname == "numpy.random.choice":
        return True
    if qualname is None or not qualname.startswith("numpy.random."):
        return False
    name = qualname.removeprefix("numpy.random.")
    if name not in _NUMPY_SCALAR_DRAWS or any(k.arg == "size" for k in call.keywords):
        return False
    position = _NUMPY_SCALAR_DRAWS[name]
    return not call.args if position is None else len(call.args) <= position


# Where an API takes sizes or bounds, which are Python ints: a tensor there is read with an implicit
# `.item()` ("Data dependent operator", gb0033, measured on torch 2.13 for every entry below; the
# builtin `range` fails as "Failed to trace builtin operator", gb0059). name → (the positions that
# are sizes, "*" for all of them; the keyword names that are). A tuple or list there holds sizes.
SIZE_FUNCTIONS: dict[str, tuple[str | tuple[int, ...], tuple[str, ...]]] = {
    **{f"torch.{name}": ("*", ("size",)) for name in ("zeros", "ones", "empty", "rand", "randn")},
    "torch.arange": ("*", ("start", "end", "step")),
    "torch.full": ((0,), ("size",)),
    "torch.linspace": ((2,), ("steps",)),
    "torch.logspace": ((2,), ("steps",)),
    "torch.eye": ((0, 1), ("n", "m")),
    "torch.nn.functional.interpolate": ((1,), ("size",)),
    "torch.nn.functional.pad": ((1,), ("pad",)),
    # NumPy in compiled code is traced as tensors (torch._numpy), so its factories read sizes the same way
    **{f"numpy.{name}": ((0,), ("shape",)) for name in ("zeros", "ones", "empty", "full")},
    "numpy.arange": ("*", ("start", "stop", "step")),
    "numpy.linspace": ((2,), ("num",)),
    "numpy.eye": ((0, 1), ("N", "M")),
}
SIZE_METHODS: dict[str, tuple[str | tuple[int, ...], tuple[str, ...]]] = {
    "repeat": ("*", ("repeats",)),
    "expand": ("*", ("size",)),
    "view": ("*", ("size",)),
    "reshape": ("*", ("shape",)),
    "tile": ("*", ("dims",)),
    "narrow": ((1, 2), ("start", "length")),
    "unflatten": ((1,), ("sizes",)),
    **{name: ((0,), ("size",)) for name in ("new_zeros", "new_ones", "new_empty", "new_full")},
}
