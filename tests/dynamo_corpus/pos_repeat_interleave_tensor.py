"""transformers 5.x multimodal merges (e.g. `image_features.repeat_interleave(counts)`): repeats given
as a tensor make the output's length data-dependent; int repeats and `output_size=` do not break."""
import torch


class Merge(torch.nn.Module):
    def forward(self, features, ids):
        counts = (ids == 5).sum(-1)
        repeated = torch.repeat_interleave(features, counts, dim=0)  # dynamo: break
        twice = features.repeat_interleave(2, dim=0)
        sized = features.repeat_interleave(counts, dim=0, output_size=4)
        return repeated.sum(0) + twice.sum(0) + sized.sum(0)


ENTRY = torch.compile(Merge(), backend="eager")
INPUTS = [(torch.arange(6.0).reshape(3, 2), torch.tensor([[5, 0], [5, 5], [0, 5]]))]
