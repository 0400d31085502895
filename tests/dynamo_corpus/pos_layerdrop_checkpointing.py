"""transformers 4.49.0 models/bart/modeling_bart.py:1096 (encoder LayerDrop without collected
attentions): a `to_drop` flag, `(None, None)` placeholders, and the layer run through a Python
`if` on gradient checkpointing (with `layer-skip = "cond"`, graphmend writes the `torch.cond` form)."""
import functools

import torch


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x, scale):
        return self.lin(x).tanh() * scale, x.mean()


class Encoder(torch.nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(n))
        self.layerdrop = 0.5
        self.gradient_checkpointing = False
        self._gradient_checkpointing_func = functools.partial(torch.utils.checkpoint.checkpoint, use_reentrant=False)

    def forward(self, hidden_states, scale: float = 2.0):
        for idx, encoder_layer in enumerate(self.layers):
            to_drop = False
            if self.training:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:  # dynamo: break
                    to_drop = True

            if to_drop:
                layer_outputs = (None, None)
            else:
                if self.gradient_checkpointing and self.training:
                    layer_outputs = self._gradient_checkpointing_func(encoder_layer.__call__, hidden_states, scale)
                else:
                    layer_outputs = encoder_layer(hidden_states, scale)

                hidden_states = layer_outputs[0]
        return hidden_states


ENTRY = torch.compile(Encoder().train(), backend="eager")
INPUTS = [(torch.ones(2, 3),), (torch.full((2, 3), 0.5),), (torch.ones(2, 3),), (-torch.ones(2, 3),)]
