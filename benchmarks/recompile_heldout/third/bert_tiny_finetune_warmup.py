"""Fine-tune a tiny randomly initialised BERT classifier (compiled) on padded random token batches with linear LR warmup/decay."""
import torch
from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup

torch.manual_seed(0)
SEQ, BATCH, STEPS = 32, 8, 6
config = BertConfig(vocab_size=500, hidden_size=64, num_hidden_layers=1, num_attention_heads=4,
                    intermediate_size=128, max_position_embeddings=64, num_labels=3,
                    attn_implementation="eager")
model = BertForSequenceClassification(config)
model.train()
compiled = torch.compile(model, backend="eager")
opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=2, num_training_steps=STEPS)


def make_batch():
    lengths = torch.randint(8, SEQ, (BATCH,))
    ids = torch.randint(1, 500, (BATCH, SEQ))
    mask = (torch.arange(SEQ)[None, :] < lengths[:, None]).long()
    return ids * mask, mask, torch.randint(0, 3, (BATCH,))


for step in range(STEPS):
    input_ids, attention_mask, labels = make_batch()
    out = compiled(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad()
    if step % 2 == 0:
        print(f"step {step} lr {sched.get_last_lr()[0]:.2e} loss {out.loss.item():.4f}")
