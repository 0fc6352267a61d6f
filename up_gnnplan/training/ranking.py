"""The ranking objective: order a state's successors the way the greedy policy needs.

The value policy and GBFS only use the *order* of the values of a state's successors, not how
close each value is to V*. Following the ranking formulation of learned heuristics (Garrett et
al. 2016's rank-SVM constraints, taken up by GOOSE, Chen et al. 2024), for a state ``s`` with
optimal successors ``O`` (``c(a) + V*(s') = V*(s)``) and the other recorded successors ``N``
(dead ends among them), the loss asks

- the best optimal successor to be valued below every other sibling by a margin:
  ``max(0, m + min_{o in O} V(o) - V(n))`` for each ``n`` in ``N``;
- the best optimal successor to be valued below its parent:
  ``max(0, min(m, c*) + min_{o in O} V(o) - V(s))``, with ``c*`` the cheapest optimal action's cost.

``m`` is ``margin`` (1: one unit-cost step). Alone (``--loss rank``) the values are free in
scale and offset; with ``l1+rank`` or ``mse+rank`` the V* regression of the batch's states is
added, so the values stay near V* (which GBFS ties and the step-limit heuristics read).

A state of a large domain can have hundreds of successors (Childsnack: 714), so training keeps
every optimal successor but at most ``rank_siblings`` others per state, drawn at random; the
validation error uses all of them. The error the best epoch is chosen by is the share of states
whose lowest-valued successor is not optimal: what the greedy policy gets wrong.
"""

from __future__ import annotations

import numpy as np

from up_gnnplan.training.data import state_inputs
from up_gnnplan.training.devices import device_of
from up_gnnplan.training.objectives import (ChoiceObjective, ValueObjective, cheapest, outputs, predict,
                                            state_tensors, to_tensors)

RANK_LOSSES = ("rank", "l1+rank", "mse+rank")


class _MarginRanking(ChoiceObjective):
    """What the ranking objectives share: the margin, the siblings drawn per state and step, and
    the V* regression added by ``l1+rank`` and ``mse+rank``."""

    def __init__(self, config, rng: np.random.Generator | None = None):
        import torch

        self.regress = self.also_value = config.loss != "rank"
        self.loss_fn = torch.nn.MSELoss() if config.loss.startswith("mse") else torch.nn.L1Loss()
        self.margin = config.rank_margin
        self.siblings = config.rank_siblings
        self.rng = rng or np.random.default_rng(config.seed)


class RankingObjective(_MarginRanking):
    """Rank each state's optimal successor first (see the module docstring)."""

    error_name = "successor error"
    choice_metric, count_metric = "best_successor_optimal", "rank_states"

    def select(self, dataset, indices: np.ndarray) -> np.ndarray:
        """Keep the states with recorded successors, not goals, with an optimal and a labelled successor."""
        keep = [i for i in indices.tolist() if dataset.has_actions[i] and not dataset.is_goal[i]
                and np.isfinite(dataset.value[i]) and self._successors(dataset, i)[1].any()]
        return np.array(keep, dtype=np.int64)

    def _successors(self, dataset, i: int):
        """Return (successor rows, optimal mask, cost) of state ``i``'s labelled successors."""
        _, _, cost, nxt = dataset.actions(i)
        known = nxt >= 0
        rows, cost = nxt[known], cost[known]
        return rows, cheapest(cost, dataset.value[rows], dataset.value[i]), cost

    def _pairs(self, dataset, states, sample: bool):
        """Return the rows to evaluate and, per (state, successor) pair: state position, row position, optimal;
        plus each state's row position and parent margin."""
        rows, state_of, succ, optimal, parent_margin = list(states), [], [], [], []
        position = {r: k for k, r in enumerate(rows)}
        for b, i in enumerate(states):
            nxt, opt, cost = self._successors(dataset, i)
            parent_margin.append(min(self.margin, float(cost[opt].min())))
            if sample and (~opt).sum() > self.siblings:
                others = np.flatnonzero(~opt)
                keep = np.concatenate([np.flatnonzero(opt), self.rng.choice(others, self.siblings, replace=False)])
                nxt, opt = nxt[keep], opt[keep]
            for r, o in zip(nxt.tolist(), opt.tolist()):
                if r not in position:
                    position[r] = len(rows)
                    rows.append(r)
                state_of.append(b)
                succ.append(position[r])
                optimal.append(o)
        return (np.array(rows, dtype=np.int64), np.array(state_of, dtype=np.int64), np.array(succ, dtype=np.int64),
                np.array(optimal, dtype=bool), np.array(parent_margin, dtype=np.float32))

    def loss(self, model, encoding, dataset, batch):
        import torch

        device = device_of(model)
        rows, state_of, succ, optimal, parent_margin = self._pairs(dataset, batch.tolist(), sample=True)
        values = outputs(model, model(*state_tensors(encoding, state_inputs(dataset, rows), device)))["value"]
        state_of, succ, optimal, parent_margin = to_tensors([state_of, succ, optimal, parent_margin], device)
        n = len(batch)
        pair_values = values[succ]
        best = torch.full((n,), float("inf"), dtype=values.dtype, device=device).scatter_reduce(
            0, state_of[optimal], pair_values[optimal], reduce="amin", include_self=True)
        others = ~optimal
        siblings = torch.relu(self.margin + best[state_of[others]] - pair_values[others])
        parent = torch.relu(parent_margin.to(values.dtype) + best - values[:n])
        # Each state weighs the same, however many siblings it has.
        per_state = torch.zeros((n,), dtype=values.dtype, device=device).scatter_add(0, state_of[others], siblings)
        count = torch.zeros((n,), dtype=values.dtype, device=device).scatter_add(
            0, state_of[others], torch.ones_like(siblings)).clamp(min=1)
        loss = (per_state / count + parent).mean()
        if self.regress:
            (target,) = to_tensors([dataset.value[batch].astype(np.float32)], device)
            loss = loss + self.loss_fn(values[:n], target)
        return loss

    def best_is_optimal(self, model, encoding, dataset, indices, batch_size: int = 64) -> np.ndarray:
        """Return, per state, whether its lowest-valued labelled successor is optimal."""
        hits = []
        for start in range(0, len(indices), batch_size):
            chunk = indices[start:start + batch_size].tolist()
            rows, state_of, succ, optimal, _ = self._pairs(dataset, chunk, sample=False)
            values = predict(model, encoding, dataset, rows)[succ]
            for b in range(len(chunk)):
                mine = np.flatnonzero(state_of == b)
                hits.append(bool(optimal[mine[int(np.argmin(values[mine]))]]))
        return np.array(hits, dtype=bool)


class VariantRankingObjective(_MarginRanking):
    """Rank the goal variants of one state by V*(s; G): the choice a goal-grounding binder makes.

    Goal-grounding data (:mod:`up_gnnplan.grounding.dataset`) labels the states of a problem
    under several goal variants (partial bindings of its existential variables); the same state
    of the same problem file under two variants is one comparison the binder needs, whichever
    binding costs less from there. For a state ``s`` and two of its variants with
    ``V*(s; G1) < V*(s; G2)`` the loss asks ``max(0, min(m, V*(s; G2) - V*(s; G1)) + V(s; G1) -
    V(s; G2))``: the cheaper binding valued lower by the margin (``m``, or the difference when
    smaller), each state's pairs averaged, at most ``rank_siblings`` other variants per state and
    step drawn at random. Every variant shares the initial state; ``gnnplan dataset --grounding
    --shared-states`` labels the same sampled states under every variant, so every state has
    siblings. With ``l1+rank`` or ``mse+rank`` the V* regression of the batch is added.

    The error the best epoch is chosen by is the mean *regret* over the states (of problem files,
    each once): V* of the lowest-valued variant minus the least V* of the state's variants, what
    choosing by the model costs. (The share of states whose lowest-valued variant is a cheapest
    one, reported too, saturated above 95% from the first epoch of a Blocks run and picked that
    epoch by noise.)
    """

    error_name = "binding regret"
    choice_metric, count_metric = "best_variant_optimal", "variant_states"

    def __init__(self, config, rng: np.random.Generator | None = None):
        super().__init__(config, rng)
        self._groups: dict = {}  # id(dataset) -> (dataset, group of each row, rows of each group)

    def _grouping(self, dataset):
        """Return (group id of each row, rows of each group): rows with the same state of the same problem file."""
        cached = self._groups.get(id(dataset))
        if cached is not None and cached[0] is dataset:
            return cached[1], cached[2]
        from up_gnnplan.grounding.dataset import _key

        ids: dict = {}
        group = np.empty(len(dataset), np.int64)
        for i in range(len(dataset)):
            problem = dataset.problems[dataset.state_problem[i]]
            group[i] = ids.setdefault((problem.problem_file, _key(dataset.fluent_atoms(i))), len(ids))
        order = np.argsort(group, kind="stable")
        members = np.split(order, np.flatnonzero(np.diff(group[order])) + 1) if len(order) else []
        self._groups[id(dataset)] = (dataset, group, members)
        return group, members

    def select(self, dataset, indices: np.ndarray) -> np.ndarray:
        """Keep the states (finite V*) with a sibling variant of another V*."""
        group, members = self._grouping(dataset)
        chosen = set(indices.tolist())

        def ranked(g):
            values = dataset.value[[r for r in members[g].tolist() if r in chosen]]
            values = values[np.isfinite(values)]
            return len(values) > 1 and values.max() - values.min() > 1e-6

        keep_group = {g: ranked(g) for g in np.unique(group[indices]).tolist()}
        return np.array([i for i in indices.tolist() if np.isfinite(dataset.value[i]) and keep_group[group[i]]],
                        dtype=np.int64)

    def sample(self, dataset, indices: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        """About ``size`` of ``indices`` in whole groups (all variants of each state drawn), for the
        per-epoch validation figure: a state with half its variants compares half the choices."""
        group, _ = self._grouping(dataset)
        groups = np.unique(group[indices])
        rng.shuffle(groups)
        counts = np.bincount(group[indices], minlength=len(group))[groups]
        keep = set(groups[:max(1, int(np.searchsorted(np.cumsum(counts), size, side="right")))].tolist())
        return np.sort(np.array([i for i in indices.tolist() if group[i] in keep], dtype=np.int64))

    def loss(self, model, encoding, dataset, batch):
        import torch

        group, members = self._grouping(dataset)
        value = dataset.value
        rows = list(batch.tolist())
        position = {r: k for k, r in enumerate(rows)}
        low, high, margin, owner = [], [], [], []
        for b, i in enumerate(batch.tolist()):
            others = [r for r in members[group[i]].tolist()
                      if r != i and np.isfinite(value[r]) and abs(value[r] - value[i]) > 1e-6]
            if len(others) > self.siblings:
                others = self.rng.choice(others, self.siblings, replace=False).tolist()
            for r in others:
                if r not in position:
                    position[r] = len(rows)
                    rows.append(r)
                cheap, dear = (i, r) if value[i] < value[r] else (r, i)
                low.append(position[cheap])
                high.append(position[dear])
                margin.append(min(self.margin, abs(value[r] - value[i])))
                owner.append(b)
        device = device_of(model)
        values = outputs(model, model(*state_tensors(encoding, state_inputs(dataset, np.array(rows)), device)))["value"]
        n = len(batch)
        loss = values.sum() * 0.0
        if owner:
            low, high, margin, owner = to_tensors([np.array(low), np.array(high), np.array(margin, np.float32),
                                                   np.array(owner)], device)
            hinge = torch.relu(margin.to(values.dtype) + values[low] - values[high])
            per_state = torch.zeros((n,), dtype=values.dtype, device=device).scatter_add(0, owner, hinge)
            count = torch.zeros((n,), dtype=values.dtype, device=device).scatter_add(0, owner, torch.ones_like(hinge))
            loss = loss + (per_state[count > 0] / count[count > 0]).mean()
        if self.regress:
            (target,) = to_tensors([value[batch].astype(np.float32)], device)
            loss = loss + self.loss_fn(values[:n], target)
        return loss

    def metrics(self, model, encoding, dataset, indices) -> dict:
        """:meth:`ChoiceObjective.metrics` from one pass of :meth:`regrets`, the states counted once each
        (not once per variant), with the mean regret."""
        chosen = self.select(dataset, indices)
        regrets = self.regrets(model, encoding, dataset, chosen) if len(chosen) else np.zeros(0)
        if len(regrets) == 0:
            return {}
        out = {self.choice_metric: float((regrets <= 1e-6).mean()), self.count_metric: int(len(regrets)),
               "binding_regret": float(regrets.mean())}
        if self.also_value:
            out.update(ValueObjective.metrics(self, model, encoding, dataset, indices))
        return out

    def regrets(self, model, encoding, dataset, indices, batch_size: int = 256) -> np.ndarray:
        """Return, per state among ``indices`` (each once), V* of its lowest-valued variant minus the least V*."""
        group, members = self._grouping(dataset)
        chosen = set(indices.tolist())
        groups = [[r for r in members[g].tolist() if r in chosen] for g in np.unique(group[indices]).tolist()]
        groups = [g for g in groups if len(g) > 1]
        if not groups:
            return np.zeros(0)
        rows = np.array([r for g in groups for r in g], dtype=np.int64)
        predicted = dict(zip(rows.tolist(), predict(model, encoding, dataset, rows, batch_size).tolist()))
        truth = [dataset.value[g] for g in groups]
        return np.array([t[int(np.argmin([predicted[r] for r in g]))] - t.min() for g, t in zip(groups, truth)])

    def best_is_optimal(self, model, encoding, dataset, indices, batch_size: int = 256) -> np.ndarray:
        """Return, per state among ``indices`` (each once), whether its lowest-valued variant is a cheapest one."""
        return self.regrets(model, encoding, dataset, indices, batch_size) <= 1e-6

    def error(self, model, encoding, dataset, indices) -> float:
        """The mean regret (:meth:`regrets`) of the selected states: how much a wrong choice costs, not only how often."""
        indices = self.select(dataset, indices)
        regrets = self.regrets(model, encoding, dataset, indices) if len(indices) else np.zeros(0)
        return float(regrets.mean()) if len(regrets) else float("inf")
