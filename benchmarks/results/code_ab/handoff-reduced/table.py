"""Print both arms of the handoff_reduced A/B task by task (ab-on/, ab-off/), and the sweep's coverage (on/)."""
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(folder):
    for path in sorted(glob.glob(f"{HERE}/{folder}/*/results.jsonl")):
        for line in open(path):
            yield os.path.basename(os.path.dirname(path)), json.loads(line)


def said(row):
    if not row["solved"]:
        return row["status"]
    return f"{row['solve_time']:.1f} s, {row['plan_length']} actions, {row['found_by']}"


off = {name: row for name, row in rows("ab-off")}
print("| task | handoff_reduced (default) | handoff_reduced=False |\n|---|---|---|")
for name, row in rows("ab-on"):
    print(f"| {name} | {said(row)} | {said(off[name])} |")
sweep = list(rows("on"))
print(f"\nSweep (on/): {sum(r['solved'] for _, r in sweep)} of {len(sweep)} solved; the reduced hand-off ran on "
      f"{sum('done object' in (r['notes'] or '') for _, r in sweep)}.")
