"""What a training run optimises: the value head's V* regression, or an action head's targets.

An objective says which dataset states a run trains on, turns a batch of them into model
inputs and a loss, and measures the validation error the best epoch is chosen by:

- :class:`ValueObjective`: L1 (or MSE) between ``V(s)`` and V* (the paper's objective);
- :class:`~up_gnnplan.training.ranking.RankingObjective` (``--loss rank``, ``l1+rank``,
  ``mse+rank``): the optimal successor valued below its siblings and its parent;
- :class:`ActionObjective`: for ``logits`` heads, cross-entropy over the applicable actions
  with the set of optimal ones as the target, ``-log sum_{a optimal} softmax(scores)_a``; for
  ``q`` heads, L1 between ``Q(s, a)`` and ``c(a) + V*(s')``; plus the value loss when the
  model has a value head too. The optimal actions of ``s`` are those with
  ``c(a) + V*(s') = V*(s)`` and, among those, the fewest steps left from ``s'`` (the labels' ``steps``:
  with zero-cost actions, Elevators' ``board`` of a passenger who is not to travel yet and the
  ``leave`` that undoes it are both as cheap as any plan, and a policy trained towards them walked
  board-leave loops until its step limit; in unit-cost domains every cheapest action has the
  fewest steps); an action whose successor the labeller left without V* counts as
  non-optimal, or, with ``unknown_successors="left-out"``, is left out of the softmax (and of the validation
  error). Its validation error is the share of states whose best-scored
  action is not optimal.

A dead-end successor has no finite V*; as a Q target it counts as ``c(a)`` plus one more than
the largest finite V* of the dataset (worse than any solvable state), and it is never optimal.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.datasets.store import LABELS
from up_gnnplan.encodings.actions import ActionInput, encode_actions
from up_gnnplan.training.data import state_inputs
from up_gnnplan.training.devices import device_of

SATISFICING = LABELS.index("satisficing-plan")


def cheapest(cost: np.ndarray, successor: np.ndarray, value: float) -> np.ndarray:
    """Which actions of a state of V* ``value`` lie on a cheapest path: ``cost + V*(successor) = V*``
    (``successor``: the successors' V*, infinite for a dead end)."""
    finite = np.isfinite(successor)
    return finite & (np.abs(cost + np.where(finite, successor, 0.0) - value) <= 1e-6 * max(1.0, abs(value)))


def outputs(model, result) -> dict:
    """Return a model's outputs by name: ``value`` and/or ``scores``."""
    names = getattr(model, "outputs", ("value",))
    result = result if isinstance(result, tuple) else (result,)
    return dict(zip(names, result))


def state_tensors(encoding, inputs, device=None) -> list:
    """Return the model's input tensors of a batch of states, on ``device`` (default: the CPU)."""
    batch = encoding.encode(inputs)
    return to_tensors([batch[name] for name in encoding.input_names()], device)


def to_tensors(arrays, device=None) -> list:
    """Return numpy ``arrays`` as torch tensors on ``device``; on the CPU they share the arrays' memory."""
    import torch

    return [torch.from_numpy(a).to(device) if device is not None else torch.from_numpy(a) for a in arrays]


def predict(model, encoding, dataset, indices, batch_size: int = 256) -> np.ndarray:
    """Return the model's values for dataset states ``indices`` (no gradients).

    A model with an action head and a value head is given no actions to score.
    """
    import torch

    device = device_of(model)
    no_actions = ([torch.zeros((0, 1 + a), dtype=torch.long, device=device) for a in model.actions.arities]
                  if hasattr(model, "actions") else [])
    out = []
    with torch.no_grad():
        for start in range(0, len(indices), batch_size):
            chunk = indices[start:start + batch_size]
            value = outputs(model, model(*state_tensors(encoding, state_inputs(dataset, chunk), device), *no_actions))["value"]
            out.append(value.float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


class ValueObjective:
    """Regress V* (see the module docstring)."""

    error_name = "MAE"

    def __init__(self, config):
        import torch

        self.loss_fn = torch.nn.L1Loss() if config.loss == "l1" else torch.nn.MSELoss()

    def select(self, dataset, indices: np.ndarray) -> np.ndarray:
        return indices

    def loss(self, model, encoding, dataset, batch):
        device = device_of(model)
        (target,) = to_tensors([dataset.value[batch].astype(np.float32)], device)
        return self.loss_fn(outputs(model, model(*state_tensors(encoding, state_inputs(dataset, batch), device)))["value"],
                            target)

    def error(self, model, encoding, dataset, indices) -> float:
        return float(np.abs(predict(model, encoding, dataset, indices) - dataset.value[indices]).mean())

    # What the record's figures (:meth:`metrics`) cost per state, in evaluations of :meth:`error`.
    record_cost = 1.0

    def metrics(self, model, encoding, dataset, indices) -> dict:
        if len(indices) == 0:
            return {}
        err = np.abs(predict(model, encoding, dataset, indices) - dataset.value[indices])
        return {"mae": float(err.mean()), "max_error": float(err.max()), "within_0.5": float((err < 0.5).mean())}

    def merge_metrics(self, parts: list[tuple[int, dict]]) -> dict:
        """Return the :meth:`metrics` of states taken in parts, from each part's (states, metrics): counts
        summed, the largest error the largest, every other figure the mean weighted by the states it is of
        (those the objective counts, for the figures of its choice)."""
        parts = [(n, m) for n, m in parts if m]
        count = getattr(self, "count_metric", None)
        of_chosen = {getattr(self, "choice_metric", None), "binding_regret"} - {None}
        merged = {}
        for key in dict.fromkeys(k for _, m in parts for k in m):
            having = [(n, m) for n, m in parts if key in m]
            if key == count:
                merged[key] = int(sum(m[key] for _, m in having))
            elif key == "max_error":
                merged[key] = max(m[key] for _, m in having)
            else:
                weights = [m.get(count, 0) if key in of_chosen else n for n, m in having]
                total = sum(weights)
                merged[key] = float(sum(w * m[key] for w, (_, m) in zip(weights, having)) / total) if total else \
                    having[0][1][key]
        return merged


class ChoiceObjective(ValueObjective):
    """An objective whose error is the share of states where the model's choice is not optimal.

    Subclasses give ``best_is_optimal`` (per selected state, whether the best-scored choice is
    optimal), the names of the two figures (``choice_metric``, ``count_metric``) and
    ``also_value``: whether V* is regressed too, so that its figures are reported as well.
    """

    choice_metric, count_metric, also_value = "best_optimal", "states", False

    def error(self, model, encoding, dataset, indices) -> float:
        indices = self.select(dataset, indices)
        return 1.0 - float(self.best_is_optimal(model, encoding, dataset, indices).mean()) if len(indices) else 1.0

    @property
    def record_cost(self) -> float:
        """The choice, and V* regressed too: two evaluations a state (a sokoban ``learn`` run's record, planned
        as one, ran 91 s past its training time)."""
        return 2.0 if self.also_value else 1.0

    def metrics(self, model, encoding, dataset, indices) -> dict:
        chosen = self.select(dataset, indices)
        if len(chosen) == 0:
            return {}
        out = {self.choice_metric: float(self.best_is_optimal(model, encoding, dataset, chosen).mean()),
               self.count_metric: int(len(chosen))}
        if self.also_value:
            out.update(ValueObjective.metrics(self, model, encoding, dataset, indices))
        return out


class ActionObjective(ChoiceObjective):
    """Train an action head, and the value head if the model has one (see the module docstring)."""

    error_name = "action error"
    choice_metric, count_metric = "best_action_optimal", "action_states"

    def __init__(self, config, kind: str, value: bool, dataset):
        super().__init__(config)
        self.kind, self.value = kind, value
        self.also_value = value
        self.leave_out_unknown = config.unknown_successors == "left-out"
        finite = dataset.value[np.isfinite(dataset.value)]
        self.dead_end_value = float(finite.max()) + 1.0 if len(finite) else 1.0

    def select(self, dataset, indices: np.ndarray) -> np.ndarray:
        """Keep the states with recorded actions, not goals, with at least one optimal action."""
        keep = [i for i in indices.tolist() if dataset.has_actions[i] and not dataset.is_goal[i]
                and self._targets(dataset, i)[3].any()]
        return np.array(keep, dtype=np.int64)

    def _targets(self, dataset, i: int):
        """Return (schema, args, Q target, optimal mask, known mask) of state ``i``'s recorded actions.

        A state on a satisficing plan (label ``satisficing-plan``) knows only its plan's action and the
        plan's reorderings: its other actions count as known and not optimal (its plan is the imitation
        target), whatever ``unknown_successors`` says; left out, they would leave nothing to learn there.
        """
        schema, args, cost, nxt = dataset.actions(i)
        known = nxt >= 0
        imitated = self.leave_out_unknown and self.kind == "logits" and dataset.label[i] == SATISFICING
        successor = np.where(known, dataset.value[np.maximum(nxt, 0)], np.inf)
        q = cost + np.where(np.isfinite(successor), successor, self.dead_end_value)
        v = dataset.value[i]
        optimal = known & cheapest(cost, successor, v)
        if optimal.sum() > 1:  # of the cheapest, those with the fewest steps left (zero-cost actions: see above)
            left = dataset.steps[np.maximum(nxt, 0)]
            optimal &= left == left[optimal].min()
        return schema, args, q, optimal, np.ones_like(known) if imitated else known

    def batch(self, dataset, encoding, model, indices):
        """Return (model inputs, per-action state position, Q targets, optimal, known) of a batch of states.

        The model inputs, the order and the state positions are tensors on the model's device; the
        targets and masks are numpy arrays.
        """
        device = device_of(model)
        inputs = state_inputs(dataset, indices)
        parts = [self._targets(dataset, i) for i in indices]
        actions = [ActionInput(schema, args) for schema, args, _, _, _ in parts]
        feed, order = encode_actions(model.actions, actions, [s.num_objects for s in inputs])
        tensors = state_tensors(encoding, inputs, device) + to_tensors([feed[f"action_{k}"] for k in range(len(feed))], device)
        state_of = np.concatenate([np.full(len(a), b) for b, a in enumerate(actions)])
        q = np.concatenate([p[2] for p in parts]).astype(np.float32)
        optimal = np.concatenate([p[3] for p in parts])
        known = np.concatenate([p[4] for p in parts])
        return tensors, *to_tensors([order, state_of], device), q, optimal, known

    def loss(self, model, encoding, dataset, batch):
        tensors, order, state_of, q, optimal, known = self.batch(dataset, encoding, model, batch)
        optimal, known, q = to_tensors([optimal, known, q], order.device)
        out = outputs(model, model(*tensors))
        scores = out["scores"][order]
        if self.kind == "logits":
            n = len(batch)
            if self.leave_out_unknown:
                scores = scores.masked_fill(~known, -1e30)  # neither optimal nor not: out of the softmax
            everything = segment_logsumexp(scores, state_of, n)
            best = segment_logsumexp(scores.masked_fill(~optimal, -1e30), state_of, n)
            loss = (everything - best).mean()
        else:
            loss = self.loss_fn(scores[known], q[known])
        if self.value:
            (target,) = to_tensors([dataset.value[batch].astype(np.float32)], order.device)
            loss = loss + self.loss_fn(out["value"], target)
        return loss

    def best_is_optimal(self, model, encoding, dataset, indices, batch_size: int = 128) -> np.ndarray:
        """Return, per state, whether its best-scored recorded action is optimal (with ``unknown_successors``
        "left-out", its best-scored action among those with a labelled successor, as the loss sees them)."""
        import torch

        hits = []
        with torch.no_grad():
            for start in range(0, len(indices), batch_size):
                chunk = indices[start:start + batch_size]
                tensors, order, state_of, _, optimal, known = self.batch(dataset, encoding, model, chunk)
                scores = outputs(model, model(*tensors))["scores"][order].float().cpu().numpy()
                prefs = scores if self.kind == "logits" else -scores
                if self.leave_out_unknown:
                    prefs = np.where(known, prefs, -np.inf)
                state_of = state_of.cpu().numpy()
                for b in range(len(chunk)):
                    rows = np.flatnonzero(state_of == b)
                    hits.append(bool(optimal[rows[int(np.argmax(prefs[rows]))]]))
        return np.array(hits, dtype=bool)



def segment_logsumexp(x, segment, count: int):
    """Return ``log sum exp`` of ``x`` within each of ``count`` segments (``segment[i]`` is x[i]'s)."""
    import torch

    top = torch.full((count,), -1e30, dtype=x.dtype, device=x.device).scatter_reduce(0, segment, x, reduce="amax",
                                                                                       include_self=True)
    total = torch.zeros((count,), dtype=x.dtype, device=x.device).scatter_add(0, segment, torch.exp(x - top[segment]))
    return top + torch.log(total)
