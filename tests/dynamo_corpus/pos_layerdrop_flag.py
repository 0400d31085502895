"""transformers 4.49.0 models/bart/modeling_bart.py:1099 (encoder LayerDrop): a `to_drop` flag set
under the random test, then `(None, None)` placeholders for a dropped layer."""
import torch


class Encoder(torch.nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(n))
        self.layerdrop = 0.5

    def forward(self, hidden_states, output_attentions: bool = False):
        all_attentions = () if output_attentions else None
        for idx, encoder_layer in enumerate(self.layers):
            to_drop = False
            if self.training:
                dropout_probability = torch.rand([])
                if dropout_probability < self.layerdrop:  # dynamo: break
                    to_drop = True

            if to_drop:
                layer_outputs = (None, None)
            else:
                layer_outputs = (encoder_layer(hidden_states).relu(), hidden_states.mean())
                hidden_states = layer_outputs[0]
        return hidden_states


ENTRY = torch.compile(Encoder().train(), backend="eager")
INPUTS = [(torch.ones(2, 3),), (torch.full((2, 3), -0.5),), (torch.ones(2, 3),), (torch.ones(2, 3) * 2,)]
