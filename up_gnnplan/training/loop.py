"""The training loop: Adam on the objective of the model's heads, early stopping on validation error.

The objective (:mod:`up_gnnplan.training.objectives`) is the paper's L1 regression of V* for
value models, and the action head's cross-entropy or Q regression for action models. Training
runs on ``config.device`` (:mod:`up_gnnplan.training.devices`), and across processes when
started by torchrun (:mod:`up_gnnplan.training.distributed`).

The loop's parts share one :class:`~up_gnnplan.training.run.TrainingRun`: an epoch is scored by
:mod:`up_gnnplan.training.judging`, the record and the snapshots are taken by
:mod:`up_gnnplan.training.record`, ``--ema`` is :mod:`up_gnnplan.training.averaging` and
``--state`` :mod:`up_gnnplan.training.resume`. The torch models behind the searches' protocols
are in :mod:`up_gnnplan.training.adapters` (re-exported here for older imports).
"""

from __future__ import annotations

import copy
import sys
import time
from pathlib import Path

import numpy as np

from up_gnnplan.datasets.store import check_signature
from up_gnnplan.training.adapters import TorchActionScorer, TorchValueFunction  # noqa: F401  (re-exported)
from up_gnnplan.training.averaging import WeightAverage
from up_gnnplan.training.budget import Budget
from up_gnnplan.training.checkpoint import build
from up_gnnplan.training.config import TrainConfig
from up_gnnplan.training.data import ValueCoveringSampler, curriculum_order, split
from up_gnnplan.training.devices import autocast, resolve_device
from up_gnnplan.training.distributed import ProcessGroup
from up_gnnplan.training.judging import epoch_score, policy_validation, score_key, settled  # noqa: F401  (policy_validation re-exported)
from up_gnnplan.training.objectives import ActionObjective, ValueObjective, predict  # noqa: F401  (predict re-exported)
from up_gnnplan.training.ranking import RANK_LOSSES, RankingObjective, VariantRankingObjective
from up_gnnplan.training.record import run_record, take_snapshots
from up_gnnplan.training.run import Chosen, TrainingRun


def seed_everything(seed: int, threads: int) -> None:
    """Make a run repeatable: torch and numpy seeds, deterministic kernels, fixed thread count."""
    import torch

    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)


def train(dataset, config: TrainConfig | None = None, on_epoch=None, validation=None, validation_tasks=None,
          state_path=None, snapshot_minutes=(), on_snapshot=None, started: float | None = None, initial_weights=None,
          judge_graph=None, candidates=None):
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

    ``on_epoch(epoch, train_loss, val_mae, best_val_mae, judge=...)`` is called after every epoch
    (the CLI shows it in a progress bar); ``judge`` is None without ``validation_tasks``, else a
    dict: ``solved`` and ``steps`` of this epoch's greedy policy on them, ``tasks`` (their number),
    and the epoch chosen so far, ``best_epoch``, ``best_solved``. The returned model has the weights
    of the best epoch and is on the CPU, whatever ``config.device`` it was trained on.

    With ``state_path``, the run's state is written there after every epoch and, when the file
    exists, the run continues from it (:mod:`up_gnnplan.training.resume`): the budget
    (``max_seconds``, ``max_epochs``, ``patience``) counts over all sessions of the run.
    ``on_snapshot(minutes, kind, model, encoding, record)`` is called at the end of the first epoch
    past each of ``snapshot_minutes`` (minutes of the run's wall-clock), once with ``kind`` "best":
    the best weights so far, the model a run stopped then would return, and once with "last": the
    weights of the epoch just finished (which a selection on a small validation set may pass
    over). The coverage-against-training-time curve is measured on these.

    ``initial_weights``: a state dict of a model of the same configuration to start from (a model trained on other
    labels of the domain, refined here) instead of random weights; a run continued from ``state_path`` has its own.

    ``candidates``: a :class:`~up_gnnplan.training.run.Candidates` that is offered every epoch (its weights, as
    chosen, and its judge's walks), by the same comparison as the run's choice (rank 0 only).

    ``judge_graph``: an ONNX file exported from an untrained model of ``config`` (``gnnplan learn``'s graph file); the
    judge's greedy policy then runs in onnxruntime on the epoch's weights put into it, 3-4x faster than in torch
    (:mod:`up_gnnplan.training.judge_runtime`); the record's ``judge_runtime`` says which ran.

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
                      sorted(set(snapshot_minutes)), on_snapshot, started, initial_weights, judge_graph, candidates)


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


def _judged(score: tuple, run, validation_tasks) -> dict | None:
    """What the judge said of an epoch (``score``, :func:`epoch_score`'s) and of the epoch chosen so far."""
    if not validation_tasks or len(score) != 3:
        return None
    return {"solved": int(-score[0]), "steps": int(score[1]), "tasks": len(validation_tasks),
            "best_epoch": run.best.epoch, "best_solved": int(-run.best.score[0])}


def _train(dataset, config, on_epoch, validation, validation_tasks, group, state_path, snapshot_minutes, on_snapshot,
           started=None, initial_weights=None, judge_graph=None, candidates=None):
    """Do :func:`train`'s work as one process of ``group``, on its device."""
    import torch

    from up_gnnplan.training.resume import canonical_digest, data_digest

    # Set up: seeds, the data and their split, the model and its optimiser, then a stopped run's state.
    seed_everything(config.seed, config.threads)
    rng = np.random.default_rng(config.seed)
    objective = make_objective(config, dataset)
    val_data, train_idx, val_idx, val_problems = _split(dataset, validation, objective, config, rng)
    monitor_data, monitor = _monitor(dataset, val_data, train_idx, val_idx, objective, config, rng)
    encoding, model = build(config, dataset.signature, dataset.action_signature, dataset.types)
    if initial_weights is not None:
        model.load_state_dict(initial_weights)
    model.to(group.device)
    replica = group.replicate(model)  # the model itself, or its DistributedDataParallel wrapper
    if group.world_size > 1:
        torch.manual_seed(config.seed + group.rank)  # same initial weights, but each process its own dropout
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    # Müller et al.'s schedule: halve the learning rate when the validation error stops falling.
    schedule = (torch.optim.lr_scheduler.ReduceLROnPlateau(optimiser, factor=0.5, patience=config.lr_patience)
                if config.lr_patience > 0 else None)
    sampler = ValueCoveringSampler(train_idx, dataset.value, config.batch_size, rng, config.epoch_states,
                                   config.curriculum, curriculum_order(dataset, train_idx) if config.curriculum else None)
    run = TrainingRun(config, group, dataset, val_data, train_idx, val_idx, val_problems, monitor_data, monitor,
                      validation_tasks, objective, encoding, model, optimiser, schedule, rng,
                      average=WeightAverage(model, config.ema) if config.ema > 0 else None,
                      best=Chosen((float("inf"),), 0, copy.deepcopy(model.state_dict())))
    if judge_graph is not None and validation_tasks and group.is_main:
        from up_gnnplan.training.judge_runtime import RuntimeJudge

        run.judge_runtime = RuntimeJudge(judge_graph)
    digests = (data_digest(dataset, validation), canonical_digest(dataset, validation)) if state_path else None
    if state_path is not None and Path(state_path).is_file():
        _resume(run, state_path, digests)
    progress = run.progress
    progress.sessions.append([progress.epoch + 1, round(progress.seconds, 1)])
    # The budget counts from the command's start, over all sessions.
    run.start = (time.perf_counter() if started is None else started) - progress.seconds
    run.budget = Budget(config.max_seconds, run.start)
    run.budget.record_cost = objective.record_cost
    if not progress.epoch and run.budget.deadline.passed():
        from up_gnnplan.limits import TimeLimitReached

        raise TimeLimitReached(f"--timeout {config.max_seconds:g} ran out before the first epoch: reading the data "
                               f"and building the model took {run.budget.elapsed():.1f} s; give more time")
    for epoch in range(progress.epoch + 1, config.max_epochs + 1):
        # A continued run that had ended stays ended unless its budget was raised.
        if progress.epoch and (progress.epoch - run.best.epoch >= config.patience or progress.settled
                               or run.out_of_time()):
            break
        # Train: one epoch's batches, each process on its share of each.
        model.train()
        losses = []
        epoch_start, skipped = time.perf_counter(), 0
        for batch in sampler.epoch(epoch):
            step_start = time.perf_counter()
            part, weight = group.share(batch)
            with autocast(group.device, config.amp):
                loss = objective.loss(replica, encoding, dataset, part) * weight
            optimiser.zero_grad()
            loss.backward()
            if not _finite_gradient(model):  # not taken: one such step makes every weight NaN (its Adam moments too)
                optimiser.zero_grad()
                skipped += 1
                progress.skipped_steps += 1
                run.budget.timed_step(time.perf_counter() - step_start, config.batch_size)
                if run.out_of_time():
                    break
                continue
            optimiser.step()
            if run.average is not None:
                run.average.update(model)
            losses.append(loss.item())
            progress.steps += 1
            run.budget.timed_step(time.perf_counter() - step_start, config.batch_size)
            # The budget holds within an epoch too (large datasets have long epochs).
            if run.out_of_time():
                break
            done = len(losses) + skipped
            if config.epoch_seconds and group.from_main((_epoch_overrun(config, epoch_start, done),))[0]:
                sampler.batches_per_epoch = min(sampler.batches_per_epoch, done)  # on every process
                break
        progress.train_seconds += time.perf_counter() - epoch_start  # in optimisation steps only
        train_loss = group.mean(float(np.mean(losses)) if losses else float("nan"))  # the shares average to the batches'
        if skipped > len(losses):  # most steps of the epoch were not finite: back to the best weights, at half the rate
            _restart(run, epoch)
        # Evaluate and judge (rank 0 alone: its score is everyone's), keep the best epoch.
        model.eval()
        live = run.average.swap_in(model) if run.average is not None else None  # evaluated, chosen and kept: the average
        score = group.from_main(epoch_score(run, epoch) if group.is_main else (0.0,) * (3 if validation_tasks else 1))
        val_mae = score[-1]
        if schedule is not None:
            schedule.step(val_mae)
        row = [epoch, round(time.perf_counter() - run.start, 1), round(train_loss, 4), round(val_mae, 4)]
        row += [int(-score[0]), int(score[1])] if validation_tasks else []
        judges = len(validation_tasks or ())
        key = score_key(score, config.judge_ties, judges)
        if key < score_key(run.best.score, config.judge_ties, judges):
            run.best = Chosen(score, epoch, copy.deepcopy(model.state_dict()))
        if candidates is not None and group.is_main and candidates.wants(key):
            weights = run.best.weights if run.best.epoch == epoch else copy.deepcopy(model.state_dict())
            candidates.offer(Chosen(score, epoch, weights), key, progress.judge_walks.get(str(epoch)))
        progress.curve.append(row)  # [epoch, seconds, mean training loss, validation error(, solved, steps)]
        progress.epoch, progress.seconds = epoch, time.perf_counter() - run.start
        if validation_tasks and settled(progress.curve, len(validation_tasks), config.settle_epochs):
            progress.settled = epoch
        # Report, take the snapshots due, and save the run's state.
        if group.is_main:
            if on_epoch is not None:
                on_epoch(epoch, train_loss, val_mae, run.best.score[-1], judge=_judged(score, run, validation_tasks))
            take_snapshots(run, snapshot_minutes, on_snapshot, score)
        if live is not None:
            model.load_state_dict(live)  # training goes on from the last step's weights
        if group.is_main and state_path is not None:
            _save(run, state_path, digests)
        if epoch - run.best.epoch >= config.patience or progress.settled or run.out_of_time():
            break
    # Finish: the best weights, on the CPU, and (on rank 0) the record, within what the budget left.
    progress.seconds = time.perf_counter() - run.start
    model.load_state_dict(run.best.weights)
    model.cpu().eval()
    if not group.is_main:
        return model, encoding, None
    record = run_record(run, model, run.best, progress)
    record.update(device=str(group.device), world_size=group.world_size, distributed_backend=group.backend)
    if run.judge_runtime is not None:
        record["judge_runtime"] = run.judge_runtime.note or "onnxruntime"
    return model, encoding, record


# An epoch's steps may take this many times config.epoch_seconds before the epoch ends early.
EPOCH_OVERRUN = 1.5
MIN_EPOCH_BATCHES = 4


def _epoch_overrun(config, epoch_start: float, batches: int) -> bool:
    """Whether the epoch's ``batches`` steps so far ran past :data:`EPOCH_OVERRUN` times ``config.epoch_seconds``
    (rank 0's clock decides); the epoch then ends, and the later epochs are that many batches, so that their
    judge comes as often as the recipe meant: ``gnnplan learn``'s epoch sizes assume a rate of small graphs,
    and on pddlgym's Maze (1,200 objects) its first epoch took 4 of its 4.4 minutes."""
    return bool(config.epoch_seconds) and batches >= MIN_EPOCH_BATCHES and \
        time.perf_counter() - epoch_start > EPOCH_OVERRUN * config.epoch_seconds


def _finite_gradient(model) -> bool:
    """Whether the gradient just computed is finite everywhere (the same on every process: the gradients are
    all-reduced by then, where a loss is one process's own)."""
    import torch

    grads = [p.grad for p in model.parameters() if p.grad is not None]
    return not grads or bool(torch.isfinite(torch.stack([g.detach().abs().max() for g in grads])).all())


def _restart(run: TrainingRun, epoch: int) -> None:
    """Go on from the best epoch's weights with Adam's moments cleared and half its learning rate, after an
    epoch whose steps were mostly not finite (where the weights stand, the loss overflows)."""
    run.model.load_state_dict(run.best.weights)
    run.optimiser.state.clear()
    for group in run.optimiser.param_groups:
        group["lr"] *= 0.5
    run.progress.restarts.append(epoch)


def _split(dataset, validation, objective, config, rng):
    """Return (validation data, training states, validation states, validation problem names), the states
    those ``objective`` takes; refuse datasets that lack what ``objective`` needs."""
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
    return val_data, train_idx, val_idx, val_problems


def _monitor(dataset, val_data, train_idx, val_idx, objective, config, rng):
    """Return (data, states) the validation error of every epoch is taken on: a fixed sample of the validation
    states (else of the training states), so that large held-out problems do not dominate the run; the final
    record reports the whole validation set."""
    monitor, data = (val_idx, val_data) if len(val_idx) else (train_idx, dataset)
    if len(monitor) > config.validation_states:
        whole = getattr(objective, "sample", None)  # an objective that compares states keeps their groups whole
        monitor = (whole(data, monitor, config.validation_states, rng) if whole is not None else
                   np.sort(rng.choice(monitor, size=config.validation_states, replace=False)))
    return data, monitor


def _resume(run: TrainingRun, path, digests) -> None:
    """Continue ``run`` from the state in ``path``: its progress, best epoch, weights, optimiser, weight average,
    learning-rate schedule and random number generators."""
    import torch

    from up_gnnplan.training.resume import load_state, restore

    progress, tensors = load_state(path, run.config, *digests,
                                   note=lambda message: print(message, file=sys.stderr, flush=True))
    run.progress = progress
    run.best = Chosen(tuple(progress.best_score), progress.best_epoch, restore(tensors, progress, run.model, run.optimiser))
    if run.average is not None:
        run.average.restore(tensors, progress.steps)
    run.rng.bit_generator.state = progress.sampler_rng  # the sampler draws from rng
    torch.set_rng_state(tensors["torch_rng"])
    if run.schedule is not None and progress.scheduler:
        run.schedule.load_state_dict(progress.scheduler)


def _save(run: TrainingRun, path, digests) -> None:
    """Write ``run``'s state to ``path`` (:mod:`up_gnnplan.training.resume`), timing the write on its budget."""
    import torch

    from up_gnnplan.training.resume import save_state

    progress = run.progress
    progress.best_score, progress.best_epoch = list(run.best.score), run.best.epoch
    progress.sampler_rng = run.rng.bit_generator.state
    progress.scheduler = run.schedule.state_dict() if run.schedule is not None else None
    began = time.perf_counter()
    save_state(path, run.config, digests[0], progress, run.model, run.best.weights, run.optimiser,
               torch.get_rng_state(), run.average.tensors() if run.average is not None else None, digests[1])
    run.budget.timed_write(time.perf_counter() - began)
