"""Training across processes and machines: torchrun's environment, DistributedDataParallel, rank 0's say.

Under ``torchrun`` (which sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` and the rendezvous address),
:func:`up_gnnplan.training.loop.train` joins the process group (NCCL on GPUs, gloo on CPUs) and
wraps the model in DistributedDataParallel; run alone, it is one process and nothing changes.

Every process draws the same global batches (the same seed drives the same sampler) and trains on
its share, a contiguous part of each. DDP averages the processes' gradients, so each share's loss
is weighted by ``world size * share / batch``: the average is then the gradient of the loss over
the whole global batch, as in one process. That is exact for losses that are a mean over states
(V* regression, the cross-entropy of ``logits`` heads); a ``q`` head's loss, a mean over the
batch's actions, is then weighted by states instead.

Rank 0 alone evaluates the model after each epoch, and its decisions are everyone's: the
validation score (which picks the best epoch and, with patience, the end) and the time budget are
broadcast, so that all processes take the same number of steps and stop together.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import numpy as np


def process_rank() -> int:
    """Return this process's rank under torchrun (0 when run alone); reads the environment only."""
    return int(os.environ.get("RANK", "0"))


@dataclass
class ProcessGroup:
    """The training processes this one belongs to (one, unless started by torchrun)."""

    rank: int = 0  # this process among all of them
    world_size: int = 1  # processes in all, on all machines
    local_rank: int = 0  # this process among those of its machine (its GPU)
    backend: str | None = None  # nccl | gloo once joined; None for one process
    device: object = None  # this process's torch.device once joined

    @classmethod
    def from_environment(cls) -> "ProcessGroup":
        """Return the group torchrun describes in the environment, or a group of one."""
        return cls(rank=process_rank(), world_size=int(os.environ.get("WORLD_SIZE", "1")),
                   local_rank=int(os.environ.get("LOCAL_RANK", "0")))

    @property
    def is_main(self) -> bool:
        """Return whether this is rank 0, the one that evaluates, reports and writes."""
        return self.rank == 0

    @contextlib.contextmanager
    def joined(self, device):
        """Join the torch.distributed process group on ``device`` for the body; leave it after if we joined it."""
        import torch
        import torch.distributed as dist

        self.device = device
        if self.world_size == 1:
            yield self
            return
        self.backend = "nccl" if device.type == "cuda" else "gloo"
        joined_here = not dist.is_initialized()
        if joined_here:
            if device.type == "cuda":
                torch.cuda.set_device(device)
            dist.init_process_group(self.backend)
        else:
            self.backend = dist.get_backend()
        yield self  # on an error, leave the group as it is: destroying it while others wait in a collective hangs
        if joined_here:
            # Every process reaches this point before any leaves: a process that destroyed its
            # group while gloo still completed another's last collective was seen to abort
            # ("terminate called without an active exception", 1 run in 5 under load).
            dist.barrier()
            dist.destroy_process_group()

    def replicate(self, model):
        """Return ``model`` wrapped for gradient averaging across the group (itself for one process)."""
        if self.world_size == 1:
            return model
        # Relations or action schemas absent from a process's share leave parameters without gradient.
        return _replica_class()(model, device_ids=[self.device.index] if self.device.type == "cuda" else None,
                                find_unused_parameters=True)

    def share(self, batch: np.ndarray) -> tuple[np.ndarray, float]:
        """Return this process's part of a global batch and the weight of its loss (see the module docstring)."""
        if self.world_size == 1:
            return batch, 1.0
        part = np.array_split(batch, self.world_size)[self.rank]
        return part, self.world_size * len(part) / len(batch)

    def from_main(self, values: tuple) -> tuple:
        """Return rank 0's ``values`` (numbers) on every process."""
        if self.world_size == 1:
            return values
        import torch
        import torch.distributed as dist

        tensor = torch.tensor([float(v) for v in values], dtype=torch.float64, device=self.device)
        dist.broadcast(tensor, src=0)
        return tuple(tensor.tolist())

    def mean(self, value: float) -> float:
        """Return the mean of ``value`` over the group's processes."""
        if self.world_size == 1:
            return value
        import torch
        import torch.distributed as dist

        tensor = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        dist.all_reduce(tensor)
        return tensor.item() / self.world_size


def _replica_class():
    """Return DistributedDataParallel answering the wrapped model's attributes (``outputs``, ``actions``,
    which the objectives read); made on first use so that importing this module does not import torch."""
    from torch.nn.parallel import DistributedDataParallel

    class Replica(DistributedDataParallel):
        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                if name == "module":  # not set yet, inside DDP's constructor
                    raise
                return getattr(self.module, name)

    return Replica
