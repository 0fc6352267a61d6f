"""The training loop: Adam on the objective of the model's heads, early stopping on validation error.

The objective (:mod:`up_gnnplan.training.objectives`) is the paper's L1 regression of V* for
value models, and the action head's cross-entropy or Q regression for action models. Training
runs on ``config.device`` (:mod:`up_gnnplan.training.devices`), and across processes when
started by torchrun (:mod:`up_gnnplan.training.distributed`).
"""

from __future__ import annotations

import copy
import platform
import sys
import time
from pathlib import Path

import numpy as np

from up_gnnplan.datasets.store import check_signature
from up_gnnplan.errors import GnnplanError
from up_gnnplan.grounding.encoding import is_grounding_signature
from up_gnnplan.training.budget import MIN_STATES, Budget
from up_gnnplan.training.checkpoint import build
from up_gnnplan.training.config import TrainConfig
from up_gnnplan.training.data import ValueCoveringSampler, curriculum_order, split
from up_gnnplan.training.devices import autocast, device_of, resolve_device
from up_gnnplan.training.distributed import ProcessGroup
from up_gnnplan.training.objectives import (  # noqa: F401  (predict re-exported)
    ActionObjective, ValueObjective, outputs, predict, to_tensors)
from up_gnnplan.training.ranking import RANK_LOSSES, RankingObjective, VariantRankingObjective


def seed_everything(seed: int, threads: int) -> None:
    """Make a run repeatable: torch and numpy seeds, deterministic kernels, fixed thread count."""
    import torch

    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)


def train(dataset, config: TrainConfig | None = None, on_epoch=None, validation=None, validation_tasks=None,
          state_path=None, snapshot_minutes=(), on_snapshot=None, started: float | None = None):
    """Train a value function on ``dataset``; return (model, encoding, record).

    With a ``validation`` dataset (same domain; typically larger instances labelled along
    optimal plans), all of ``dataset`` is trained on and the best epoch is chosen by the error
    on ``validation``: selecting on held-out *small* problems favours models that fit the
    training sizes, not models that generalise to larger ones.

    With ``validation_tasks`` (loaded problems of the same domain, larger than the training
    ones), the greedy policy of the model runs on each of them after every epoch (at most
    ``config.policy_steps`` steps, no time limit, so the choice does not depend on the machine),
    and the best epoch is the one that solves the most of them, then with the fewest steps in
    total, then with the lowest validation error. On Blocks a lower validation error on 8 blocks
    did not mean a better greedy policy on 10-17 blocks (benchmarks/RESULTS.md), while policy
    success on larger problems is what is wanted. The policy runs count against max_seconds: a
    judge pass that the deadline stops counts the problems it did not finish as unsolved, and the
    record says so.

    ``config.max_seconds`` counts from ``started`` (a ``time.perf_counter()`` value; default: now),
    and holds up to the return: the loop keeps back the time the final record needs (measured on
    the epochs' evaluations, :mod:`up_gnnplan.training.budget`) and the final record is taken on
    fewer states when the time left is short (``record["time_limit_note"]`` then says so).

    ``on_epoch(epoch, train_loss, val_mae, best_val_mae)`` is called after every epoch (the
    CLI shows it in a progress bar). The returned model has the weights of the best epoch and is
    on the CPU, whatever ``config.device`` it was trained on.

    With ``state_path``, the run's state is written there after every epoch and, when the file
    exists, the run continues from it (:mod:`up_gnnplan.training.resume`): the budget
    (``max_seconds``, ``max_epochs``, ``patience``) counts over all sessions of the run.
    ``on_snapshot(minutes, kind, model, encoding, record)`` is called at the end of the first epoch
    past each of ``snapshot_minutes`` (minutes of the run's wall-clock), once with ``kind`` "best":
    the best weights so far, the model a run stopped then would return, and once with "last": the
    weights of the epoch just finished (which a selection on a small validation set may pass
    over). The coverage-against-training-time curve is measured on these.

    Started by torchrun, every process calls this with the same arguments; they train together
    (:mod:`up_gnnplan.training.distributed`), rank 0 alone evaluates, writes the state and calls
    ``on_epoch`` and ``on_snapshot``, and the other ranks return None for the record.
    """
    config = config or TrainConfig()
    group = ProcessGroup.from_environment()
    device = resolve_device(config.device, group.local_rank)
    if config.batch_size < group.world_size:
        raise ValueError(f"--batch-size {config.batch_size} leaves some of the {group.world_size} processes without states")
    with group.joined(device):
        return _train(dataset, config, on_epoch, validation, validation_tasks, group, state_path,
                      sorted(set(snapshot_minutes)), on_snapshot, started)


def make_objective(config, dataset):
    """Return the objective of ``config.head`` for ``dataset`` (refusing datasets without actions for action heads)."""
    from up_gnnplan.models import head_parts

    kind, value = head_parts(config.head)
    if config.loss in RANK_LOSSES:
        if kind is not None:
            raise ValueError(f"--loss {config.loss} ranks a state's successors by their values, so it trains value "
                             f"heads; --head {config.head} scores actions (its logits loss already ranks them)")
        from up_gnnplan.grounding.encoding import is_grounding_signature

        if is_grounding_signature(dataset.signature):
            return VariantRankingObjective(config)
        return RankingObjective(config)
    if kind is None:
        return ValueObjective(config)
    return ActionObjective(config, kind, value, dataset)


def _train(dataset, config, on_epoch, validation, validation_tasks, group, state_path, snapshot_minutes, on_snapshot,
           started=None):
    """Do :func:`train`'s work as one process of ``group``, on its device."""
    import torch

    from up_gnnplan.training.resume import Progress, canonical_digest, data_digest, load_state, restore, save_state

    device = group.device
    seed_everything(config.seed, config.threads)
    rng = np.random.default_rng(config.seed)
    objective = make_objective(config, dataset)
    if isinstance(objective, (ActionObjective, RankingObjective)):
        option = f"--head {config.head}" if isinstance(objective, ActionObjective) else f"--loss {config.loss}"
        dataset.require_actions("the training dataset", option)
        if validation is not None:
            validation.require_actions("the validation dataset", option)
    if validation is not None:
        check_signature(validation, dataset.signature, "the validation dataset")
        train_idx, _, _ = split(dataset, 0.0, rng)
        val_idx = np.flatnonzero(~validation.dead_end)
        val_problems = [p.name for p in validation.problems]
    else:
        train_idx, val_idx, val_problems = split(dataset, config.validation_fraction, rng)
    val_data = validation if validation is not None else dataset
    train_idx = objective.select(dataset, train_idx)
    val_idx = objective.select(val_data, val_idx)
    if len(train_idx) == 0:
        raise ValueError("the dataset has no solvable (non-dead-end) states to train on")
    encoding, model = build(config, dataset.signature, dataset.action_signature, dataset.types)
    model.to(device)
    replica = group.replicate(model)  # the model itself, or its DistributedDataParallel wrapper
    if group.world_size > 1:
        torch.manual_seed(config.seed + group.rank)  # same initial weights, but each process its own dropout
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    # Müller et al.'s schedule: halve the learning rate when the validation error stops falling.
    schedule = (torch.optim.lr_scheduler.ReduceLROnPlateau(optimiser, factor=0.5, patience=config.lr_patience)
                if config.lr_patience > 0 else None)
    sampler = ValueCoveringSampler(train_idx, dataset.value, config.batch_size, rng, config.epoch_states,
                                   config.curriculum, curriculum_order(dataset, train_idx) if config.curriculum else None)
    # The per-epoch validation error is taken on a fixed sample, so large held-out problems do
    # not dominate the run; the final record reports the whole validation set.
    monitor = val_idx if len(val_idx) else train_idx
    monitor_data = val_data if len(val_idx) else dataset
    if len(monitor) > config.validation_states:
        whole = getattr(objective, "sample", None)  # an objective that compares states keeps their groups whole
        monitor = (whole(monitor_data, monitor, config.validation_states, rng) if whole is not None else
                   np.sort(rng.choice(monitor, size=config.validation_states, replace=False)))
    best = ((float("inf"),), 0, copy.deepcopy(model.state_dict()))  # (score, epoch, weights); lower score wins
    average = WeightAverage(model, config.ema) if config.ema > 0 else None
    progress = Progress()
    digest = data_digest(dataset, validation) if state_path else None
    canonical = canonical_digest(dataset, validation) if state_path else None
    if state_path is not None and Path(state_path).is_file():
        progress, tensors = load_state(state_path, config, digest, canonical,
                                       note=lambda message: print(message, file=sys.stderr, flush=True))
        best = (tuple(progress.best_score), progress.best_epoch, restore(tensors, progress, model, optimiser))
        if average is not None:
            average.restore(tensors, progress.steps)
        rng.bit_generator.state = progress.sampler_rng  # the sampler draws from rng
        torch.set_rng_state(tensors["torch_rng"])
        if schedule is not None and progress.scheduler:
            schedule.load_state_dict(progress.scheduler)
    progress.sessions.append([progress.epoch + 1, round(progress.seconds, 1)])
    # The budget counts from the command's start, over all sessions.
    start = (time.perf_counter() if started is None else started) - progress.seconds
    budget = Budget(config.max_seconds, start)
    final_states = min(len(train_idx), TRAIN_ERROR_STATES) + len(val_idx)  # what the final record values

    def out_of_time() -> bool:
        """Whether one more step, its epoch's evaluation and the final steps no longer fit; rank 0's clock decides."""
        return group.from_main((not budget.room_for_epoch(len(monitor), final_states),))[0]

    if not progress.epoch and budget.deadline.passed():
        from up_gnnplan.limits import TimeLimitReached

        raise TimeLimitReached(f"--timeout {config.max_seconds:g} ran out before the first epoch: reading the data "
                               f"and building the model took {budget.elapsed():.1f} s; give more time")
    steps, train_seconds = progress.steps, progress.train_seconds  # train_seconds: in optimisation steps only
    curve = progress.curve  # [epoch, seconds, mean training loss, validation MAE] per epoch
    for epoch in range(progress.epoch + 1, config.max_epochs + 1):
        # A continued run that had ended stays ended unless its budget was raised.
        if progress.epoch and (progress.epoch - best[1] >= config.patience or out_of_time()):
            break
        model.train()
        losses = []
        epoch_start = time.perf_counter()
        for batch in sampler.epoch(epoch):
            step_start = time.perf_counter()
            part, weight = group.share(batch)
            with autocast(device, config.amp):
                loss = objective.loss(replica, encoding, dataset, part) * weight
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            if average is not None:
                average.update(model)
            losses.append(loss.item())
            steps += 1
            budget.timed_step(time.perf_counter() - step_start, config.batch_size)
            # The budget holds within an epoch too (large datasets have long epochs).
            if out_of_time():
                break
        train_seconds += time.perf_counter() - epoch_start
        train_loss = group.mean(float(np.mean(losses)))  # the weighted shares average to the global batches' loss
        model.eval()
        live = average.swap_in(model) if average is not None else None  # evaluated, chosen and kept: the average
        if group.is_main:
            score, judge_stopped = _score(model, encoding, objective, monitor_data, monitor, validation_tasks, config,
                                          budget, final_states)
            if judge_stopped:
                progress.judged_in_part.append(epoch)
        else:
            score = (0.0,) * (3 if validation_tasks else 1)  # a placeholder: rank 0's score is everyone's
        score = group.from_main(score)
        val_mae = score[-1]
        if schedule is not None:
            schedule.step(val_mae)
        row = [epoch, round(time.perf_counter() - start, 1), round(train_loss, 4), round(val_mae, 4)]
        row += [int(-score[0]), int(score[1])] if validation_tasks else []
        if score < best[0]:
            best = (score, epoch, copy.deepcopy(model.state_dict()))
        curve.append(row)
        progress.epoch, progress.steps, progress.train_seconds = epoch, steps, train_seconds
        progress.seconds = time.perf_counter() - start
        if group.is_main:
            if on_epoch is not None:
                on_epoch(epoch, train_loss, val_mae, best[0][-1])
            for minutes in snapshot_minutes:
                if minutes not in progress.snapshots and progress.seconds >= 60 * minutes and on_snapshot is not None:
                    last = (score, epoch, model.state_dict())
                    for kind, chosen in (("best", best), ("last", last)):
                        snapshot, record = _snapshot(model, encoding, dataset, val_data, config, train_idx, val_idx,
                                                     val_problems, chosen, progress, objective, validation_tasks,
                                                     budget, final_states)
                        on_snapshot(minutes, kind, snapshot, encoding, record)
                    progress.snapshots.append(minutes)
        if live is not None:
            model.load_state_dict(live)  # training goes on from the last step's weights
        if group.is_main and state_path is not None:
            progress.best_score, progress.best_epoch = list(best[0]), best[1]
            progress.sampler_rng = rng.bit_generator.state
            progress.scheduler = schedule.state_dict() if schedule is not None else None
            write_start = time.perf_counter()
            save_state(state_path, config, digest, progress, model, best[2], optimiser, torch.get_rng_state(),
                       average.tensors() if average is not None else None, canonical)
            budget.timed_write(time.perf_counter() - write_start)
        if epoch - best[1] >= config.patience or out_of_time():
            break
    progress.seconds = time.perf_counter() - start
    model.load_state_dict(best[2])
    model.cpu().eval()
    if not group.is_main:
        return model, encoding, None
    record = _full_record(model, encoding, dataset, val_data, config, train_idx, val_idx, val_problems, best, progress,
                          objective, validation_tasks, budget)
    record.update(device=str(device), world_size=group.world_size, distributed_backend=group.backend)
    return model, encoding, record


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


def _full_record(model, encoding, dataset, val_data, config, train_idx, val_idx, val_problems, best, progress, objective,
                 validation_tasks=None, budget=None, reserve: float = 0.0) -> dict:
    """The record of a run that stands at ``progress`` with ``model`` holding the best weights; with a
    ``budget``, its figures are taken on as many states as the time left, less ``reserve``, allows."""
    record = _record(model, encoding, dataset, val_data, config, train_idx, val_idx, val_problems, best, progress.epoch,
                     progress.steps, progress.seconds, objective, budget, reserve)
    record["curve"] = progress.curve  # [epoch, seconds, loss, validation error(, policy solved, policy steps)]
    record["error_name"] = objective.error_name
    if validation_tasks:
        solved, steps_total = -best[0][0], best[0][1]
        record["policy_validation"] = {"problems": [task.source.problem.stem if task.source.problem else task.up_problem.name
                                                    for task in validation_tasks], "solved": int(solved),
                                       "steps": int(steps_total), "step_limit": config.policy_steps}
        if is_grounding_signature(encoding.signature):
            record["policy_validation"].update(judge="greedy binding, then LAMA-first on the ground goal: problems "
                                               "solved, steps = total plan length (step_limit per unsolved one)")
        if best[1] in progress.judged_in_part:
            record["policy_validation"]["stopped_by_time_limit"] = (
                "the deadline of --timeout stopped this epoch's judge: the problems it did not finish count as "
                "unsolved")
    record["train_states_per_second"] = round(progress.steps * config.batch_size / max(progress.train_seconds, 1e-9), 1)
    record["states_trained"] = progress.steps * config.batch_size
    record["sessions"] = progress.sessions  # [first epoch, seconds at its start] of each session of the run
    return record


def _snapshot(model, encoding, dataset, val_data, config, train_idx, val_idx, val_problems, chosen, progress, objective,
              validation_tasks, budget=None, final_states: int = 0):
    """(model, record): a CPU copy of ``model`` with the weights of ``chosen`` (score, epoch, weights), and its record
    (taken on fewer states when the time left, less what the final record needs, is short)."""
    snapshot = copy.deepcopy(model)
    snapshot.load_state_dict(chosen[2])
    snapshot.cpu().eval()
    reserve = budget.final_reserve(final_states) if budget is not None else 0.0
    record = _full_record(snapshot, encoding, dataset, val_data, config, train_idx, val_idx, val_problems, chosen,
                          copy.deepcopy(progress), objective, validation_tasks, budget, reserve)
    return snapshot, record


def _score(model, encoding, objective, data, indices, validation_tasks, config, budget=None,
           final_states: int = 0) -> tuple[tuple, bool]:
    """Return the epoch's score, lower is better: (validation error,), or (-solved, steps, validation error)
    with validation tasks; and whether the budget's deadline stopped the judge of the validation tasks.
    With a ``budget``, the evaluation and the judge are timed, and the judge ends before the time the
    final steps need."""
    began = time.perf_counter()
    val_mae = objective.error(model, encoding, data, indices)
    if budget is not None:
        budget.timed_evaluation(time.perf_counter() - began, len(indices))
    if not validation_tasks:
        return (val_mae,), False
    limits = budget.judge_limits(final_states) if budget is not None else None
    began = time.perf_counter()
    solved, steps_total = policy_validation(model, encoding, validation_tasks, config.policy_steps, limits)
    if budget is not None:
        budget.judge = time.perf_counter() - began
    return (-solved, steps_total, val_mae), limits is not None and limits.deadline.passed()


def policy_validation(model, encoding, tasks, max_steps: int, limits=None) -> tuple[int, int]:
    """Run the greedy policy of ``model`` on each task; return (problems solved, steps taken in total).

    The policy is the action policy for models with an action head, the value policy otherwise.
    A failed run counts ``max_steps`` steps, so fewer steps always means better. A grounding
    model's "policy" is the greedy binder: its ground goal is solved by LAMA-first and the plan's
    length counts as its steps (:func:`~up_gnnplan.grounding.judge.binding_validation`).
    ``limits`` (:class:`~up_gnnplan.limits.Limits`) stop the runs at their deadline: a run stopped
    or not started counts as failed.
    """
    from up_gnnplan.search import Status, action_policy_rollout, policy_rollout

    if is_grounding_signature(encoding.signature):
        from up_gnnplan.grounding.judge import binding_validation

        return binding_validation(TorchValueFunction(model, encoding), tasks, failed_cost=max_steps, limits=limits)
    solved = steps = 0
    for task in tasks:
        if limits is not None and limits.deadline.passed():
            steps += max_steps
            continue
        if hasattr(model, "actions"):
            result = action_policy_rollout(task, TorchActionScorer(model, encoding), max_steps=max_steps, limits=limits)
        else:
            result = policy_rollout(task, TorchValueFunction(model, encoding), max_steps=max_steps, limits=limits)
        ok = result.status is Status.SOLVED
        solved += ok
        steps += len(result.actions) if ok else max_steps
    return solved, steps


TRAIN_ERROR_STATES = 5000  # the training error in the record is taken on at most this many states


def _sample(indices: np.ndarray, size: int, seed: int) -> np.ndarray:
    if len(indices) <= size:
        return indices
    return np.sort(np.random.default_rng(seed).choice(indices, size=size, replace=False))


def _final_samples(objective, config, train_idx, val_idx, val_data, budget, reserve: float):
    """Return (training states, validation states, note) the final figures are taken on: a seeded sample of
    the training states (predicting every state of a large training set took minutes) and all validation
    states, or fewer of both, validation first, when the time left on ``budget`` (less ``reserve``) is
    short; the note says so (None when nothing was left out by the time)."""
    train_sample = _sample(train_idx, TRAIN_ERROR_STATES, config.seed)
    affordable = budget.affordable_states(reserve) if budget is not None else None
    if affordable is None or affordable >= len(train_sample) + len(val_idx):
        return train_sample, val_idx, None
    wanted = min(len(val_idx), max(MIN_STATES, affordable - min(MIN_STATES, len(train_sample))))
    whole = getattr(objective, "sample", None)  # an objective that compares states keeps their groups whole
    val_sample = (whole(val_data, val_idx, wanted, np.random.default_rng(config.seed)) if whole is not None
                  and wanted < len(val_idx) else _sample(val_idx, wanted, config.seed))
    train_sample = _sample(train_sample, max(MIN_STATES, affordable - len(val_sample)), config.seed)
    note = (f"the time left by --timeout {config.max_seconds:g} allowed the final figures on {len(val_sample)} "
            f"of {len(val_idx)} validation states and {len(train_sample)} of {min(len(train_idx), TRAIN_ERROR_STATES)} "
            "training states")
    return train_sample, val_sample, note


def _record(model, encoding, dataset, val_data, config, train_idx, val_idx, val_problems, best, epochs, steps, seconds,
            objective, budget=None, reserve: float = 0.0) -> dict:
    import torch

    def errors(indices, data=dataset):
        return objective.metrics(model, encoding, data, indices)

    train_sample, val_sample, note = _final_samples(objective, config, train_idx, val_idx, val_data, budget, reserve)
    record = {
        "seconds": round(seconds, 1),
        "epochs": epochs,
        "steps": steps,
        "best_epoch": best[1],
        "best_validation_mae": best[0][-1],
        "train": errors(train_sample),
        "train_error_states": int(len(train_sample)),
        "validation": errors(val_sample, val_data),
        "validation_error_states": int(len(val_sample)),  # of validation_states: fewer when the time was short
        "train_states": int(len(train_idx)),
        "validation_states": int(len(val_idx)),
        "validation_problems": val_problems,
        "dead_ends_excluded": int(dataset.dead_end.sum()),
        "problems": [p.name for p in dataset.problems],
        "states_per_second_overall": round(steps * config.batch_size / max(seconds, 1e-9), 1),
        "torch": str(torch.__version__),
        "machine": f"{platform.machine()}, {config.threads} thread(s)",
    }
    if note:
        record["time_limit_note"] = note
    return record


class TorchValueFunction:
    """A value function over a torch model, for searches during training and benchmarks."""

    def __init__(self, model, encoding):
        self.model, self.encoding = model, encoding

    def prepare(self, inputs) -> dict[str, np.ndarray]:
        """Return the model's input arrays for a batch of states (searches chunk by their size)."""
        return self.encoding.encode(inputs)

    def run(self, feed) -> np.ndarray:
        import torch

        with torch.no_grad():
            tensors = to_tensors([feed[name] for name in self.encoding.input_names()], device_of(self.model))
            return outputs(self.model, self.model(*tensors))["value"].float().cpu().numpy()

    def __call__(self, inputs) -> np.ndarray:
        return self.run(self.prepare(inputs))

    def check_signature(self, signature, where: str = "the problem") -> None:
        """Raise :class:`ModelError` unless the model's encoding is for ``signature`` (as the ONNX one)."""
        from up_gnnplan.runtime import ModelError

        if signature != self.encoding.signature:
            raise ModelError(f"the model being trained is for other predicates than {where} "
                             f"({self.encoding.signature.describe_difference(signature)})")


class TorchActionScorer:
    """An action scorer over a torch model with an action head (the searches' protocol, as the ONNX one)."""

    def __init__(self, model, encoding):
        self.model, self.encoding = model, encoding
        self.kind, self.actions = model.kind, model.actions

    def __call__(self, state, actions) -> np.ndarray:
        """Return the preference (higher is better) of each action of ``actions`` in ``state``."""
        import torch

        from up_gnnplan.encodings.actions import encode_actions
        from up_gnnplan.models.heads import preferences

        feed, order = encode_actions(self.actions, [actions], [state.num_objects])
        states = self.encoding.encode([state])
        tensors = to_tensors([states[n] for n in self.encoding.input_names()]
                             + [feed[f"action_{k}"] for k in range(len(self.actions))], device_of(self.model))
        with torch.no_grad():
            scores = outputs(self.model, self.model(*tensors))["scores"].float().cpu().numpy()[order]
        return preferences(scores, self.kind)
