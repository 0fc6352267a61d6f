"""Which policy walks go round in circles (:meth:`up_gnnplan.search.course.Course.circling`), and when.

Mode auto's walk hands over at once when, for ``CIRCLE_STEPS`` steps, it came no closer to the goal
and undid goal literals it had achieved itself ``CIRCLE_UNDONE`` times or more. This script checks
that rule where it must not fire and where it should: mode auto's first policy walks with the shipped
model the engine picks (up to 1,000 steps or ``--seconds``, no FF-relative step limit, no hand-off),
watched by the engine's own :class:`~up_gnnplan.search.course.Course` whose verdict is recorded but
does not stop the walk. Per task: how the walk ended, its steps, its goal literals, the most goal
literals it undid after achieving them without getting closer to the goal, and the step at which
the rule fires (empty: never). Sets: IPC 2023 ``testing/easy`` (``easy-DOMAIN``) and the generated
tiers of ``benchmarks/tiers.py`` (``medium-DOMAIN``, ``hard-DOMAIN``); one process a set, capped.

Each row also lists the walk's ``minima`` (the steps at which it came closer to the goal than ever before, and the
goal literals then left); ``stalls`` replays stall rules of several sizes on them (``Course._stalled``: which walks
each would stop, and which of those reach the goal).

    OMP_NUM_THREADS=1 python -m benchmarks.walk_circles run easy medium hard-lower [--domains D ...] -o benchmarks/results/walk_circles
    python -m benchmarks.walk_circles table -o benchmarks/results/walk_circles
    python -m benchmarks.walk_circles stalls -o benchmarks/results/walk_circles
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import SHARED, clock_line, load_average, run_capped, table
from .learn_eval import IPC
from .tiers import SETS

ONE = """
import json, sys, time, warnings
sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith('__editable__')]
warnings.simplefilter('ignore')
from up_gnnplan.limits import Limits
from up_gnnplan.models_zoo import find_model
from up_gnnplan.problems import Task
from up_gnnplan.runtime import load_value_function
from up_gnnplan.search import action_policy_rollout, policy_rollout
from up_gnnplan.search.course import Course

class Watch(Course):
    '''The engine's course, its verdicts recorded, never acted on.'''
    fired = None
    most = 0
    def awaited(self, step, max_steps): return max_steps
    def hopeless(self, step, state): return False
    def observe(self, step, state): pass
    def more_steps(self, step): return 0
    minima = None
    def circling(self, step, state):
        fewest = self.fewest
        if super().circling(step, state) and self.fired is None and self.verdict.startswith("going round"):
            self.fired, self.said = step, self.verdict  # (a stall near the goal: replayed by ``stalls``)
        self.most = max(self.most, self.undone)
        if self.fewest < fewest:
            self.minima.append((step, self.fewest))
        return False

seconds, domain, problems = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
for problem in problems:
    task = Task.from_files(domain, problem)
    model = load_value_function(find_model(task.signature, None))
    whole = Limits(10 * seconds)
    watch = Watch(task, whole.share(0.5), whole)
    watch.minima = []
    if model.first_policy == "action-policy":
        walk = action_policy_rollout(task, model.scorer, max_steps=1000, time_limit=seconds, course=watch)
    else:
        walk = policy_rollout(task, model, max_steps=1000, time_limit=seconds, course=watch)
    print("ROW " + json.dumps(dict(problem=problem.rsplit('/', 1)[-1], model=model.path.name, policy=model.first_policy,
                                   status=walk.status.value, steps=walk.expanded, goals=watch.total,
                                   most_undone=watch.most, fires=watch.fired, minima=watch.minima)), flush=True)
"""


def _sets(names: list[str], domains: list[str]) -> dict[str, tuple[Path, list[Path]]]:
    sets = {}
    for name in names:
        if name == "easy":
            for domain in IPC:
                folder = SHARED / "ipc2023-learning" / domain
                sets[f"easy-{domain}"] = folder / "domain.pddl", sorted((folder / "testing" / "easy").glob("p*.pddl"))
        else:
            for folder in sorted((SETS / name).iterdir()) if (SETS / name).is_dir() else []:
                sets[f"{name}-{folder.name}"] = folder / "domain.pddl", sorted(folder.glob("p*.pddl"))
    return {name: found for name, found in sets.items() if not domains or name.split("-", 1)[1] in domains}


def run(args) -> None:
    args.output.mkdir(parents=True, exist_ok=True)
    print(clock_line("start"), flush=True)
    for name, (domain, problems) in _sets(args.sets, args.domains).items():
        target = args.output / f"{name}.jsonl"
        if target.is_file() or not problems:
            continue
        ran = run_capped([sys.executable, "-c", ONE, str(args.seconds), str(domain), *map(str, problems)],
                         cap_mb=args.memory_mb, kill_after=(args.seconds + 60) * len(problems))
        rows = [line[4:] for line in ran.text.splitlines() if line.startswith("ROW ")]
        if len(rows) < len(problems):
            print(f"{name}: {len(rows)} of {len(problems)} walks ({ran.text.strip().splitlines()[-1:]})", flush=True)
        target.write_text("".join(row + "\n" for row in rows))
        print(f"{name}: {len(rows)} walks, load {load_average()}", flush=True)
    print(clock_line("end"), flush=True)
    show(args)


def show(args) -> None:
    rows = []
    for path in sorted(args.output.glob("*.jsonl")):
        walks = [json.loads(line) for line in path.read_text().splitlines()]
        fired = [w for w in walks if w["fires"] is not None]
        worst = max(walks, key=lambda w: w["most_undone"], default=None)
        rows.append([path.stem, str(len(walks)), str(sum(w["status"] == "solved" for w in walks)),
                     f"{worst['most_undone']} ({worst['problem']})" if worst else "",
                     ", ".join(f"{w['problem']} at step {w['fires']} ({w['status']} after {w['steps']})" for w in fired)
                     or "none"])
    text = table(["set", "walks", "solved by the walk", "most undone without getting closer", "the rule fires on"],
                 rows, right_from=1)
    (args.output / "table.md").write_text(text + "\n")
    print(text)


def stall_step(walk: dict, steps: int, share: float, factor: float = 0.0) -> int | None:
    """The step at which a walk stalls by the rule (``steps``, ``share``, ``factor``): more than ``steps`` steps, and
    ``factor`` times the steps it took to get there, no closer to the goal (its fewest goal literals left) than a
    minimum of at most ``share`` of its goal literals; None where it never does."""
    minima = walk.get("minima") or []
    for (step, fewest), after in zip(minima, [m[0] for m in minima[1:]] + [walk["steps"] + 1]):
        wait = max(steps, int(factor * step))
        if fewest <= share * walk["goals"] and fewest > 0 and after - step > wait:
            return step + wait
    return None


def stalls(args) -> None:
    """Where stall rules of several sizes fire: on walks that reach the goal (a loss: the walk is stopped before it
    does) and on those that do not (the steps it saves)."""
    walks = [dict(json.loads(line), set=path.stem) for path in sorted(args.output.glob("*.jsonl"))
             for line in path.read_text().splitlines()]
    rows = []
    for steps, factor in ((50, 0), (100, 0), (150, 0), (200, 0), (50, 0.5), (100, 0.5), (50, 1), (100, 1)):
        for share in (0.1, 0.25, 0.5, 1.0):
            fired = [(w, stall_step(w, steps, share, factor)) for w in walks]
            fired = [(w, at) for w, at in fired if at is not None]
            lost = [f"{w['set']}/{w['problem']} ({at} of {w['steps']})" for w, at in fired if w["status"] == "solved"]
            saved = sum(w["steps"] - at for w, at in fired if w["status"] != "solved")
            rows.append([str(steps), f"{factor:g}", f"{share:g}", str(len(fired)), str(len(fired) - len(lost)), f"{saved:,}",
                         ", ".join(lost) or "none"])
    text = table(["steps", "x steps before", "share", "fires on", "of them not solved by the walk", "steps saved there",
                  "solved walks it would stop"], rows, right_from=0)
    (args.output / "stalls.md").write_text(text + "\n")
    print(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run")
    go.add_argument("sets", nargs="+", choices=["easy", "medium", "between", "hard-lower", "hard"])
    go.add_argument("--domains", nargs="*", default=[], help="these domains only (default: all)")
    go.add_argument("--seconds", type=float, default=25.0, help="each walk's time limit")
    go.add_argument("--memory-mb", type=int, default=6000)
    for command in (go, sub.add_parser("table"), sub.add_parser("stalls")):
        command.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    {"run": run, "table": show, "stalls": stalls}[args.command](args)


if __name__ == "__main__":
    main()
