"""transformers 5.23.0 models/wav2vec2/modeling_wav2vec2.py:688 (encoder LayerDrop): `skip_the_layer =
False`, a bool tensor only in training, then `if not skip_the_layer or synced_gpus:` runs the layer
(a Python bool in eval, a tensor in training). A second test of the flag after it (speecht5, nllb_moe)
is in tests/fixtures/GM101/fix_layerdrop_flag_on_some_paths: Dynamo, which abandons the frame at
the first break in a loop, never reaches it."""
import torch


class Encoder(torch.nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(n))
        self.layerdrop = 0.5

    def forward(self, hidden_states, synced_gpus: bool = False):
        layer_outputs = None
        for encoder_layer in self.layers:
            skip_the_layer = False
            if self.training and self.layerdrop > 0.0:
                dropout_probability = torch.rand([])
                skip_the_layer = dropout_probability < self.layerdrop

            if not skip_the_layer or synced_gpus:  # dynamo: break
                layer_outputs = (encoder_layer(hidden_states).relu(), hidden_states.mean())
                hidden_states = layer_outputs[0]
        return hidden_states


ENTRY = torch.compile(Encoder().train(), backend="eager")
INPUTS = [(torch.ones(2, 3),), (torch.full((2, 3), -0.5),), (torch.ones(2, 3),), (torch.ones(2, 3) * 2,)]
