"""transformers 4.49.0 models/llama/modeling_llama.py:95 and 108-111 with modeling_rope_utils.py:31-66
and 351-358 in one file: the growth calls `self.rope_init_fn`, bound in `__init__` to a lookup in a
module-level table of initialisers; each checks its arguments (a `raise` that depends on them alone)
and reads an optional config field with `getattr(config, name, default)`."""
import torch


class Config:
    rope_theta = 10000.0
    head_dim = 4


def default_parameters(config, device=None, seq_len=None, **rope_kwargs):
    if config is not None and len(rope_kwargs) > 0:
        raise ValueError(f"`rope_kwargs` and `config` are mutually exclusive, got {rope_kwargs}")
    dim = getattr(config, "head_dim", 4)
    return 1.0 / (config.rope_theta ** (torch.arange(0, dim, 2).float().to(device) / dim)), 1.0


def scaled_parameters(config, device=None, seq_len=None, **rope_kwargs):
    if config is not None and len(rope_kwargs) > 0:
        raise ValueError(f"`rope_kwargs` and `config` are mutually exclusive, got {rope_kwargs}")
    inv_freq, _ = default_parameters(config, device)
    return inv_freq * (4 / seq_len), 0.5


INIT_FUNCTIONS = {"default": default_parameters, "dynamic": scaled_parameters}


class Rope(torch.nn.Module):
    def __init__(self, config, rope_type="dynamic"):
        super().__init__()
        self.config = config
        self.rope_init_fn = INIT_FUNCTIONS[rope_type]
        inv_freq, self.attention_scaling = self.rope_init_fn(config, None, seq_len=4)
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.max_seq_len_cached = 4

    def forward(self, position_ids):
        seq_len = torch.max(position_ids) + 1
        if seq_len > self.max_seq_len_cached:  # dynamo: break
            inv_freq, self.attention_scaling = self.rope_init_fn(self.config, position_ids.device, seq_len=seq_len)
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.max_seq_len_cached = seq_len
        return position_ids[:, None].float() * self.inv_freq[None, :] * self.attention_scaling


ENTRY = torch.compile(Rope(Config()), backend="eager")
INPUTS = [(torch.tensor([0, 1, 2]),), (torch.tensor([0, 1, 5]),), (torch.tensor([0, 1, 7]),), (torch.tensor([0, 1, 1]),)]
