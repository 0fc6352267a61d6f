"""Search with a learned model (no torch): greedy policies, greedy and policy-guided best-first search.

The value policy and GBFS take a *value function*: any callable mapping a list of
:class:`~up_gnnplan.encodings.base.StateInput` to a numpy array of values, one per state. The
action policy and policy-best-first take an *action scorer*: a callable scoring the applicable
actions of one state in one call (:mod:`up_gnnplan.search.action_policy`). Either kind runs on a
torch model (training, benchmarks) or an onnxruntime session. ``SEARCHES`` names them;
:mod:`up_gnnplan.search.modes` makes the engine's modes of them.
"""

from up_gnnplan.search.action_policy import action_policy_rollout, dual_policy_best_first, policy_best_first
from up_gnnplan.search.common import Inputs, SearchResult, Status
from up_gnnplan.search.gbfs import dual_gbfs, gbfs
from up_gnnplan.search.policy import policy_rollout

SEARCHES = {"policy": policy_rollout, "gbfs": gbfs, "dual-gbfs": dual_gbfs, "action-policy": action_policy_rollout,
            "policy-best-first": policy_best_first, "dual-policy-best-first": dual_policy_best_first}

__all__ = ["SEARCHES", "Inputs", "SearchResult", "Status", "action_policy_rollout", "dual_gbfs",
           "dual_policy_best_first", "gbfs", "policy_best_first",
           "policy_rollout"]
