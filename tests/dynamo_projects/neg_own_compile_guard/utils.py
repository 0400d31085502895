"""A user's own guard in a helper module of their package, modelled on the `is_torchdynamo_compiling`
wrappers that libraries keep (transformers' `utils/import_utils.py`): the model file imports it."""
import torch


def is_compiling():
    """True while torch.compile traces."""
    return torch.compiler.is_compiling()
