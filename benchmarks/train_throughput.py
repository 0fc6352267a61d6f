"""Training and evaluation throughput: our R-GNN against the reference R-GNN (``pymimir-rgnn``).

In one run, on the same machine and the same Blocksworld states, this measures states per
second of

- training: batch preparation from states, forward pass, L1 loss, backward pass and Adam step
  (and ``loss.item()``, as our training loop does), at each ``--batch-sizes`` value;
- evaluation: batch preparation from states and forward pass under ``torch.no_grad()`` (model
  in eval mode), at each ``--eval-batch-sizes`` value.

Sides:

- ours: ``TrainConfig(architecture="rgnn", hidden=32, layers=30)`` built with
  ``up_gnnplan.training.checkpoint.build(config, dataset.signature)``; batches are
  ``encoding.encode(state_inputs(dataset, batch))`` turned into tensors, exactly as
  ``up_gnnplan.training.loop`` does; Adam with the config's learning rate;
- reference: ``pymimir_rgnn.RelationalGraphNeuralNetwork`` (PyPI ``pymimir-rgnn``) with
  embedding size 32, 30 layers, ``SmoothMaximumAggregation``, ``PredicateMLPMessages``,
  ``MLPUpdates``, input ``(StateEncoder(), GoalEncoder())`` and output
  ``ObjectsScalarDecoder`` (sum readout, one value per state); its other hyperparameters keep
  the package defaults (layer normalisation and residual updates on, no global readout); its
  batch preparation is the package's own encoding of ``[(pymimir.State, goal), ...]``, done
  inside its forward pass; Adam with lr 2e-4.

The states: the dataset is built with ``build_dataset(..., BuildOptions(method="expand"))``
(every reachable state of each problem). The reference gets pymimir ``State`` objects of the
same problems, from its own ``pymimir.Domain`` / ``pymimir.Problem`` and
``pymimir.StateSpaceSampler.new(problem, symmetry_pruning=False)``; every dataset state is
mapped to the pymimir state with the same set of fluent atoms (by predicate and object names)
and the script stops if that map is not a bijection per problem or if the goals differ. Both
sides then see the same sequence of batches (the same dataset indices, drawn uniformly without
replacement within a batch by a seeded generator) and the same V* targets.

Timing: per cell (mode, batch size) each side first runs 2 warm-up steps (not timed); then
the sides alternate in rounds of about ``--seconds / 5`` seconds each (the side going first
alternating too), so both share the machine's noise, until each side has at least
``--seconds`` of timed steps. Each step is timed with ``time.perf_counter``; the rate is
states / summed step time. The load average is printed at start and end.

Run single-threaded (two torch threads are far slower on a shared 2-core machine)::

    OMP_NUM_THREADS=1 python -m benchmarks.train_throughput --seconds 5 --markdown /tmp/throughput.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from .common import SHARED, fmt, load_average

BLOCKS = SHARED / "ipc-classic" / "blocks"
PROBLEMS = [f"probBLOCKS-{n}-{i}.pddl" for n in (4, 5, 6) for i in (0, 1, 2)]
FLUENT = ("on", "ontable", "clear", "handempty", "holding")
REFERENCE_LR = 2e-4


# -- the states --------------------------------------------------------------------------------


def build_states(domain: Path, problems: list[Path]):
    """Return (dataset, reference states aligned with dataset indices, goals per problem)."""
    import pymimir as mm

    from up_gnnplan.datasets.build import BuildOptions, build_dataset

    dataset = build_dataset(domain, problems, BuildOptions(method="expand"))
    mm_domain = mm.Domain(domain)
    reference_state = [None] * len(dataset)
    goals = []
    for p, path in enumerate(problems):
        mm_problem = mm.Problem(mm_domain, path)
        space = mm.StateSpaceSampler.new(mm_problem, symmetry_pruning=False)
        if space is None:
            raise SystemExit(f"{path}: pymimir could not expand the state space")
        by_atoms = {}
        for state in space.get_states():
            key = frozenset(
                f"{a.get_predicate().get_name()}({','.join(t.get_name() for t in a.get_terms())})".lower()
                for a in state.get_atoms()
                if a.get_predicate().get_name().lower() in FLUENT
            )
            by_atoms[key] = state
        mine = np.flatnonzero(dataset.state_problem == p)
        if len(mine) != len(by_atoms):
            raise SystemExit(f"{path.name}: {len(mine)} dataset states but {len(by_atoms)} pymimir states")
        record = dataset.problems[p]
        for i in mine.tolist():
            key = frozenset(s.lower() for s in dataset.fluent_atoms(i).as_strings(dataset.signature, record.object_names))
            if key not in by_atoms:
                raise SystemExit(f"{path.name}: dataset state {i} has no pymimir state with the same atoms")
            reference_state[i] = by_atoms.pop(key)
        goal = mm_problem.get_goal_condition()
        theirs = sorted(
            f"{lit.get_atom().get_predicate().get_name()}({','.join(t.get_name() for t in lit.get_atom().get_terms())})".lower()
            for lit in goal
        )
        ours = sorted(s.lower() for s in record.goal.as_strings(dataset.signature, record.object_names))
        if theirs != ours:
            raise SystemExit(f"{path.name}: goals differ: ours {ours}, reference {theirs}")
        goals.append(goal)
    return dataset, reference_state, goals


# -- the two sides -----------------------------------------------------------------------------


class Side:
    """One side of the comparison: the same training and evaluation steps over its own ``predict``."""

    def train_step(self, batch, target):
        self.model.train()
        loss = self.loss_fn(self.predict(batch), target)
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
        return loss.item()

    def evaluate(self, batch):
        return self.predict(batch).numpy()


class Ours(Side):
    name = "ours"

    def __init__(self, dataset):
        import torch

        from up_gnnplan.training.checkpoint import build
        from up_gnnplan.training.config import TrainConfig
        from up_gnnplan.training.data import state_inputs
        from up_gnnplan.training.objectives import state_tensors

        self.dataset, self.state_inputs, self.tensors = dataset, state_inputs, state_tensors
        self.config = TrainConfig(architecture="rgnn", hidden=32, layers=30)
        self.encoding, self.model = build(self.config, dataset.signature)
        self.optimiser = torch.optim.Adam(self.model.parameters(), lr=self.config.lr)
        self.loss_fn = torch.nn.L1Loss()

    def predict(self, batch):
        return self.model(*self.tensors(self.encoding, self.state_inputs(self.dataset, batch)))


class Reference(Side):
    name = "reference"

    def __init__(self, domain: Path, states, goals, state_problem):
        import pymimir as mm
        import pymimir_rgnn as rgnn
        import torch

        hparams = rgnn.HyperparameterConfig(domain=mm.Domain(domain), embedding_size=32, num_layers=30)
        input_spec = (rgnn.StateEncoder(), rgnn.GoalEncoder())
        modules = rgnn.ModuleConfig(
            aggregation_function=rgnn.SmoothMaximumAggregation(),
            message_function=rgnn.PredicateMLPMessages(hparams, input_spec),
            update_function=rgnn.MLPUpdates(hparams),
        )
        self.model = rgnn.RelationalGraphNeuralNetwork(hparams, modules, input_spec, [("value", rgnn.ObjectsScalarDecoder(hparams))])
        self.hparams = hparams
        self.optimiser = torch.optim.Adam(self.model.parameters(), lr=REFERENCE_LR)
        self.loss_fn = torch.nn.L1Loss()
        self.states, self.goals, self.state_problem = states, goals, state_problem

    def _inputs(self, batch):
        return [(self.states[i], self.goals[self.state_problem[i]]) for i in batch]

    def predict(self, batch):
        return self.model(self._inputs(batch)).readout("value")


# -- timing ------------------------------------------------------------------------------------


def measure_cell(sides, mode: str, batch_size: int, dataset, seconds: float, seed: int) -> dict:
    """Time ``mode`` (train | eval) at ``batch_size`` for every side; return per-side stats."""
    import torch

    rng = np.random.default_rng(seed)
    n = len(dataset)
    cache: list[np.ndarray] = []

    def batch_at(k: int) -> np.ndarray:
        while len(cache) <= k:
            cache.append(rng.choice(n, size=batch_size, replace=False))
        return cache[k]

    values = dataset.value.astype(np.float32)

    def step(side, k: int) -> float:
        batch = batch_at(k)
        start = time.perf_counter()
        if mode == "train":
            side.train_step(batch, torch.from_numpy(values[batch]))
        else:
            side.evaluate(batch)
        return time.perf_counter() - start

    stats = {side.name: {"steps": 0, "seconds": 0.0, "next": 0, "rounds": []} for side in sides}
    for side in sides:
        side.model.train(mode == "train")
    context = torch.enable_grad() if mode == "train" else torch.no_grad()
    with context:
        for side in sides:  # warm-up, not timed
            for _ in range(2):
                step(side, stats[side.name]["next"])
                stats[side.name]["next"] += 1
        chunk = max(seconds / 5, 0.2)
        rounds = 0
        while any(s["seconds"] < seconds for s in stats.values()):
            order = sides if rounds % 2 == 0 else sides[::-1]
            for side in order:
                s = stats[side.name]
                if s["seconds"] >= seconds:
                    continue
                spent, steps = 0.0, 0
                while spent < chunk:
                    # Both sides draw the same batch sequence: step k of either side uses batch k.
                    took = step(side, s["next"])
                    s["next"] += 1
                    s["steps"] += 1
                    s["seconds"] += took
                    spent += took
                    steps += 1
                s["rounds"].append((rounds, steps * batch_size / spent))
            rounds += 1
    for s in stats.values():
        s["rate"] = s["steps"] * batch_size / s["seconds"]
    if len(sides) == 2:
        # Ratio of the two sides' rates within each round both ran: the spread shows the noise.
        a, b = (dict(stats[side.name]["rounds"]) for side in sides)
        stats["round_ratios"] = [a[r] / b[r] for r in sorted(set(a) & set(b))]
    return stats


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds per side and cell (default 5)")
    parser.add_argument("--batch-sizes", default="16,32,64", help="training batch sizes (default 16,32,64)")
    parser.add_argument("--eval-batch-sizes", default="1,8,64", help="evaluation batch sizes (default 1,8,64)")
    parser.add_argument("--domain", type=Path, default=BLOCKS / "domain.pddl")
    parser.add_argument("--problems", nargs="+", type=Path, default=[BLOCKS / p for p in PROBLEMS])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-reference", action="store_true", help="measure ours only")
    parser.add_argument("--markdown", type=Path, help="also write the table (and notes) to this file")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    warnings.filterwarnings("ignore", message="index_reduce\\(\\) is in beta")
    command = ("OMP_NUM_THREADS=" + os.environ.get("OMP_NUM_THREADS", "(unset)") + " python -m benchmarks.train_throughput "
               + shlex.join(sys.argv[1:] if argv is None else argv))
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = load_average()
    print(f"start {started:%Y-%m-%d %H:%M:%S} UTC, load average {load_start}")

    t0 = time.perf_counter()
    dataset, reference_states, goals = build_states(args.domain, args.problems)
    print(f"{len(dataset)} states of {len(args.problems)} problems, dataset and pymimir states matched "
          f"one to one ({time.perf_counter() - t0:.1f} s)")

    sides = [Ours(dataset)]
    reference_error = None
    if not args.no_reference:
        try:
            import pymimir_rgnn  # noqa: F401

            sides.append(Reference(args.domain, reference_states, goals, dataset.state_problem))
        except Exception as error:  # report why, still measure ours
            reference_error = f"{error.__class__.__name__}: {error}"
            print(f"reference not measured: {reference_error}")
    for side in sides:
        print(f"{side.name}: {sum(p.numel() for p in side.model.parameters()):,} parameters")

    rows = []
    cells = [("train", int(b)) for b in args.batch_sizes.split(",")] + [("eval", int(b)) for b in args.eval_batch_sizes.split(",")]
    for c, (mode, batch_size) in enumerate(cells):
        stats = measure_cell(sides, mode, batch_size, dataset, args.seconds, args.seed + c)
        ours = stats["ours"]
        ref = stats.get("reference")
        ratio = ours["rate"] / ref["rate"] if ref else None
        spread = stats.get("round_ratios") or []
        rows.append((mode, batch_size, ours, ref, ratio, spread))
        line = f"{mode:5s} batch {batch_size:3d}: ours {fmt(ours['rate'])} states/s ({ours['steps']} steps)"
        if ref:
            line += (f", reference {fmt(ref['rate'])} states/s ({ref['steps']} steps), ours/reference {ratio:.2f}x"
                     f" (per round {min(spread):.2f}-{max(spread):.2f}x over {len(spread)} rounds)")
        print(line, flush=True)
    load_end = load_average()
    print(f"end {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC, load average {load_end}")

    header = ("| mode | batch | ours states/s | reference states/s | ours/reference | per-round ratio (min–max, rounds) "
              "| ours steps | reference steps |")
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for mode, batch_size, ours, ref, ratio, spread in rows:
        mode_name = "train (fwd+bwd+Adam)" if mode == "train" else "eval (no grad)"
        lines.append(
            f"| {mode_name} | {batch_size} | {fmt(ours['rate'])} | {fmt(ref['rate']) if ref else 'n/a'} | "
            f"{f'{ratio:.2f}x' if ratio else 'n/a'} | "
            f"{f'{min(spread):.2f}–{max(spread):.2f}x ({len(spread)})' if spread else 'n/a'} | "
            f"{ours['steps']} | {ref['steps'] if ref else 'n/a'} |"
        )
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        notes = [
            f"Command: `{command}`",
            f"Started {started:%Y-%m-%d %H:%M} UTC; {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}; "
            f"load average (1/5/15 min) {load_start} at start, {load_end} at end.",
            f"{len(dataset)} states of {len(args.problems)} problems; parameters: "
            + ", ".join(f"{s.name} {sum(p.numel() for p in s.model.parameters()):,}" for s in sides) + ".",
        ]
        if reference_error:
            notes.append(f"Reference not measured: {reference_error}")
        args.markdown.write_text("\n\n".join(notes) + "\n\n" + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
