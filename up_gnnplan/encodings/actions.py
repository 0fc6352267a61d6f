"""Ground actions as model inputs: one integer array per action schema.

An action head scores ground actions from the embeddings of their arguments (and of their
state). For a batch of states, the applicable actions of schema ``k`` (arity ``a_k``) become
``action_k`` int64 [A_k, 1 + a_k]: the state's position in the batch, then the node ids of the
arguments (objects are nodes ``offset + object id``, the offset being the objects of the
states before it, as every object-node encoding numbers them). The model returns one score per
row, schema after schema; ``order`` puts them back in the order the actions were given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from up_gnnplan.states.actions import ActionSignature


@dataclass(frozen=True)
class ActionInput:
    """The ground actions to score in one state: ``schema`` int[n] and ``args`` int[n, width] (object ids)."""

    schema: np.ndarray
    args: np.ndarray

    def __len__(self) -> int:
        return len(self.schema)


def action_input_names(signature: ActionSignature) -> list[str]:
    return [f"action_{k}" for k in range(len(signature))]


def encode_actions(signature: ActionSignature, actions: list[ActionInput], num_objects: list[int]) -> tuple[dict, np.ndarray]:
    """Return ({``action_k``: rows}, order) for the actions of a batch of states (see the module docstring).

    ``order[j]`` is the position, among the model's scores, of the j-th given action (the
    actions of the first state first, each state's in its given order).
    """
    offsets = np.concatenate([[0], np.cumsum(num_objects)[:-1]]).astype(np.int64) if num_objects else np.zeros(0, np.int64)
    states = np.concatenate([np.full(len(a), b, np.int64) for b, a in enumerate(actions)]) if actions else np.zeros(0, np.int64)
    schema = np.concatenate([a.schema for a in actions]).astype(np.int64) if actions else np.zeros(0, np.int64)
    width = signature.width
    args = (np.concatenate([a.args.reshape(-1, width) for a in actions]).astype(np.int64) if actions
            else np.zeros((0, width), np.int64))
    nodes = np.where(args >= 0, args + offsets[states][:, None], -1)
    feed, order, start = {}, np.empty(len(schema), np.int64), 0
    for k, (_, arity) in enumerate(signature.schemas):
        rows = np.flatnonzero(schema == k)
        feed[f"action_{k}"] = np.ascontiguousarray(np.concatenate([states[rows, None], nodes[rows, :arity]], axis=1))
        order[rows] = start + np.arange(len(rows))
        start += len(rows)
    return feed, order
