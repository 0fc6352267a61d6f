"""Both arms of a two-arm A/B over sets, task by task: python table.py /work/ab-walk-sets [A B] > table.md
(arms A and B: folders of the run, default off and on; translator-beside's sets: before after)."""
import json
import os
import statistics
import sys

root, arms = sys.argv[1], tuple(sys.argv[2:4]) or ("off", "on")
a, b = arms
print(f"| set | tasks | solved (by the model; from the walk), {a} / {b} | mean time where both solved, {a} / {b} | "
      f"plan cost where both solved, {a} / {b} | tasks that changed |")
print("|---|---:|---|---|---|---|")
total = {arm: 0 for arm in arms}
for name in sorted(os.listdir(f"{root}/{a}")):
    rows = {}
    for arm in arms:
        path = f"{root}/{arm}/{name}/results.jsonl"
        rows[arm] = {json.loads(line)["problem"]: json.loads(line) for line in open(path)} if os.path.exists(path) else {}
    problems = sorted(set(rows[a]) & set(rows[b]))
    if not problems:
        continue
    cells = []
    for arm in arms:
        got = [rows[arm][p] for p in problems]
        solved = sum(r["solved"] for r in got)
        total[arm] += solved
        model = sum(r["solved"] and r.get("found_by") == "learned" for r in got)
        walk = sum(r["solved"] and r.get("found_by") == "walk+lama-first" for r in got)
        cells.append(f"{solved} ({model}; {walk})")
    both = [p for p in problems if rows[a][p]["solved"] and rows[b][p]["solved"]]
    times = [statistics.mean(rows[arm][p]["wall_time"] for p in both) if both else 0 for arm in arms]
    costs = [sum(rows[arm][p]["plan_cost"] for p in both) for arm in arms]
    changed = []
    for p in problems:
        x, y = rows[a][p], rows[b][p]
        if x["solved"] != y["solved"] or x.get("found_by") != y.get("found_by"):
            changed.append(f"{p.rsplit('/', 1)[-1]}: {x.get('found_by') or x['status']} {x['wall_time']:.1f} s -> "
                           f"{y.get('found_by') or y['status']} {y['wall_time']:.1f} s")
    print(f"| {name} | {len(problems)} | {cells[0]} / {cells[1]} | {times[0]:.1f} / {times[1]:.1f} s | "
          f"{costs[0]:.0f} / {costs[1]:.0f} | {'; '.join(changed) or 'none'} |")
print(f"| **total** | | {total[a]} / {total[b]} | | | |")
