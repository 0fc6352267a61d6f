"""Training (torch): supervised V* regression with early stopping and self-describing checkpoints."""

from up_gnnplan.training.config import TrainConfig

__all__ = ["TrainConfig"]
