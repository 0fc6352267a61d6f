"""Give two arms the labels of the 30-minute runs in /work/le7, as run on 2026-11-27 21:05 UTC.

Each arm's run folder gets le7's labels and run.json with the recipe, the training state and the
later phases removed: `gnnplan learn` then continues from "labelled", with the seconds le7 spent
checking and labelling counted against the same 1800 s budget, and chooses its recipe anew.
"""
import json
import shutil
from pathlib import Path

for arm in ("le11", "le12"):
    for domain in ("rovers", "transport"):
        source, target = Path(f"/work/le7/{domain}/learn.onnx.learn"), Path(f"/work/{arm}/{domain}/learn.onnx.learn")
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        shutil.copytree(source / "labels", target / "labels")
        run = json.loads((source / "run.json").read_text())
        phases = {k: run["phases"][k] for k in ("checking", "labelling")}
        run.update(recipe=None, phases=phases, spent=sum(phases.values()), sessions=1)
        (target / "run.json").write_text(json.dumps(run, indent=1))
