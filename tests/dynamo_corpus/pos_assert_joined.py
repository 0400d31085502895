"""transformers 5.23.0 `models/ibert/quant_modules.py:173` (activation range in training): an `assert`
that tests a tensor before the last operand of its `and` breaks (Dynamo keeps only the assert's last
jump in the graph); a Python operand first, or one tensor check, does not."""
import torch


class QuantAct(torch.nn.Module):
    def forward(self, x_act, check: bool = True):
        x_min = x_act.data.min()
        x_max = x_act.data.max()
        assert x_max.isnan().sum() == 0 and x_min.isnan().sum() == 0, (  # dynamo: break
            "NaN detected when computing min/max of the activation"
        )
        assert check and x_max.isnan().sum() == 0
        assert (x_max >= x_min).all(), "range"
        assert x_max.sum() > -1e9 or x_min.sum() > -1e9, "sums"  # dynamo: break
        return x_min + x_max


ENTRY = torch.compile(QuantAct(), backend="eager")
INPUTS = [(torch.arange(6.0).reshape(2, 3),), (torch.full((2, 3), -0.5),)]
