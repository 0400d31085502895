"""transformers 4.49.0 models/longt5/modeling_longt5.py:1199/1220/1231: the same guarded clamp
three times, each binding `clamp_value`, a temporary of its own branch."""
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, hidden_states):
        if hidden_states.dtype == torch.float16 and torch.isinf(hidden_states).any():  # dynamo: break
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        hidden_states = hidden_states * 2
        if hidden_states.dtype == torch.float16 and torch.isinf(hidden_states).any():  # dynamo: break
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        return hidden_states


ENTRY = torch.compile(Block(), backend="eager")
INPUTS = [
    (torch.full((2, 3), 60000.0, dtype=torch.float16),),
    (torch.full((2, 3), 20000.0, dtype=torch.float16),),
    (torch.ones(2, 3, dtype=torch.float16),),
    (torch.ones(2, 3),),
]
