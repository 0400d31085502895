"""What torch's API returns, as far as graph breaks care: tensors, bool tensors, or Python values.

Only names listed here are trusted; anything else is "unknown" and never flagged.
"""

from __future__ import annotations

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
    nansum narrow narrow_copy neg negative nextafter norm normal ones ones_like outer pdist
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
    are_deterministic_algorithms_enabled
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
# Tensor methods that leave the tensor world (the break is the call itself: GM301).
SCALAR_METHODS = frozenset({"item", "tolist"})
# Builtins that turn a tensor into a Python scalar (same break as .item()).
SCALAR_BUILTINS = frozenset({"int", "float", "bool", "complex"})
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
    abs sqrt pow nonzero unique gather scatter index_select chunk split narrow type_as new_zeros
    new_ones new_full new_empty new_tensor masked_select topk sort argsort cumsum cumprod
    """.split()
)

# Functions and methods whose output shape depends on data (GM302).
DYNAMIC_SHAPE_FUNCTIONS = frozenset(
    {"torch.nonzero", "torch.argwhere", "torch.unique", "torch.unique_consecutive", "torch.masked_select"}
)
DYNAMIC_SHAPE_METHODS = frozenset({"nonzero", "argwhere", "unique", "unique_consecutive", "masked_select"})

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
