from .base import PreTrained


class Model(PreTrained):
    def forward(self, input_ids, attention_mask=None):
        input_ids = self.warn_if_padding(input_ids, attention_mask)
        return input_ids * 2
