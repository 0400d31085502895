"""transformers 4.49.0 models/zamba/modeling_zamba.py:416: zero the padded positions only when a
mask is given and it is not all ones (the `is not None` part must stay Python: it guards the rest)."""
import torch


class Mixer(torch.nn.Module):
    def forward(self, hidden_states, attention_mask=None):
        hidden_states = hidden_states.transpose(1, 2)
        if attention_mask is not None and not torch.all(attention_mask == 1):  # dynamo: break
            hidden_states = hidden_states * attention_mask.unsqueeze(1)
        return hidden_states.transpose(1, 2)


ENTRY = torch.compile(Mixer(), backend="eager")
INPUTS = [
    (torch.ones(2, 4, 3), torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]])),
    (torch.ones(2, 4, 3), torch.ones(2, 4)),
    (torch.ones(2, 4, 3), None),
]
