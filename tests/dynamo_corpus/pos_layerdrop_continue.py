"""transformers 4.49.0 models/bart/modeling_bart.py:1360 (decoder LayerDrop): in training, skip a
layer with probability `layerdrop` by `continue`; the tuples collect per-layer outputs."""
import torch


class Decoder(torch.nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(n))
        self.layerdrop = 0.5

    def forward(self, hidden_states, output_hidden_states: bool = False):
        all_hidden_states = () if output_hidden_states else None
        for idx, decoder_layer in enumerate(self.layers):
            if output_hidden_states:
                all_hidden_states += (hidden_states,)
            if self.training:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:  # dynamo: break
                    continue
            layer_outputs = (decoder_layer(hidden_states).tanh(),)
            hidden_states = layer_outputs[0]
        return hidden_states


ENTRY = torch.compile(Decoder().train(), backend="eager")
INPUTS = [(torch.ones(2, 3),), (torch.full((2, 3), 0.5),), (torch.ones(2, 3),), (-torch.ones(2, 3),)]
