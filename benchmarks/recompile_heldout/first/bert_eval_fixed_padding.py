"""Batched evaluation of a tiny BERT sentence classifier on inputs padded to a fixed length."""
import torch
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=3)
model = BertForSequenceClassification(config).eval()
model = torch.compile(model, backend="eager")
MAX_LEN = 20


def encode(batch_lengths):
    ids = torch.zeros(len(batch_lengths), MAX_LEN, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(batch_lengths):
        ids[i, :n] = torch.randint(1, 100, (n,))
        mask[i, :n] = 1
    return ids, mask


correct = 0
for batch in range(6):
    ids, mask = encode(torch.randint(3, MAX_LEN, (4,)).tolist())
    labels = torch.randint(0, 3, (4,))
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits
    correct += (logits.argmax(-1) == labels).sum().item()
