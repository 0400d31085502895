"""transformers 4.49.0 models/zamba/modeling_zamba.py:1153-1156: a causal mask whose size is
`cache_position[-1] + 1`, a tensor the compiled code computes (Table 2's zamba case breaks there,
"Data dependent operator"); and the other places an API takes a size or a bound, each fed a value
computed just before (a tensor the frame receives is known to Dynamo and traces: `torch.arange(n)`
below, with `n` an argument, and `target_length` again after the break at its first use, as at
zamba:1159); a slice bound breaks with any tensor, even a constant of Python ints
(models/deberta/modeling_deberta.py:324-327)."""
import torch
import torch.nn.functional as F


def compute_attention_span(query_layer, key_layer, max_relative_positions: int):
    return torch.tensor(min(max(query_layer.size(-2), key_layer.size(-2)), max_relative_positions))


def relative_window(cache_position, query_layer):
    att_span = compute_attention_span(query_layer, query_layer, 2)
    return cache_position[2 - att_span : 2 + att_span]  # dynamo: break


class CausalMask(torch.nn.Module):
    def forward(self, input_tensor, cache_position, n):
        sequence_length = input_tensor.shape[1]
        target_length = cache_position[-1] + 1
        causal_mask = torch.full((sequence_length, target_length), fill_value=-1.0)  # dynamo: break
        causal_mask = causal_mask * (torch.arange(target_length) > 0)  # resumed: the frame receives it
        known = torch.arange(n)
        steps = torch.arange(cache_position.sum())  # dynamo: break
        tiled = input_tensor.repeat(cache_position.max() + 1, 1)  # dynamo: break
        extra = input_tensor.new_zeros(cache_position.sum() - 1)  # dynamo: break
        up = F.interpolate(input_tensor[None], size=cache_position.sum() + 1)  # dynamo: break
        total = 0
        for i in range(cache_position.max()):  # dynamo: break
            total = total + i
        head = cache_position[: cache_position.sum()]  # dynamo: break
        span = relative_window(cache_position, input_tensor)
        return causal_mask.sum() + known.sum() + steps.sum() + tiled.sum() + extra.sum() + up.sum() + total + head.sum() + span.sum()


ENTRY = torch.compile(CausalMask(), backend="eager")
INPUTS = [(torch.ones(1, 3), torch.tensor([0, 1, 2]), torch.tensor(4))]
