"""The judge's greedy policy in onnxruntime, as the engine runs a shipped model, instead of in torch.

The judge walks one state a step: one forward pass of a batch of one, where torch's per-operation
cost dominates. On ``gnnplan learn``'s Blocksworld judge problems (29 blocks, a model of 30 layers,
one thread), a step took 17-18 ms in torch and 5 ms in onnxruntime, and the judge was two thirds of
every epoch: 19.5 s of 28, beside 8.3 s of optimisation steps (``benchmarks/results/learn_eval/
judge-runtime/``). The run's network is exported once before training (``gnnplan learn``'s graph
file); each judge puts the epoch's weights into it (:func:`~up_gnnplan.exporters.refill.fill_weights`,
a fraction of a second) and opens a session on it.

The first such file is compared with the torch model (:func:`~up_gnnplan.exporters.parity.check_parity`);
where it differs, or onnxruntime cannot open it, the judge stays in torch for the rest of the run, and
:attr:`RuntimeJudge.note` says why.
"""

from __future__ import annotations

import os
from pathlib import Path

JUDGE_FILE = "judge.onnx"  # beside the graph file: the epoch's weights, rewritten before each judge


class RuntimeJudge:
    """Sessions of ``graph`` (an ONNX file exported from an untrained model of the run's config) holding the
    weights of the model being trained, one per judge."""

    def __init__(self, graph):
        import onnx

        self.graph = Path(graph)
        self.proto = onnx.load(str(self.graph))
        self.path = self.graph.with_name(JUDGE_FILE)
        self.checked = False
        self.note = ""  # why the judge runs in torch, where it does

    def runtime(self, model, encoding):
        """Return an :class:`~up_gnnplan.runtime.OnnxValueFunction` (CPU, one thread) of ``model``'s weights as they
        are now, or None where the judge runs in torch (:attr:`note`)."""
        if self.note:
            return None
        import onnx

        from up_gnnplan.exporters.parity import check_parity
        from up_gnnplan.exporters.refill import fill_weights
        from up_gnnplan.runtime import OnnxValueFunction
        from up_gnnplan.training.judging import on_cpu

        cpu_model = on_cpu(model)
        try:
            filled = fill_weights(self.proto, cpu_model, encoding)
            if not filled:
                raise ValueError(f"none of the model's weights fit the graph file {self.graph.name}")
            partial = self.path.with_name(f".{self.path.name}.partial")
            onnx.save(self.proto, str(partial))
            os.replace(partial, self.path)
            if not self.checked:
                check_parity(cpu_model, encoding, self.path)
                self.checked = True
            return OnnxValueFunction(self.path, threads=1, device="cpu")
        except Exception as error:  # a file that differs, or that onnxruntime cannot open: the judge stays in torch
            self.note = f"the judge runs in torch: {type(error).__name__}: {str(error).strip()[:200]}"
            return None
