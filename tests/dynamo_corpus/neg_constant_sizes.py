"""Sizes that look like tensors but trace: a constant of Python ints (`torch.tensor(min(...))` as
transformers 4.49.0 models/deberta/modeling_deberta.py:149-150 computes it; as a size, Dynamo knows
its value), models/longformer/modeling_longformer.py:757-760 (`torch.div` of two sizes), and a 0-d
tensor the compiled function receives (specialised on its value)."""
import torch


def compute_attention_span(query_layer, key_layer, max_relative_positions: int):
    return torch.tensor(min(max(query_layer.size(-2), key_layer.size(-2)), max_relative_positions))


class RelativeAttention(torch.nn.Module):
    def forward(self, query_layer, key_layer, rel_embeddings, n):
        att_span = compute_attention_span(query_layer, key_layer, 8)
        rel = rel_embeddings.new_zeros(att_span * 2, 4) + rel_embeddings[:1]
        chunks_count = torch.div(query_layer.size(1), 2, rounding_mode="trunc") - 1
        chunked = query_layer.new_zeros(chunks_count + 1, 2)
        steps = torch.arange(n)
        return rel.sum() + chunked.sum() + steps.sum()


ENTRY = torch.compile(RelativeAttention(), backend="eager")
INPUTS = [(torch.ones(2, 6, 4), torch.ones(2, 6, 4), torch.ones(16, 4), torch.tensor(3))]
