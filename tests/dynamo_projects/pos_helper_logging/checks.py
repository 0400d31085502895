"""A padding check in a helper module, logging through the module's own logger: modelled on
transformers 4.49.0 modeling_flash_attention_utils.py:214 (`fa_peft_integration_check` logs with
`logger.warning_once`, called from every model's flash-attention forward in another module)."""
import logging

logger = logging.getLogger(__name__)


def check_padding(input_ids):
    if (input_ids == 0).any():  # dynamo: break
        logger.warning("input contains padding tokens")  # dynamo: break
    return input_ids


def validate(input_ids):
    return check_padding(input_ids)
