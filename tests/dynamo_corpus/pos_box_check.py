"""torchvision 0.28.0 models/detection/fcos.py:604: a check that prepares its message from the data,
then `torch._assert(False, ...)` (GM304: an input check; valid boxes here)."""
import torch


@torch.compile(backend="eager")
def check_boxes(boxes: torch.Tensor, target_idx: int):
    degenerate_boxes = boxes[:, 2:] <= boxes[:, :2]
    if degenerate_boxes.any():  # dynamo: break
        # print the first degenerate box
        bb_idx = degenerate_boxes.any(dim=1).int().argmax()
        degen_bb: list[float] = boxes[bb_idx].tolist()
        torch._assert(False, f"All bounding boxes should have positive height and width. Found invalid box {degen_bb} for target at index {target_idx}.")
    return boxes * 2


ENTRY = check_boxes
INPUTS = [(torch.tensor([[0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 3.0, 2.0]]), 0)]
