"""A user model built from transformers' building blocks (a BERT layer and its attention-mask helper)."""

import torch
from torch import nn
from transformers import BertConfig
from transformers.modeling_attn_mask_utils import _prepare_4d_attention_mask
from transformers.models.bert.modeling_bert import BertLayer


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        config = BertConfig(hidden_size=16, num_attention_heads=2, intermediate_size=32, attn_implementation="eager")
        self.embed = nn.Embedding(50, 16)
        self.layer = BertLayer(config)

    def forward(self, ids, mask):
        hidden = self.embed(ids)
        extended = _prepare_4d_attention_mask(mask, hidden.dtype)
        return self.layer(hidden, attention_mask=extended)[0]


model = torch.compile(Encoder())


def inputs():
    return [(torch.randint(0, 50, (2, 6)), torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]]))]
