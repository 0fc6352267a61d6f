"""Where the time of one expansion of mode auto's fallback search goes, and what deferred evaluation or
batching several open states per forward pass would save (issue 33).

On medium-sized generated tasks (``benchmarks.lama_handoff``'s sets), the states of the shipped
model's action-policy rollout stand for the states the fallback expands (it is seeded with them).
For each state it times, in this process, one at a time:

- ``generate``: pymimir's applicable actions;
- ``ff``: the FF value (the dual searches value each expanded state once, deferred already);
- ``score 1``: an action model's scores of the state's actions, one session call per state, as
  ``dual-policy-best-first`` does today;
- ``score k``: the same states scored ``k`` to a session call (one encoded batch), per state:
  what batching several open states per forward pass would cost;
- for a model with a value head: ``value succ``: valuing every successor (eager GBFS, as
  ``dual-gbfs`` does today) against ``value 1``: valuing the expanded state alone (deferred
  evaluation: children inherit their parent's value and are valued when expanded).

    OMP_NUM_THREADS=1 python -m benchmarks.fallback_expansions satellite rovers transport sokoban blocksworld spanner
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from .common import RESULTS, clock_line, fmt, note, table, write_json
from .lama_handoff import SETS

OUT = RESULTS / "fallback_expansions"
LOG = OUT / "commands.log"
BATCHES = (4, 16)


def _states(task, model, inputs, count: int) -> list:
    """The first ``count`` states of the model's greedy rollout (the action policy, else the value policy)."""
    from up_gnnplan.search import action_policy_rollout, policy_rollout

    if model.has_actions:
        result = action_policy_rollout(task, model.scorer, max_steps=count, inputs=inputs)
    else:
        result = policy_rollout(task, model, max_steps=count, inputs=inputs)
    states, state = [task.initial_state()], task.initial_state()
    for action in result.actions:
        state = action.apply(state)
        states.append(state)
    return states[:count]


def _score_batch(model, state_inputs, action_inputs) -> list[np.ndarray]:
    """Score the actions of several states in one session call (a prototype of a batched scorer)."""
    from up_gnnplan.encodings.actions import encode_actions

    feed = model._state_feed(state_inputs)
    action_feed, order = encode_actions(model.actions, action_inputs, [s.num_objects for s in state_inputs])
    out = model.session.run(["scores"], {**feed, **action_feed})[0][order]
    return np.split(out, np.cumsum([len(a) for a in action_inputs])[:-1])


def measure(domain: str, count: int) -> dict:
    from up_gnnplan.encodings.actions import ActionInput
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.problems.loading import load_pddl
    from up_gnnplan.problems import Task
    from up_gnnplan.runtime import load_value_function
    from up_gnnplan.search import Inputs
    from up_gnnplan.search.ff import FFHeuristic
    from up_gnnplan.states.actions import ActionRows

    folder = SETS / domain
    problem_file = sorted(p for p in folder.glob("p*.pddl"))[0]
    task = Task(load_pddl(folder / "domain.pddl", problem_file))
    model = load_value_function(find_model(task.signature, None), threads=1)
    inputs, rows = Inputs(task), ActionRows(task)
    states = _states(task, model, inputs, count)
    ff = FFHeuristic(task)
    times = {k: [] for k in ("generate", "ff", "score 1", *[f"score {k}" for k in BATCHES], "value succ", "value 1")}
    prepared = []
    for state in states:
        began = time.perf_counter()
        actions = state.generate_applicable_actions()
        times["generate"].append(time.perf_counter() - began)
        began = time.perf_counter()
        ff(state)
        times["ff"].append(time.perf_counter() - began)
        state_input = inputs([state])[0]
        if model.has_actions:
            schema, args = rows(actions)
            action_input = ActionInput(schema, args)
            prepared.append((state_input, action_input))
            began = time.perf_counter()
            model.scorer(state_input, action_input)
            times["score 1"].append(time.perf_counter() - began)
        if model.has_value:
            successors = [a.apply(state) for a in actions]
            began = time.perf_counter()
            model(inputs(successors))
            times["value succ"].append(time.perf_counter() - began)
            began = time.perf_counter()
            model([state_input])
            times["value 1"].append(time.perf_counter() - began)
    for k in BATCHES if prepared else ():
        for start in range(0, len(prepared) - k + 1, k):
            group = prepared[start:start + k]
            began = time.perf_counter()
            _score_batch(model, [s for s, _ in group], [a for _, a in group])
            times[f"score {k}"].append((time.perf_counter() - began) / k)
    actions_per_state = statistics.mean(len(s.generate_applicable_actions()) for s in states)
    return {"problem": problem_file.name, "model": model.path.name, "states": len(states),
            "mean_actions": actions_per_state, "objects": task.num_objects,
            "ms": {k: 1000 * statistics.mean(v) if v else None for k, v in times.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domains", nargs="+")
    parser.add_argument("--states", type=int, default=48)
    args = parser.parse_args(argv)
    given = argv if argv is not None else sys.argv[1:]
    note(LOG, clock_line("start") + " python -m benchmarks.fallback_expansions " + " ".join(given))
    results = {domain: measure(domain, args.states) for domain in args.domains}
    note(LOG, clock_line("end"))
    write_json(OUT / "results.json", results)
    keys = ["generate", "ff", "score 1", *[f"score {k}" for k in BATCHES], "value succ", "value 1"]
    rows = [[d, r["model"], str(r["objects"]), fmt(r["mean_actions"]), *[fmt(r["ms"][k]) for k in keys]]
            for d, r in results.items()]
    text = table(["domain", "model", "objects", "actions/state", *[f"{k} (ms)" for k in keys]], rows, right_from=2)
    (OUT / "table.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
