"""transformers 4.49.0 models/qwen2_audio/modeling_qwen2_audio.py:1195-1198: a branch that warns
(`warning_once`) and computes; the warning must appear only when the branch would have run."""
import torch
from transformers.utils import logging

logger = logging.get_logger(__name__)


@torch.compile(backend="eager")
def merge(features, ids):
    if (ids == 7).any():  # dynamo: break
        logger.warning_once("Expanding inputs for audio tokens in the legacy path.")  # dynamo: break
        features = features * 2
    return features + ids


ENTRY = merge
INPUTS = [
    (torch.ones(3), torch.tensor([1.0, 7.0, 2.0])),
    (torch.ones(3), torch.tensor([1.0, 3.0, 2.0])),
]
