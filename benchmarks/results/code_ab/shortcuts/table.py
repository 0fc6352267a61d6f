"""Both arms of the shortcuts A/B task by task: python table.py /work/ab-shortcuts > table.md (rows copied beside)."""
import json
import os
import statistics
import sys

root = sys.argv[1]
print("| set | tasks | solved (by the model), before / after | plan cost, tasks both solved: before / after (ratio) | "
      "mean time, before / after | elimination's time, after: mean / most |")
print("|---|---:|---|---|---|---|")
total = {"before": 0, "after": 0}
for name in sorted(os.listdir(f"{root}/before")):
    rows = {}
    for arm in ("before", "after"):
        path = f"{root}/{arm}/{name}/results.jsonl"
        rows[arm] = {json.loads(line)["problem"]: json.loads(line) for line in open(path)} if os.path.exists(path) else {}
    problems = sorted(set(rows["before"]) & set(rows["after"]))
    if not problems:
        continue
    cells = []
    for arm in ("before", "after"):
        solved = sum(rows[arm][p]["solved"] for p in problems)
        model = sum(rows[arm][p]["solved"] and rows[arm][p].get("found_by") == "learned" for p in problems)
        total[arm] += solved
        cells.append(f"{solved} ({model})")
    both = [p for p in problems if rows["before"][p]["solved"] and rows["after"][p]["solved"]]
    cost = [sum(rows[arm][p]["plan_cost"] for p in both) for arm in ("before", "after")]
    times = [statistics.mean(rows[arm][p]["wall_time"] for p in both) if both else 0 for arm in ("before", "after")]
    spent = []
    for p in both:
        for part in (rows["after"][p].get("notes") or "").split(" | "):
            if part.startswith("action elimination") and " in " in part:
                spent.append(float(part.rsplit(" in ", 1)[1].removesuffix(" s")))
    print(f"| {name} | {len(problems)} | {cells[0]} / {cells[1]} | {cost[0]:.0f} / {cost[1]:.0f} "
          f"({cost[1] / max(cost[0], 1):.2f}) | {times[0]:.1f} / {times[1]:.1f} s | "
          + (f"{statistics.mean(spent):.2f} / {max(spent):.1f} s |" if spent else "- |"))
print(f"| **total** | | {total['before']} / {total['after']} | | | |")
