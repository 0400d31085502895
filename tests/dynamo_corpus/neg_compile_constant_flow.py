"""A flag built with `or` from `torch.compiler.is_compiling()` is True under compile: the tensor test
behind `not flag and ...` is never evaluated, and an early return on such a flag ends what Dynamo
traces. Modelled on transformers 4.49.0 modeling_attn_mask_utils.py:436-448 (`is_tracing = ... or
is_torchdynamo_compiling()`, then `if not is_tracing and torch.all(mask == 1)`) and
modeling_utils.py:5146 (`warn_if_padding_and_no_attention_mask` returns first when compiling)."""
import torch


def expand_mask(mask, x):
    is_tracing = torch.jit.is_tracing() or isinstance(mask, torch.fx.Proxy) or torch.compiler.is_compiling()
    if not is_tracing and torch.all(mask == 1):
        return x
    return x * mask


def warn_if_padding(input_ids):
    if torch.jit.is_tracing() or torch.compiler.is_compiling():
        return
    if (input_ids == 0).any():
        print("padding without an attention mask", input_ids)


@torch.compile(backend="eager")
def model(input_ids, mask, x):
    warn_if_padding(input_ids)
    return expand_mask(mask, x)


ENTRY = model
INPUTS = [
    (torch.tensor([1, 0]), torch.ones(2), torch.ones(2)),
    (torch.tensor([1, 2]), torch.tensor([1.0, 0.0]), torch.ones(2)),
]
