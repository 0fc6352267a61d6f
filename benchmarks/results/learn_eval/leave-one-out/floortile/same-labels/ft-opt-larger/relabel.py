"""Label Floortile p19, p23, p26 along optimal plans (A* with LM-cut, generous time) into a copy of the campaign's run
folder, replacing their labels along LAMA-first's plans: the shipped model's run had these three optimal."""
import json, shutil, sys, time
from pathlib import Path
from up_gnnplan.learn.labels import label_one
F = Path("/work/shared/benchmarks/ipc2023-learning/floortile")
src, dst = Path("/work/le-c30/floortile/learn.onnx.learn"), Path("/work/ft-opt3/run-src")
if not dst.exists():
    shutil.copytree(src, dst)
    for extra in ("train.safetensors", "graph.onnx"):
        (dst / extra).unlink(missing_ok=True)
run = json.loads((dst / "run.json").read_text())
for name in sys.argv[1:]:
    began = time.perf_counter()
    out = dst / "labels" / f"{name}.npz"
    summary = label_one(str(F / "domain.pddl"), str(F / "training/easy" / f"{name}.pddl"), 400.0, 20_000,
                        str(out.with_name(name + ".new.npz")), labels="optimal", fair=120.0)
    print(name, "was", run["labels"][name]["status"], run["labels"][name]["states"], "->", summary, flush=True)
    if summary["status"] == "optimal-plan":
        out.with_name(name + ".new.npz").replace(out)
        run["labels"][name] = {**run["labels"][name], **summary}
        (dst / "run.json").write_text(json.dumps(run, indent=1))
