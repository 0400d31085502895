"""diffusers 0.42.1 models/autoencoders/autoencoder_kl_wan.py:283-290: a cache entry compared with
the string "Rep" is a Python bool, whatever the entry holds."""
import torch


class CausalConv(torch.nn.Module):
    def forward(self, x, feat_cache=None, feat_idx=(0,)):
        idx = feat_idx[0]
        if feat_cache[idx] is not None and feat_cache[idx] != "Rep":
            x = torch.cat([feat_cache[idx][:, -1:], x], 1)
        if feat_cache[idx] is not None and feat_cache[idx] == "Rep":
            x = x * 2
        feat_cache[idx] = x.clone()
        return x.sum(1)


ENTRY = torch.compile(CausalConv(), backend="eager")
INPUTS = [
    (torch.ones(2, 3), [torch.zeros(2, 3)]),
]
