"""transformers 4.49.0 models/wav2vec2_bert/modeling_wav2vec2_bert.py:818: the layer runs under
`not self.training or (layerdrop_prob > self.layerdrop)`."""
import torch


class Adapter(torch.nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(3, 3) for _ in range(n))
        self.layerdrop = 0.5

    def forward(self, hidden_states):
        for layer in self.layers:
            layerdrop_prob = torch.rand([])
            if not self.training or (layerdrop_prob > self.layerdrop):  # dynamo: break
                hidden_states = layer(hidden_states).cos()
        return hidden_states


ENTRY = torch.compile(Adapter().train(), backend="eager")
INPUTS = [(torch.ones(2, 3),), (torch.full((2, 3), -0.5),), (torch.ones(2, 3),)]
