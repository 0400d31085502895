"""transformers 5.23.0 `models/higgs_audio_v2/modeling_higgs_audio_v2.py:253`: a mask read inside
the arguments of a tensor method call spanning lines. Dynamo breaks at the read, then again at the
call: the resumed frame holds the bound method `hidden_states.masked_scatter`, which it cannot trace."""
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)

    def forward(self, hidden_states: torch.Tensor, mask: torch.BoolTensor):
        hidden_states = hidden_states.masked_scatter(  # dynamo: break
            mask.unsqueeze(-1),
            self.norm(hidden_states[mask]),  # dynamo: break
        )
        return hidden_states


torch.manual_seed(0)
ENTRY = torch.compile(Layer(), backend="eager")
INPUTS = [(torch.randn(2, 3, 4), torch.tensor([[True, False, True], [False, False, True]]))]
