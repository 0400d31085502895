"""transformers 4.49.0 models/bart/modeling_bart.py:585: clamp only when a half-precision
activation overflowed. The dtype test is Python's; the inf/nan test reads data (fp16 only)."""
import torch


class EncoderLayer(torch.nn.Module):
    def forward(self, hidden_states):
        hidden_states = hidden_states * 300.0
        if hidden_states.dtype == torch.float16 and (  # dynamo: break
            torch.isinf(hidden_states).any() or torch.isnan(hidden_states).any()
        ):
            clamp_value = torch.finfo(hidden_states.dtype).max - 1000
            hidden_states = torch.clamp(hidden_states, min=-clamp_value, max=clamp_value)
        return hidden_states + 1


ENTRY = torch.compile(EncoderLayer(), backend="eager")
INPUTS = [
    (torch.full((2, 3), 1000.0, dtype=torch.float16),),
    (torch.ones(2, 3, dtype=torch.float16),),
    (torch.full((2, 3), 1000.0),),
]
