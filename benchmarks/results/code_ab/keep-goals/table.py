import json, glob, os
D = os.path.dirname(os.path.abspath(__file__))
keep = {}
for f in glob.glob(f"{D}/keep/*/results.jsonl"):
    for l in open(f):
        r = json.loads(l); keep[(r["domain"], os.path.basename(r["problem"]))] = (os.path.basename(os.path.dirname(f)), r)
rows = []
for f in sorted(glob.glob(f"{D}/no-keep/*/results.jsonl")):
    for l in open(f):
        r = json.loads(l); name = os.path.basename(r["problem"]); s, k = keep[(r["domain"], name)]
        fmt = lambda x: (f"{x['solve_time']:.1f} s, {x['plan_length']} actions, {x['found_by']}" if x["solved"] else x["status"])
        rows.append(f"| {s} {name} | {fmt(k)} | {fmt(r)} |")
print("| set, task | keep_goals (default) | keep_goals=False |\n|---|---|---|")
print("\n".join(rows))
