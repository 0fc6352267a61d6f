"""Search with a learned value function (no torch): greedy policy and greedy best-first search.

Both take a *value function*: any callable mapping a list of
:class:`~up_gnnplan.encodings.base.StateInput` to a numpy array of values, one per state, so
the same search runs on a torch model (training, benchmarks) or an onnxruntime session.
"""

from up_gnnplan.search.action_policy import action_policy_rollout, policy_best_first
from up_gnnplan.search.common import Inputs, SearchResult, Status
from up_gnnplan.search.gbfs import gbfs
from up_gnnplan.search.policy import policy_rollout

SEARCHES = {"policy": policy_rollout, "gbfs": gbfs, "action-policy": action_policy_rollout,
            "policy-best-first": policy_best_first}

__all__ = ["SEARCHES", "Inputs", "SearchResult", "Status", "action_policy_rollout", "gbfs", "policy_best_first",
           "policy_rollout"]
