"""Search with a learned value function (no torch): greedy policy and greedy best-first search.

Both take a *value function*: any callable mapping a list of
:class:`~up_gnnplan.encodings.base.StateInput` to a numpy array of values, one per state, so
the same search runs on a torch model (training, benchmarks) or an onnxruntime session.
"""

from up_gnnplan.search.common import Inputs, SearchResult, Status
from up_gnnplan.search.gbfs import gbfs
from up_gnnplan.search.policy import policy_rollout

SEARCHES = {"policy": policy_rollout, "gbfs": gbfs}

__all__ = ["SEARCHES", "Inputs", "SearchResult", "Status", "gbfs", "policy_rollout"]
