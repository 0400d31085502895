"""transformers 4.49.0 models/mixtral/modeling_mixtral.py:139 style routing: the tokens a mask
selects, read with a boolean mask; the GM302 fix scopes `capture_dynamic_output_shape_ops` to
the `torch.compile` call below."""
import torch


def route(hidden: torch.Tensor, scores: torch.Tensor):
    selected = hidden[scores > 0.5]  # dynamo: break
    return selected.sum(0)


ENTRY = torch.compile(route, backend="eager")
INPUTS = [
    (torch.arange(12.0).reshape(4, 3), torch.tensor([0.9, 0.1, 0.7, 0.2])),
    (torch.arange(12.0).reshape(4, 3), torch.tensor([0.1, 0.1, 0.1, 0.2])),
]
