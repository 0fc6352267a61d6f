"""Per domain and test set: coverage (by the model), and plan cost and time summed over the tasks every run solved,
of the campaign's runs (DOMAIN/SET-RUN/results.jsonl), as in `python -m benchmarks.learn_eval report`.

    python table.py            # the folders here
"""
import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = ("learn", "shipped", "lama", "goose")


def rows(path, run):
    """The rows of ``run``'s engine (SET-learn also holds LAMA-first's, run beside the learnt model)."""
    engine = "fast-downward" if run == "lama" else "wl-goose" if run == "goose" else "gnnplan"
    return {row["problem"]: row for row in map(json.loads, open(path)) if row["engine"].startswith(engine)}


print("| domain | set | " + " | ".join(RUNS) + " | plan cost, learn / shipped (tasks both solved) | time, learn / shipped |")
print("|---|---|" + "---|" * len(RUNS) + "---|---|")
for domain in sorted(d for d in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, d))):
    for test in ("testing-easy", "scaled"):
        found = {run: rows(p, run) for run in RUNS for p in glob.glob(f"{HERE}/{domain}/{test}-{run}/results.jsonl")}
        if not found:
            continue
        cells = []
        for run in RUNS:
            if run not in found:
                cells.append("not run")
                continue
            done = [r for r in found[run].values() if r["solved"]]
            by = sum(r.get("found_by") == "learned" for r in done)
            cells.append(f"{len(done)}/{len(found[run])}" + (f" ({by})" if run in ("learn", "shipped") else ""))
        both = [p for p in found.get("learn", {}) if found["learn"][p]["solved"] and found.get("shipped", {}).get(p, {}).get("solved")]
        cost = (f"{sum(found['learn'][p]['plan_cost'] for p in both):,.0f} / {sum(found['shipped'][p]['plan_cost'] for p in both):,.0f} ({len(both)})"
                if both else "n/a")
        time = (f"{sum(found['learn'][p]['solve_time'] for p in both):.1f} / {sum(found['shipped'][p]['solve_time'] for p in both):.1f} s"
                if both else "n/a")
        print(f"| {domain} | {test} | " + " | ".join(cells) + f" | {cost} | {time} |")
