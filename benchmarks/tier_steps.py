"""Time per step of mode auto's first policy at the medium and hard tiers' sizes (issue 33), and where it goes.

For each generated task of ``benchmarks/tiers.py`` (``/tmp/gnnplan-tiers/TIER/DOMAIN``, the first
of each folder; ``benchmarks/on_course.py generate`` adds the ``between`` tier), in a process of its
own under a memory cap: the task is read with pymimir (``Task.from_files``), the shipped model the
default mode picks is loaded, and the policy mode auto walks first with it (the action policy for a
model with an action head, unless ``gnnplan learn``'s judge chose the value policy; else the value
policy) walks ``--steps`` steps or ``--seconds``, whichever ends first. Each
row gives the objects, the atoms of the initial state (static ones included: the model sees them),
the applicable actions there, the milliseconds per step, and, for a model with an action head, the
milliseconds of one session call scoring the initial state's actions (an action-policy step's model
part).

    OMP_NUM_THREADS=1 python -m benchmarks.tier_steps [DOMAIN ...] [--tier medium] -o benchmarks/results/tier_steps

With ``--before REV`` each task runs twice, the shipped files as they were at git revision REV (the same names)
and as they are now, one process each, the order alternating from task to task; the table gives both and their
ratio (now / before), taken in the one run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import ROOT, clock_line, load_average, run_capped, table, write_json
from .tiers import SETS

ONE = """
import json, sys, time, warnings
sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith('__editable__')]
warnings.simplefilter('ignore')
from up_gnnplan.models_zoo import find_model
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search import action_policy_rollout, policy_rollout
from up_gnnplan.search.common import Inputs
from up_gnnplan.states.actions import ActionRows
from up_gnnplan.encodings.actions import ActionInput
from pathlib import Path
domain, problem, steps, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
began = time.perf_counter()
task = Task.from_files(domain, problem)
loaded = time.perf_counter() - began
found = Path(find_model(task.signature, None))
model = load_value_function(Path(sys.argv[5]) / found.name if len(sys.argv) > 5 else found)
state = task.initial_state()
atoms = len(state.get_atoms())
actions = state.generate_applicable_actions()
row = dict(objects=task.num_objects, atoms=atoms, actions=len(actions), load_s=round(loaded, 2), model=model.path.name)
if model.has_actions:  # the action model's share of a step: one session call on the initial state
    inputs, rows = Inputs(task), ActionRows(task)
    state_input, (schema, args) = inputs([state])[0], rows(actions)
    model.scorer(state_input, ActionInput(schema, args))
    calls, start = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < 2.0:
        model.scorer(state_input, ActionInput(schema, args))
        calls += 1
        if time.perf_counter() - start > 10:
            break
    row["call_ms"] = round(1000 * (time.perf_counter() - start) / calls, 2)
row["policy"] = model.first_policy  # what mode auto walks first with this model
if row["policy"] == "action-policy":
    walk = action_policy_rollout(task, model.scorer, max_steps=steps, time_limit=seconds)
else:
    walk = policy_rollout(task, model, max_steps=steps, time_limit=seconds)
taken = len(walk.actions)
row.update(steps=taken, status=walk.status.value, step_ms=round(1000 * walk.seconds / max(taken, 1), 2))
print("ROW " + json.dumps(row))
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("domains", nargs="*", metavar="DOMAIN")
    parser.add_argument("--tier", choices=["medium", "hard-lower", "between", "hard"], help="one tier only (default: all)")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--memory-mb", type=int, default=6000)
    parser.add_argument("--before", metavar="REV", help="also run the shipped files of git revision REV, task by task")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    print(clock_line("start") + (f", before = {args.before}" if args.before else ""), flush=True)
    before = shipped_at(args.before) if args.before else None
    rows, data = [], []
    for tier in [args.tier] if args.tier else ["medium", "hard-lower", "between", "hard"]:
        for folder in sorted((SETS / tier).iterdir()) if (SETS / tier).is_dir() else []:
            problems = sorted(folder.glob("p*.pddl"))
            if not problems or args.domains and folder.name not in args.domains:
                continue
            arms = {"now": None, "before": before} if before else {"now": None}
            if before and len(data) % 2:
                arms = dict(reversed(list(arms.items())))
            found = {}
            for arm, folder_of_models in arms.items():
                found[arm] = one_task(args, folder / "domain.pddl", problems[0], folder_of_models)
                found[arm].update(tier=tier, domain=folder.name, problem=problems[0].name, arm=arm)
                print(json.dumps(found[arm]), flush=True)
            data.append(found["now"] if not before else found)
            row = found["now"]
            cells = [tier, folder.name, str(row.get("objects", "")), f"{row.get('atoms', '')}", f"{row.get('actions', '')}",
                     row.get("policy", row.get("error", "")), f"{row.get('steps', '')} ({row.get('status', '')})"]
            if before:
                was = found["before"]
                cells += [f"{was.get('step_ms', '')}", f"{row.get('step_ms', '')}", ratio(row, was, "step_ms"),
                          f"{was.get('call_ms', '')}", f"{row.get('call_ms', '')}", ratio(row, was, "call_ms")]
            else:
                cells += [f"{row.get('step_ms', '')}", f"{row.get('call_ms', '')}"]
            rows.append(cells + [f"{row.get('load_s', '')}", str(row.get("peak_mb", ""))])
    times = (["ms/step before", "ms/step now", "now/before", "ms/call before", "ms/call now", "now/before"] if before
             else ["ms/step", "ms/session call"])
    text = table(["tier", "domain", "objects", "atoms", "actions", "first policy", "steps", *times, "load s", "peak MB"],
                 rows, right_from=2)
    (args.output / "table.md").write_text(text + "\n")
    write_json(args.output / "rows.json", data)
    print(text)
    print(clock_line("end"))


def one_task(args, domain: Path, problem: Path, models: Path | None) -> dict:
    """Walk the first policy on ``problem`` in a process of its own (the shipped models, or those in ``models``)."""
    load = load_average()
    ran = run_capped([sys.executable, "-c", ONE, str(domain), str(problem), str(args.steps), str(args.seconds),
                      *([str(models)] if models else [])], cap_mb=args.memory_mb, kill_after=args.seconds + 180)
    found = [line[4:] for line in ran.text.splitlines() if line.startswith("ROW ")]
    row = json.loads(found[0]) if found else {"error": (ran.text.strip().splitlines() or ["no output"])[-1][:200]}
    row.update(peak_mb=ran.peak_mb, load=load)
    return row


def shipped_at(revision: str) -> Path:
    """A folder with the shipped model files as they were at git ``revision``."""
    folder = Path(tempfile.mkdtemp(prefix="gnnplan-shipped-"))
    zoo = "up_gnnplan/models_zoo"
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{revision}:{zoo}"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    for name in (n for n in names if n.endswith(".onnx")):
        (folder / name).write_bytes(subprocess.run(["git", "show", f"{revision}:{zoo}/{name}"], cwd=ROOT, check=True,
                                                   capture_output=True).stdout)
    return folder


def ratio(now: dict, before: dict, key: str) -> str:
    return f"{now[key] / before[key]:.2f}x" if now.get(key) and before.get(key) else ""


if __name__ == "__main__":
    main()
