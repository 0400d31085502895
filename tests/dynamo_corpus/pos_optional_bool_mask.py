"""transformers 5.23.0 `models/higgs_audio_v2/modeling_higgs_audio_v2.py` (decoder layer): a mask
parameter annotated `torch.BoolTensor | None`, moved with `.to(x.device)`, then read through
(`x[mask]`, also in `x[~mask] += v`): reads of data-dependent size."""
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.audio_norm = nn.LayerNorm(4)
        self.text_norm = nn.LayerNorm(4)

    def forward(self, hidden_states: torch.Tensor, audio_token_mask: torch.BoolTensor | None = None):
        if audio_token_mask is None:
            return self.text_norm(hidden_states)
        audio_token_mask = audio_token_mask.to(hidden_states.device)
        audio = self.audio_norm(hidden_states[audio_token_mask])  # dynamo: break
        hidden_states = hidden_states.clone()
        hidden_states[~audio_token_mask] += 1.0  # dynamo: break
        return hidden_states, audio


torch.manual_seed(0)
ENTRY = torch.compile(Layer(), backend="eager")
INPUTS = [(torch.randn(2, 3, 4), torch.tensor([[True, False, True], [False, False, True]])), (torch.randn(2, 3, 4),)]
