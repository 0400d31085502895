"""The base rotary embedding of another module, as Mistral's (`modeling_mistral.py`) is for
transformers 4.49.0's `modular_phi3.py`: its `__init__` registers the `inv_freq` buffer and keeps
`original_inv_freq` that the subclass's branches store and read."""
import torch


class RotaryBase(torch.nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.original_inv_freq = self.inv_freq
        self.long_inv_freq = inv_freq / 4
