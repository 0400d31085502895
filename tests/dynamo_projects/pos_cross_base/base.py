"""A layer base class from another module, as transformers 5.x's `GradientCheckpointingLayer`
(`modeling_layers.py`, the base of nearly every encoder/decoder layer) or diffusers' `ModelMixin`:
a subclass is an nn.Module only through this file."""
import torch


class Layer(torch.nn.Module):
    def check_finite(self, h):
        if not torch.isfinite(h).all():  # dynamo: break
            h = torch.nan_to_num(h)
        return h
