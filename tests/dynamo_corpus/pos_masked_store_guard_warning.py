"""transformers 4.49.0 models/visual_bert/modeling_visual_bert.py:146: set zero counts to one and
warn, only when there are zeros."""
import logging

import torch

logger = logging.getLogger("corpus.visual_bert")


@torch.compile(backend="eager")
def normalise(embeddings, counts):
    counts = counts.sum(2)
    if (counts == 0).sum() != 0:  # dynamo: break
        counts[counts == 0] = 1  # Avoid divide by zero error
        logger.warning(  # dynamo: break
            "Found 0 values in `counts`. Setting them to 1 to avoid divide-by-zero"
            " error."
        )
    return embeddings / counts.unsqueeze(-1)


ENTRY = normalise
INPUTS = [
    (torch.ones(2, 3, 4), torch.tensor([[[1.0], [0.0], [2.0]], [[1.0], [1.0], [1.0]]])),
    (torch.ones(2, 3, 4), torch.ones(2, 3, 1)),
]
