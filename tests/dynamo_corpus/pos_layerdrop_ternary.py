"""transformers 4.49.0 models/wav2vec2/modeling_wav2vec2.py:1049: `skip_the_layer = True if
self.training and (p < layerdrop) else False`, the layer run under `not skip_the_layer or synced_gpus`."""
import torch


class Encoder(torch.nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(n))
        self.layerdrop = 0.5

    def forward(self, hidden_states, synced_gpus: bool = False):
        for layer in self.layers:
            dropout_probability = torch.rand([])
            skip_the_layer = True if self.training and (dropout_probability < self.layerdrop) else False  # dynamo: break
            if not skip_the_layer or synced_gpus:
                layer_outputs = (layer(hidden_states).sin(),)
                hidden_states = layer_outputs[0]
            if skip_the_layer:
                layer_outputs = (None,)
        return hidden_states


ENTRY = torch.compile(Encoder().train(), backend="eager")
INPUTS = [(torch.ones(2, 3), False), (torch.ones(2, 3), True), (torch.full((2, 3), 0.3), False), (torch.ones(2, 3), False)]
