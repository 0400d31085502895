"""transformers 4.49.0 models/switch_transformers/modeling_switch_transformers.py:302-311 (the
experts' routing: `.tolist()` on the third line of a call, and each expert's tokens read through a
slice of a boolean mask) and models/nllb_moe/modeling_nllb_moe.py:451-456 (a mask column used in
an index tuple): Dynamo reports a method call at the method's line, and a slice of a mask is a mask."""
import torch


class SparseExperts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])

    def forward(self, hidden_states, router_mask, router_probs):
        router_mask = router_mask.bool()
        token_indices = router_mask[:, 0]
        weights = router_probs[token_indices, 0]  # dynamo: break
        next_states = hidden_states.clone()
        idx_mask = router_mask.sum(dim=0)
        idx_mask = torch.nonzero(idx_mask, as_tuple=True)[  # dynamo: break
            0
        ].tolist()  # dynamo: break
        for idx in idx_mask:
            next_states[router_mask[:, idx]] = self.experts[idx](
                hidden_states[router_mask[:, idx]]  # dynamo: break
            )
        return next_states, weights


ENTRY = torch.compile(SparseExperts(), backend="eager")
INPUTS = [(torch.ones(5, 4), torch.tensor([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0]]), torch.rand(5, 3))]
