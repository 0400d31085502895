"""Modelled on transformers 4.49.0 `models/wav2vec2/modeling_wav2vec2.py:454` (the feature encoder
makes its input require grad for gradient checkpointing, in training) and
`models/longt5/modeling_longt5.py:509` (`position_bias.requires_grad = True`)."""
import torch


class FeatureEncoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(1, 2, 3)
        self._requires_grad = True

    def forward(self, input_values):
        hidden_states = input_values[:, None]
        if self._requires_grad and self.training:
            hidden_states.requires_grad = True  # dynamo: break
        return self.conv(hidden_states).sum(dim=1)


model = FeatureEncoder()
model.train()
ENTRY = torch.compile(model, backend="eager")
INPUTS = [
    (torch.ones(2, 8),),
]
