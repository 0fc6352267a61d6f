"""Both arms of the hand-off-from-the-walk A/B task by task: python table.py /work/ab-walk-sets > table.md."""
import json
import os
import statistics
import sys

root, arms = sys.argv[1], ("off", "on")
print("| set | tasks | solved (by the model; from the walk), off / on | mean time where both solved, off / on | "
      "plan cost where both solved, off / on | tasks that changed |")
print("|---|---:|---|---|---|---|")
total = {arm: 0 for arm in arms}
for name in sorted(os.listdir(f"{root}/off")):
    rows = {}
    for arm in arms:
        path = f"{root}/{arm}/{name}/results.jsonl"
        rows[arm] = {json.loads(line)["problem"]: json.loads(line) for line in open(path)} if os.path.exists(path) else {}
    problems = sorted(set(rows["off"]) & set(rows["on"]))
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
    both = [p for p in problems if rows["off"][p]["solved"] and rows["on"][p]["solved"]]
    times = [statistics.mean(rows[arm][p]["wall_time"] for p in both) if both else 0 for arm in arms]
    costs = [sum(rows[arm][p]["plan_cost"] for p in both) for arm in arms]
    changed = []
    for p in problems:
        a, b = rows["off"][p], rows["on"][p]
        if a["solved"] != b["solved"] or a.get("found_by") != b.get("found_by"):
            changed.append(f"{p.rsplit('/', 1)[-1]}: {a.get('found_by') or a['status']} {a['wall_time']:.1f} s -> "
                           f"{b.get('found_by') or b['status']} {b['wall_time']:.1f} s")
    print(f"| {name} | {len(problems)} | {cells[0]} / {cells[1]} | {times[0]:.1f} / {times[1]:.1f} s | "
          f"{costs[0]:.0f} / {costs[1]:.0f} | {'; '.join(changed) or 'none'} |")
print(f"| **total** | | {total['off']} / {total['on']} | | | |")
