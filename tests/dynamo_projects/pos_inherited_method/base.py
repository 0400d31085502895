"""A check every model inherits from a base class in another module: modelled on transformers
4.49.0 modeling_utils.py:5140 (`PreTrainedModel.warn_if_padding_and_no_attention_mask`, called as
`self.warn_if_padding_and_no_attention_mask(...)` from e.g. modeling_albert.py's forward)."""
import torch


class PreTrained(torch.nn.Module):
    def warn_if_padding(self, input_ids, attention_mask):
        if attention_mask is None and (input_ids == 0).any():  # dynamo: break
            print("padding without an attention mask")  # dynamo: break
        return input_ids.clamp(min=0)
