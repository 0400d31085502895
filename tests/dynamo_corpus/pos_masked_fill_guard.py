"""transformers 4.49.0 models/rag/modeling_rag.py:1071: fill the padded positions only if there
are any: a no-op when the mask is all false."""
import torch


@torch.compile(backend="eager")
def mask_pads(ll, smooth_obj, target):
    pad_mask = target.eq(0)
    if pad_mask.any():  # dynamo: break
        ll.masked_fill_(pad_mask, 0.0)
        smooth_obj.masked_fill_(pad_mask, 0.0)
    return ll.squeeze(-1), smooth_obj.squeeze(-1)


ENTRY = mask_pads
INPUTS = [
    (torch.ones(2, 3, 1), torch.ones(2, 3, 1), torch.tensor([[1, 0, 2], [3, 4, 5]]).unsqueeze(-1)),
    (torch.ones(2, 3, 1), torch.ones(2, 3, 1), torch.tensor([[1, 1, 2], [3, 4, 5]]).unsqueeze(-1)),
]
