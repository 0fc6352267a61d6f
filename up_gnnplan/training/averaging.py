"""Weight averaging (``--ema``): an exponential moving average of the weights, evaluated and kept."""

from __future__ import annotations

import copy

from up_gnnplan.errors import GnnplanError


class WeightAverage:
    """An exponential moving average of a model's weights (``--ema DECAY``), updated after every step.

    The decay is warmed up as ``min(decay, (1 + n) / (10 + n))`` after ``n`` steps, so that the
    first epochs' average is not held back by the initial weights. Buffers (none in the package's
    models but kept for safety) are copied, not averaged.
    """

    def __init__(self, model, decay: float):
        self.decay, self.steps = decay, 0
        self.averaged = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.floating = {k for k, v in self.averaged.items() if v.is_floating_point()}

    def update(self, model) -> None:
        import torch

        self.steps += 1
        decay = min(self.decay, (1 + self.steps) / (10 + self.steps))
        with torch.no_grad():
            for name, value in model.state_dict().items():
                if name in self.floating:
                    self.averaged[name].mul_(decay).add_(value.detach(), alpha=1.0 - decay)
                else:
                    self.averaged[name].copy_(value)

    def swap_in(self, model) -> dict:
        """Load the average into ``model``; return the weights it had (to load back)."""
        live = copy.deepcopy(model.state_dict())
        model.load_state_dict(self.averaged)
        return live

    def tensors(self) -> dict:
        return self.averaged

    def restore(self, tensors: dict, steps: int) -> None:
        found = {k[len("average/"):]: v for k, v in tensors.items() if k.startswith("average/")}
        if set(found) != set(self.averaged):
            raise GnnplanError("the training state holds no weight average for this model (--ema): remove the file to "
                               "start anew")
        for name, value in found.items():
            self.averaged[name].copy_(value)
        self.steps = steps
