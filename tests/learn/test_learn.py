"""``gnnplan learn``: a tiny domain learnt end to end in seconds, and the bad inputs it refuses.

The end-to-end test learns Gripper from problems of 2-5 balls (judged on 6, the one of 4 held
out of training to compare epochs by its action error) in a budget of about 20 s, checks that
the budget held and what the model's metadata records, and solves a
problem of 10 balls with the result through the engine (which validates every plan).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("torch")
pytest.importorskip("onnx")

import up_gnnplan  # noqa: E402,F401  (registers the engine)
from up_gnnplan import model_format  # noqa: E402
from up_gnnplan.cli import main  # noqa: E402
from up_gnnplan.datasets.generators import generate  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SECONDS = 30.0  # labelling, the graph exported ahead (7.4 s at load 3), a few epochs, the judge and export


def _gripper(folder: Path, balls: list[int], seed: int = 0, mixed: int = 0) -> list[Path]:
    """Gripper problems of ``balls``; ``mixed=0``: IPC 1998's layout, the same problem whatever the seed."""
    return [generate("gripper", folder, count=1, seed=seed + b, balls=b, mixed=mixed)[0] for b in balls]


def _metadata(path: Path) -> dict:
    import onnx

    proto = onnx.load(str(path))
    return {e.key[len(model_format.PREFIX):]: json.loads(e.value) for e in proto.metadata_props
            if e.key.startswith(model_format.PREFIX)}


def test_learn_gripper_end_to_end_and_solve_a_larger_problem(tmp_path):
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import OneshotPlanner

    problems = _gripper(tmp_path / "train", [2, 3, 4, 5, 6])
    large = _gripper(tmp_path / "test", [10], seed=100)[0]
    domain = tmp_path / "train" / "domain.pddl"
    output = tmp_path / "gripper.onnx"
    start = time.perf_counter()
    result = CliRunner().invoke(main, ["learn", str(domain), str(tmp_path / "train"), "-o", str(output),
                                       "--timeout", str(SECONDS)])
    seconds = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    assert output.is_file()
    assert seconds <= SECONDS * 1.05 + 1.0, f"the budget did not hold: {seconds:.1f} s"
    assert "judge:" in result.output and "phases:" in result.output
    # Each epoch's line says what the judge made of it and which epoch is chosen so far.
    assert re.search(r"epoch 1: loss [\d.]+, action error [\d.]+, judge \d/\d \(\d+ steps\); chosen so far: epoch 1 ",
                     result.output), result.output
    assert not list(tmp_path.glob(".*.partial"))

    meta = _metadata(output)
    assert meta["heads"]["action_kind"] == "logits" and "value" not in meta["heads"]["outputs"]  # the action head alone
    learnt = meta["training_record"]["learn"]
    assert learnt["command"].startswith("gnnplan learn") and learnt["minutes"] == pytest.approx(SECONDS / 60)
    assert learnt["judge"]["problems"] == [problems[-1].stem]  # the largest problem judges
    assert "solved" in learnt["judge"]
    assert learnt["data"]["labelled"] and learnt["data"]["states"] > 0
    # The second largest labelled problem is held out: not trained on, its action error breaks the judge's ties.
    held = problems[2].stem
    assert learnt["data"]["held_out"] == [held] and held in learnt["data"]["labelled"]
    record = meta["training_record"]
    assert held not in record["problems"] and record["validation_problems"] == [held]
    walks = record["policy_validation"]["walks"]  # the chosen epoch's steps per judge problem (None: not solved)
    assert len(walks) == 1 and (walks[0] is None) == (learnt["judge"]["solved"] == 0)
    assert walks[0] is None or walks[0] == learnt["judge"]["steps"]
    assert learnt["judge"]["ties"] == "error-unless-all" and 0.0 <= learnt["judge"]["held_out_error"] <= 1.0
    assert "held out of training" in result.output and "on the held-out problems" in result.output
    # no value policy to choose; LAMA-first on the judge problem, its plan what the judge's walks are measured against
    # (the search judge only where the walk and LAMA-first both failed on the judge problem)
    assert set(learnt["phases"]) - {"search-judge"} == {"checking", "labelling", "judge-plans", "training", "export"}
    assert ("search-judge" in learnt["phases"]) == (learnt["judge_plans"][problems[-1].stem]["length"] is None
                                                   and learnt["judge"]["solved"] == 0)
    plan = learnt["judge_plans"][problems[-1].stem]
    assert plan["status"] in ("solved", "timeout"), plan  # 5% of the budget: 1.5 s
    if plan["status"] == "solved":
        assert plan["length"] >= 17  # 6 balls: three trips there, two back
    against = learnt.get("judge_against_lama")
    if plan["status"] == "solved" and learnt["judge"]["solved"] == 1:
        assert against == {"walk_steps": learnt["judge"]["steps"], "plan_steps": plan["length"], "problems": 1,
                           "ratio": round(learnt["judge"]["steps"] / plan["length"], 2)}
        assert "on the 1 problem(s) both solved, LAMA-first's plans take" in result.output
    else:
        assert against is None
    assert "first_policy" not in meta["training_record"]
    assert meta["training_record"]["judge_runtime"] == "onnxruntime"  # the judge walked in the engine's runtime
    chosen = "action-policy"

    problem = PDDLReader().parse_problem(str(domain), str(large))
    with OneshotPlanner(name="gnnplan", params={"model": str(output)}) as planner:
        solved = planner.solve(problem, timeout=60)
    assert solved.status in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY), solved.log_messages
    assert any(m.message.startswith(f"{chosen}:") for m in solved.log_messages), solved.log_messages


def test_mode_auto_starts_with_the_policy_the_judge_chose(tmp_path):
    """A model of both heads whose record says the value policy won on its judge problems starts with it."""
    import onnx
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import OneshotPlanner

    from up_gnnplan.models_zoo import zoo_dir
    from up_gnnplan.runtime import OnnxValueFunction

    shipped = zoo_dir() / "blocksworld.onnx"  # gnnplan learn's, both heads
    assert OnnxValueFunction(shipped).first_policy == "action-policy"
    proto = onnx.load(str(shipped))
    for entry in proto.metadata_props:
        if entry.key == model_format.PREFIX + "training_record":
            record = json.loads(entry.value)
            entry.value = json.dumps({**record, "first_policy": "policy"})
    changed = tmp_path / "blocksworld.onnx"
    onnx.save(proto, str(changed))
    assert OnnxValueFunction(changed).first_policy == "policy"
    (generated,) = generate("blocksworld", tmp_path / "bw", count=1, seed=0, blocks=6)
    problem = PDDLReader().parse_problem(str(tmp_path / "bw" / "domain.pddl"), str(generated))
    with OneshotPlanner(name="gnnplan", params={"model": str(changed)}) as planner:
        result = planner.solve(problem, timeout=30)
    messages = [m.message for m in result.log_messages]
    assert any(m.startswith("policy:") for m in messages) and not any(m.startswith("action-policy:") for m in messages)


def _refused(args: list[str], output: Path, *words: str) -> str:
    result = CliRunner().invoke(main, ["learn", *args, "-o", str(output)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    for word in words:
        assert word in lines[0], lines[0]
    assert not output.exists() and not output.with_name(output.name + ".learn").exists()
    assert not list(output.parent.glob(".*.partial"))
    return lines[0]


def test_budget_too_small_is_refused(tmp_path):
    _gripper(tmp_path, [2, 3])
    _refused([str(tmp_path / "domain.pddl"), str(tmp_path), "--timeout", "0.06"], tmp_path / "m.onnx",
             "--timeout 0.06 s", "too small")


@pytest.mark.parametrize("where", ["graph", "first epoch"])
def test_time_that_reading_and_building_take_is_refused_as_a_budget_too_small(tmp_path, monkeypatch, where):
    """Labelling left enough to train, then exporting the graph ahead, or building the model before the first
    epoch, took it (a busier machine than the estimate): the same one-line refusal, not a traceback."""
    from up_gnnplan.learn import run
    from up_gnnplan.limits import TimeLimitReached
    from up_gnnplan.training import loop

    if where == "graph":
        # The export takes what was left: the time left after it is short of the export's own reserve.
        monkeypatch.setattr(run, "_graph_ahead", lambda path, config, data, say: monkeypatch.setattr(
            run, "export_reserve", lambda budget: 1e6))
    else:
        def late(*args, **kwargs):
            raise TimeLimitReached("--timeout 1.3 ran out before the first epoch")
        monkeypatch.setattr(loop, "train", late)
    _gripper(tmp_path, [2, 3])
    output = tmp_path / "m.onnx"
    result = CliRunner().invoke(main, ["learn", str(tmp_path / "domain.pddl"), str(tmp_path), "-o", str(output),
                                       "--timeout", "12"])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    line, = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "--timeout 12 s" in line and "too little to train at all" in line, line
    # No model, nothing half-written; the labels stay for the same command with a longer --timeout.
    assert not output.exists() and not list(tmp_path.glob(".*.partial"))
    assert f"the labels are kept in {output}.learn" in line and list((tmp_path / "m.onnx.learn" / "labels").glob("*.npz"))


def test_no_solvable_problem_is_refused(tmp_path):
    domain = tmp_path / "domain.pddl"
    domain.write_text("(define (domain locked) (:requirements :strips) (:predicates (open) (inside) (key))"
                      " (:action unlock :parameters () :precondition (key) :effect (open))"
                      " (:action enter :parameters () :precondition (open) :effect (inside)))")
    for i in range(2):
        (tmp_path / f"p{i}.pddl").write_text(f"(define (problem p{i}) (:domain locked) (:init) (:goal (inside)))")
    _refused([str(domain), str(tmp_path / "p0.pddl"), str(tmp_path / "p1.pddl"), "--timeout", "60"],
             tmp_path / "m.onnx", "no training problem is solvable")


def test_problem_of_another_domain_is_refused(tmp_path):
    _gripper(tmp_path / "g", [2, 3])
    blocks = FIXTURES / "blocksworld" / "two-blocks.pddl"
    _refused([str(tmp_path / "g" / "domain.pddl"), str(tmp_path / "g"), str(blocks), "--timeout", "60"],
             tmp_path / "m.onnx", "another domain", "two-blocks.pddl")


def test_unsupported_feature_is_refused(tmp_path):
    unsupported = FIXTURES / "unsupported"
    _refused([str(unsupported / "numeric-domain.pddl"), str(unsupported / "numeric-p01.pddl"), "--timeout", "60"],
             tmp_path / "m.onnx", "numeric-p01.pddl")


def test_problems_folder_without_problems_is_refused(tmp_path):
    _gripper(tmp_path / "g", [2])
    (tmp_path / "empty").mkdir()
    _refused([str(tmp_path / "g" / "domain.pddl"), str(tmp_path / "empty"), "--timeout", "60"], tmp_path / "m.onnx",
             "no problem files")


def test_work_folder_of_another_run_is_refused(tmp_path):
    _gripper(tmp_path / "g", [2, 3])
    output = tmp_path / "m.onnx"
    work = output.with_name(output.name + ".learn")
    work.mkdir()
    from up_gnnplan.learn.run import RUN_FORMAT

    for fmt, words in ((RUN_FORMAT, "holds a run of other problems"), (1, "an older gnnplan learn")):
        (work / "run.json").write_text(json.dumps({"format": fmt, "key": {"domain": "elsewhere", "problems": [],
                                                                          "seed": 0}}))
        result = CliRunner().invoke(main, ["learn", str(tmp_path / "g" / "domain.pddl"), str(tmp_path / "g"),
                                           "-o", str(output), "--timeout", "60"])
        assert result.exit_code == 2 and words in result.output, result.output
        assert not output.exists() and (work / "run.json").is_file()  # the other run's folder is left alone
    # A run of the same problems made with --labels optimal (the default before auto): the message says how to go on.
    from up_gnnplan.learn.inputs import check_problems, problem_files
    from up_gnnplan.learn.run import _run_key

    domain = tmp_path / "g" / "domain.pddl"
    checked = check_problems(domain, problem_files(domain, [tmp_path / "g"]))
    (work / "run.json").write_text(json.dumps({"format": RUN_FORMAT,
                                               "key": _run_key(domain, [p.path for p in checked], 0, "optimal")}))
    result = CliRunner().invoke(main, ["learn", str(domain), str(tmp_path / "g"), "-o", str(output), "--timeout", "60"])
    assert result.exit_code == 2 and "made with --labels optimal; give --labels optimal" in result.output, result.output


def test_run_key_names_files_by_content_not_path(tmp_path):
    """A run folder continues wherever its files are (labelled on one machine, trained on a GPU machine)."""
    import shutil

    from up_gnnplan.learn.run import _run_key

    problems = _gripper(tmp_path / "a", [2, 3])
    domain = tmp_path / "a" / "domain.pddl"
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    moved = [tmp_path / "b" / p.name for p in problems]
    assert _run_key(domain, problems, 0, "satisficing") == _run_key(tmp_path / "b" / "domain.pddl", moved, 0, "satisficing")
    assert _run_key(domain, problems, 0, "satisficing") != _run_key(domain, problems, 1, "satisficing")
    assert _run_key(domain, problems, 0, "satisficing") != _run_key(domain, problems, 0, "optimal")
    moved[0].write_text(moved[0].read_text().replace("(at-robby", "(at-robby ", 1) + "\n")
    assert _run_key(domain, problems, 0, "satisficing") != _run_key(tmp_path / "b" / "domain.pddl", moved, 0, "satisficing")


def test_problems_too_large_to_label_are_refused(tmp_path):
    """Blocksworld of 40 blocks: no full expansion, and no optimal plan within a share of a 12 s run (with
    ``--labels optimal``; the default ``auto`` labels them by LAMA-first's plans)."""
    for seed in range(3):
        generate("blocksworld", tmp_path, count=1, seed=seed, blocks=40)
    start = time.perf_counter()
    _refused([str(tmp_path / "domain.pddl"), str(tmp_path), "--timeout", "12", "--labels", "optimal"],
             tmp_path / "m.onnx", "no training problem could be labelled within the budget", "--labels auto")
    assert time.perf_counter() - start < 12 + 0.6


def test_the_judge_holds_back_the_largest_problems_and_one_of_middle_size():
    from up_gnnplan.learn.inputs import ProblemFile, judge_split

    problems = [ProblemFile(Path(f"p{i:02d}.pddl"), objects=i) for i in range(1, 13)]
    train, judges = judge_split(problems)
    assert [p.objects for p in judges] == [7, 11, 12]  # the middle one, then the largest fifth
    assert len(train) == 9 and not {p.path for p in train} & {p.path for p in judges}
    small = problems[:4]
    assert judge_split(small) == (small[:3], small[3:])  # fewer than ten: the largest alone


def test_a_copy_of_a_training_problem_is_left_out_with_a_line(tmp_path):
    """A copy (another name, comment and layout) would be trained on twice, or judge a problem trained on."""
    from up_gnnplan.learn.inputs import check_problems

    folder = tmp_path / "train"
    first, other = sorted(generate("gripper", folder, count=1, seed=1, balls=3) +
                          generate("gripper", folder, count=1, seed=2, balls=4))
    copy = folder / "z-copy.pddl"
    copy.write_text("; the same problem again\n" + first.read_text().replace("(problem ", "(problem renamed-")
                    .replace(") (", ")\n  ("))
    said = []
    checked = check_problems(folder / "domain.pddl", [first, other, copy], say=said.append)
    assert sorted(p.path for p in checked) == [first, other]
    assert said == [f"  z-copy.pddl: the same problem as {first.name} (left out)"]


def test_every_second_of_the_largest_labelled_problems_is_held_out():
    from up_gnnplan.learn.recipe import MAX_HELD_OUT, held_out

    assert held_out(list(range(3))) == []  # too few to spare one
    assert held_out(list(range(4))) == [2]  # the second largest: the largest is still trained on
    assert held_out(list(range(23))) == [21, 19, 17, 15]  # a fifth, every second from the second largest down
    assert len(held_out(list(range(100)))) == MAX_HELD_OUT


def test_ties_of_the_judge_are_broken_by_steps_or_by_the_error():
    from up_gnnplan.training.judging import score_key

    fewer_steps, lower_error, more_solved = (-1, 40, 0.30), (-1, 45, 0.10), (-2, 90, 0.50)
    assert min([fewer_steps, lower_error], key=score_key) == fewer_steps
    assert min([fewer_steps, lower_error], key=lambda s: score_key(s, "error")) == lower_error
    assert min([fewer_steps, lower_error, more_solved], key=lambda s: score_key(s, "error")) == more_solved
    assert score_key((0.2,), "error") == (0.2,)  # without judge problems: the error alone
    # gnnplan learn's: by the error, unless all judge problems are solved (here 1 of 1): then by the steps
    assert min([fewer_steps, lower_error], key=lambda s: score_key(s, "error-unless-all", 1)) == fewer_steps
    assert min([fewer_steps, lower_error], key=lambda s: score_key(s, "error-unless-all", 2)) == lower_error
    assert min([fewer_steps, lower_error, more_solved], key=lambda s: score_key(s, "error-unless-all", 2)) == more_solved


@pytest.mark.slow  # opt-in (--runslow): keeps the default run under 10 minutes
def test_label_only_stops_after_labelling_and_the_same_command_trains_from_the_moved_folder(tmp_path, monkeypatch):
    """Label on one machine (``--label-only``), train on another from a copy of the run folder. (A problem whose
    labelling takes long is reported while it runs: every 0.05 s here instead of 30 s.)"""
    import shutil

    import up_gnnplan.executors as executors

    monkeypatch.setattr(executors, "BEAT_SECONDS", 0.05)
    _gripper(tmp_path / "a", [2, 3, 4])
    output = tmp_path / "a.onnx"
    args = [str(tmp_path / "a" / "domain.pddl"), str(tmp_path / "a"), "--timeout", "20", "--device", "cpu"]
    labelled = CliRunner().invoke(main, ["learn", *args, "-o", str(output), "--label-only"])
    assert labelled.exit_code == 0, labelled.output
    assert "without --label-only trains" in labelled.output and "training rgnn" not in labelled.output
    assert re.search(r"\.\.\. labelling p-b\dr2-\d+-0 \(\d+ objects\) for \d+s, of a share of \d+s; at most \d+s of "
                     "labelling left", labelled.output), labelled.output
    assert not output.exists()
    run = json.loads((tmp_path / "a.onnx.learn" / "run.json").read_text())
    assert run["labels_done"] and run["recipe"] is None  # the recipe is chosen where training runs

    shutil.copytree(tmp_path / "a", tmp_path / "b")
    shutil.copytree(tmp_path / "a.onnx.learn", tmp_path / "b.learn")
    moved = [str(tmp_path / "b" / "domain.pddl"), str(tmp_path / "b"), "--timeout", "20", "--device", "cpu",
             "--batch-size", "16", "--head", "logits+value", "-o", str(tmp_path / "b.onnx"),
             "--work-dir", str(tmp_path / "b.learn")]
    trained = CliRunner().invoke(main, ["learn", *moved])
    assert trained.exit_code == 0, trained.output
    assert "continuing the run" in trained.output and "\nlabelling " not in trained.output  # no labelling stage again
    assert "batches of 16" in trained.output
    learnt = _metadata(tmp_path / "b.onnx")["training_record"]
    assert learnt["learn"]["recipe"]["batch_size"] == 16 and learnt["learn"]["device"] == "cpu"
    assert learnt["learn"]["recipe"]["head"] == "logits+value"
    # With a value head the judge runs the value policy too; mode auto starts with it only where it solved more.
    assert "choosing" in learnt["learn"]["phases"]
    chosen, judged = learnt["first_policy"], learnt["first_policy_judge"]
    more = judged["value_policy"]["solved"] > judged["action_policy"]["solved"]
    assert chosen == ("policy" if more else "action-policy")
    assert judged["action_policy"]["solved"] == learnt["learn"]["judge"]["solved"]
    assert learnt["learn"]["sessions"] == 2


def test_the_recipe_follows_the_device():
    from up_gnnplan.learn.recipe import CPU_BATCH, GPU_BATCH, MAX_EPOCH_STATES, Recipe, choose, config_of

    labelled = [{"objects": 10, "plan_length": 20}]
    cpu, gpu = choose(600, labelled, [20]), choose(600, labelled, [20], gpu=True)
    assert (cpu.batch_size, gpu.batch_size) == (CPU_BATCH, GPU_BATCH)
    assert cpu.epoch_states <= MAX_EPOCH_STATES < gpu.epoch_states  # a GPU epoch is larger, so judging stays a share
    assert choose(600, labelled, [20], gpu=True, batch_size=32).batch_size == 32
    assert (cpu.lr, gpu.lr) == (pytest.approx(1e-3), pytest.approx(8e-3))  # the rate scales with the batch
    older = {"head": "logits+value", "epoch_states": 1000, "policy_steps": 100, "seconds": 60.0}
    assert (Recipe(**older).batch_size, Recipe(**older).lr) == (32, 1e-3)  # an earlier version's run folder continues
    assert (Recipe(**older).held_out, Recipe(**older).judge_ties) == ([], "steps")  # as it began: nothing held out
    assert choose(600, labelled, [20], held_out_names=["p3"]).judge_ties == "error-unless-all"
    # Unlabelled successors' actions count as non-optimal, as in an earlier version's run; the recipe records it.
    assert (cpu.unknown_successors, Recipe(**older).unknown_successors) == ("non-optimal", "non-optimal")
    assert config_of(cpu, seed=0).unknown_successors == "non-optimal"


def test_a_device_that_is_not_there_is_refused_before_any_work(tmp_path):
    import torch

    if torch.cuda.device_count() > 8:
        pytest.skip("this machine has GPUs up to cuda:8")
    _gripper(tmp_path / "g", [2, 3])
    output = tmp_path / "m.onnx"
    result = CliRunner().invoke(main, ["learn", str(tmp_path / "g" / "domain.pddl"), str(tmp_path / "g"), "-o",
                                       str(output), "--device", "cuda:9"])
    assert result.exit_code == 2 and "cuda:9" in result.output and "not available" in result.output, result.output
    assert not output.exists() and not output.with_name("m.onnx.learn").exists()


def test_sigterm_stops_the_run_as_ctrl_c_does_and_the_same_command_continues(tmp_path):
    """A background job ignores SIGINT; a scheduler stops with SIGTERM. Either way the run folder keeps
    what was done, and the same command continues from it."""
    import os
    import signal
    import subprocess
    import sys

    _gripper(tmp_path / "g", [2, 3, 4])
    output = tmp_path / "m.onnx"
    command = [sys.executable, "-m", "up_gnnplan.cli", "learn", str(tmp_path / "g" / "domain.pddl"),
               str(tmp_path / "g"), "-o", str(output), "--timeout", "300"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    lines = []
    for line in process.stderr:
        lines.append(line)
        if "epoch" in line:  # training has begun
            process.send_signal(signal.SIGTERM)
            break
    rest = process.communicate(timeout=60)[1]
    assert process.returncode == 130, "".join(lines) + rest
    assert "run the same command to continue" in rest
    run = json.loads((tmp_path / "m.onnx.learn" / "run.json").read_text())
    assert run["labels_done"] and run["spent"] > 0 and "labelling" in run["phases"]
    assert not output.exists()


@pytest.mark.slow  # 25 s: opt-in (--runslow), to keep the default run under 10 minutes
def test_a_run_killed_outright_in_training_continues_with_its_seconds_counted(tmp_path):
    """SIGKILL (or a machine's lease ending) runs no ``finally``: the run folder keeps the time spent as the
    training goes, so that the same command ends within the one budget instead of training it all again."""
    import os
    import signal
    import subprocess
    import sys

    _gripper(tmp_path / "g", [2, 3, 4])
    output, budget = tmp_path / "m.onnx", 24.0
    command = [sys.executable, "-m", "up_gnnplan.cli", "learn", str(tmp_path / "g" / "domain.pddl"),
               str(tmp_path / "g"), "-o", str(output), "--timeout", str(budget)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    lines = []
    for line in process.stderr:
        lines.append(line)
        if sum("epoch" in seen for seen in lines) == 2:  # two epoch lines: at least 2 s of training
            process.send_signal(signal.SIGKILL)
            break
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL, "".join(lines)
    run = json.loads((tmp_path / "m.onnx.learn" / "run.json").read_text())
    assert run["phases"].get("training", 0.0) >= 1.5, run["phases"]
    assert run["spent"] >= sum(run["phases"].values()) - 0.5, run
    start = time.perf_counter()
    continued = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    seconds = time.perf_counter() - start
    assert continued.returncode == 0 and output.is_file(), continued.stderr
    assert "continuing the run" in continued.stderr
    assert seconds <= budget - run["spent"] + 8.0, f"{seconds:.1f} s after {run['spent']:.1f} s spent"


@pytest.mark.slow  # opt-in (--runslow): keeps the default run under 10 minutes
def test_a_continued_run_keeps_its_head_and_batch(tmp_path):
    import shutil

    _gripper(tmp_path / "g", [2, 3, 4])
    args = ["learn", str(tmp_path / "g" / "domain.pddl"), str(tmp_path / "g"), "-o", str(tmp_path / "m.onnx"),
            "--timeout", "15", "--device", "cpu"]
    assert CliRunner().invoke(main, args).exit_code == 0
    work = tmp_path / "m.onnx.learn"
    shutil.copy(work / "run.json", tmp_path / "run.json")  # the finished run's folder, as a stopped one would be
    (tmp_path / "m.onnx").unlink()
    result = CliRunner().invoke(main, [*args, "--timeout", "30", "--head", "logits+value"])
    assert result.exit_code == 2 and "trains logits at batches of 32" in result.output, result.output
    assert not (tmp_path / "m.onnx").exists()


def test_the_network_s_size_is_chosen_recorded_and_kept_by_a_continued_run(tmp_path):
    """``--hidden`` and ``--layers`` size the network (a cheaper policy step on large problems); the model's metadata
    and its run record them, and a continued run refuses another size."""
    _gripper(tmp_path / "g", [2, 3, 4])
    output = tmp_path / "small.onnx"
    args = ["learn", str(tmp_path / "g" / "domain.pddl"), str(tmp_path / "g"), "-o", str(output), "--timeout", "15",
            "--device", "cpu", "--hidden", "8", "--layers", "4"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    meta = _metadata(output)
    assert meta["train_config"]["hidden"] == 8 and meta["train_config"]["layers"] == 4
    recipe = meta["training_record"]["learn"]["recipe"]
    assert recipe["hidden"] == 8 and recipe["layers"] == 4
    output.unlink()
    again = CliRunner().invoke(main, [*args[:-2], "--layers", "6", "--timeout", "30"])
    assert again.exit_code == 2 and "with 8 features and 4 layers" in again.output, again.output
    assert not output.exists()


def test_the_weight_average_follows_the_epochs_and_is_recorded_and_kept_by_a_continued_run(tmp_path):
    """``--ema-epochs N``: the weight average's decay per step gives a time constant of N epochs; the run and the
    model record it, the training uses it, and a continued run refuses another."""
    from up_gnnplan.learn.recipe import choose, config_of, ema_decay

    assert ema_decay(0, 4096, 32) == 0.0
    assert ema_decay(2, 4096, 32) == pytest.approx(1 - 1 / 256)
    labelled = [dict(objects=5, plan_length=8), dict(objects=9, plan_length=14)]
    recipe = choose(600, labelled, [20], ema_epochs=2)
    assert recipe.ema == pytest.approx(ema_decay(2, recipe.epoch_states, recipe.batch_size))
    assert config_of(recipe, seed=0).ema == recipe.ema and choose(600, labelled, [20]).ema == 0.0

    _gripper(tmp_path / "g", [2, 3, 4])
    output = tmp_path / "m.onnx"
    args = ["learn", str(tmp_path / "g" / "domain.pddl"), str(tmp_path / "g"), "-o", str(output), "--timeout", "15",
            "--device", "cpu", "--ema-epochs", "2"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    meta = _metadata(output)
    decay = meta["training_record"]["learn"]["recipe"]["ema"]
    assert 0.0 < decay < 1.0 and meta["train_config"]["ema"] == decay
    output.unlink()
    again = CliRunner().invoke(main, [*args[:-2], "--ema-epochs", "0", "--timeout", "30"])
    assert again.exit_code == 2 and "weight average of decay" in again.output, again.output
    assert not output.exists()


@pytest.mark.parametrize("record, judges, expected", [
    ({"policy_validation": {"solved": 0}}, 4, 0.1),  # no judge problem solved: a tenth for the learned part
    ({"policy_validation": {"solved": 1}}, 4, 0.2),  # one of four: a quarter of the way to the engine's default
    ({"policy_validation": {"solved": 3}}, 4, 0.4),
    ({"policy_validation": {"solved": 4}}, 4, None),  # all solved: the engine's default
    ({"policy_validation": {"solved": 0}, "first_policy_judge": {"value_policy": {"solved": 2}}}, 4, 0.3),
    ({"policy_validation": {"solved": 0}, "first_policy_judge": {"value_policy": {"solved": 4}}}, 4, None),
    ({}, 0, None),  # no judge (a single training problem): nothing to go by
])
def test_the_learned_parts_share_grows_with_the_judge_problems_its_policy_solved(record, judges, expected):
    from up_gnnplan.learn.recipe import WEAK_POLICY_SHARE
    from up_gnnplan.learn.run import _choose_handoff_share
    from up_gnnplan.search.modes import HANDOFF_SHARE

    _choose_handoff_share(record, list(range(judges)))
    assert record.get("handoff_share") == expected
    if expected is not None:
        assert WEAK_POLICY_SHARE <= expected < HANDOFF_SHARE
        solved = max(record["policy_validation"]["solved"],
                     record.get("first_policy_judge", {}).get("value_policy", {}).get("solved", 0))
        assert record["handoff_share_why"] == (f"its greedy policy solved none of its {judges} judge problems"
                                               if not solved else
                                               f"its greedy policy solved {solved} of its {judges} judge problems")


def test_lama_first_plans_the_judge_problems_once_per_run(tmp_path):
    """The ``judge-plans`` phase: LAMA-first's plan for each judge problem, kept in the run folder's ``run.json``."""
    from up_gnnplan.learn.inputs import ProblemFile
    from up_gnnplan.learn.run import _Clock, _judge_plan_stage, _open_run
    from up_gnnplan.search.lama import fast_downward_installed

    if not fast_downward_installed():
        pytest.skip("needs up-fast-downward")
    (four,) = _gripper(tmp_path, [4])
    judges = [ProblemFile(four, 10, "four")]
    run, _ = _open_run(tmp_path / "run", {"domain": "gripper"})
    lines = []
    clock = _Clock(300.0, 0.0, time.perf_counter(), run, tmp_path / "run")
    _judge_plan_stage(tmp_path / "domain.pddl", lines.append, run, clock, judges)
    plan = run.judge_plans["four"]
    assert plan["status"] == "solved" and plan["length"] >= 11, plan  # 4 balls: two trips there, one back
    assert json.loads((tmp_path / "run" / "run.json").read_text())["judge_plans"] == run.judge_plans
    assert lines[0].startswith("LAMA-first on the 1 judge problem(s)") and f"a plan of {plan['length']} steps" in lines[1]


@pytest.mark.parametrize("walks, lengths, expected", [
    ((4, 472), [40, 50, 50, 53], 2.45),  # DriverLog's judge: every problem solved, in long walks
    ((4, 314), [102, 242, 200, 184], 0.43),  # Blocksworld's
    ((3, 472), [40, 50, 50, 53], None),  # a walk failed, its steps per problem unknown: its steps are the limit's
    ((4, 472), [40, 50, None, 53], None),  # LAMA-first found no plan for one in its time
    ((3, 443, [100, 90, None, 110]), [43, 47, 46, 57], 2.04),  # per problem: the three solved against their plans
    ((4, 472, [80, 100, 130, 106]), [40, 50, None, 53], 2.0),  # ... and the three LAMA-first solved
    ((1, 321, [100, None, None, None]), [40, 50, 50, 53], None),  # one problem is too few to go by
])
def test_the_judges_walks_are_measured_against_lama_firsts_plans(walks, lengths, expected):
    from types import SimpleNamespace

    from up_gnnplan.learn.run import _compare_walks

    judges = [SimpleNamespace(name=f"p{i}") for i in range(4)]
    record = {"policy_validation": {"solved": walks[0], "steps": walks[1], **({"walks": walks[2]} if walks[2:] else {})}}
    plans = {p.name: {"status": "solved" if n else "timeout", "length": n} for p, n in zip(judges, lengths)}
    _compare_walks(record, plans, judges)
    assert (record.get("judge_against_lama") or {}).get("ratio") == expected
    if expected is not None and not walks[2:]:
        assert record["judge_against_lama"]["plan_steps"] == sum(lengths)


@pytest.mark.parametrize("solved, ratio, share, factor", [
    (4, 2.45, 0.2, None),  # walks of 2.45x LAMA-first's plans: the step limit tied to FF's estimate, a fifth of the time
    (4, 1.77, 0.2, None),
    (4, 1.0, None, 0.0),  # as long as LAMA-first's plans: trusted, the engine's default share and no FF-relative limit
    (4, None, None, 0.0),  # no LAMA-first plans to go by: trusted as before
    (3, 1.85, 0.2, None),  # three of four, in long walks: a fifth of the time, not the 0.4 of three of four
    (3, 1.0, 0.4, None),
    (1, 2.0, 0.2, None),  # one of four: 0.2 either way
])
def test_a_policy_whose_judge_walks_are_long_is_not_trusted(solved, ratio, share, factor):
    from up_gnnplan.learn.run import _choose_astray_factor, _choose_handoff_share

    record = {"policy_validation": {"solved": solved, "steps": 100}}
    if ratio is not None:
        record["judge_against_lama"] = {"ratio": ratio, "problems": solved}
    _choose_handoff_share(record, list(range(4)))
    _choose_astray_factor(record, list(range(4)))
    assert record.get("handoff_share") == share and record.get("astray_factor") == factor
    if share is not None and ratio is not None and ratio > 1.5 and solved > 1:
        assert record["handoff_share_why"] == (f"its greedy policy's walks on the {solved} judge problems it solved "
                                               f"took {ratio:.2f}x the steps of LAMA-first's plans")


@pytest.mark.parametrize("record, judges, expected", [
    ({"policy_validation": {"solved": 4}}, 4, 0.0),  # every judge problem solved: no FF-relative step limit
    ({"policy_validation": {"solved": 3}}, 4, None),  # one missed: the engine's default
    ({"policy_validation": {"solved": 1}}, 1, None),  # a single judge problem is too little to go by
    ({}, 0, None),
])
def test_a_policy_that_solved_every_judge_problem_is_not_cut_at_ffs_estimate(record, judges, expected):
    from up_gnnplan.learn.recipe import TRUSTED_ASTRAY_FACTOR
    from up_gnnplan.learn.run import _choose_astray_factor

    _choose_astray_factor(record, list(range(judges)))
    assert record.get("astray_factor") == expected
    if expected is not None:
        assert expected == TRUSTED_ASTRAY_FACTOR
        assert record["astray_factor_why"] == f"its greedy policy solved all {judges} judge problems"


@pytest.mark.slow  # 11 s: with --runslow, to keep the default run within its ten minutes
def test_a_value_head_alone_is_learnt_for_the_value_modes_from_another_runs_labels(tmp_path):
    """``--head value``: a value model (no action head), its epochs judged by the greedy value policy and their
    value error; the engine's value modes run it (a value model to ship beside an action model of the domain).
    ``--labels-from`` starts it from another run's labels (here one stopped after labelling), without labelling
    again, their labelling time counted."""
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import OneshotPlanner

    _gripper(tmp_path / "train", [2, 3, 4, 5])
    large = _gripper(tmp_path / "test", [7], seed=100)[0]
    domain, output = tmp_path / "train" / "domain.pddl", tmp_path / "value.onnx"
    args = [str(domain), str(tmp_path / "train"), "--timeout", "15"]
    first = CliRunner().invoke(main, ["learn", *args, "-o", str(tmp_path / "actions.onnx"), "--label-only"])
    assert first.exit_code == 0, first.output
    source = tmp_path / "actions.onnx.learn"
    labelled = json.loads((source / "run.json").read_text())

    result = CliRunner().invoke(main, ["learn", *args, "-o", str(output), "--head", "value", "--seed", "1",
                                       "--labels-from", str(source)])
    assert result.exit_code == 0, result.output
    assert "taken from" in result.output and "\nlabelling " not in result.output
    assert "training rgnn (value)" in result.output and "action error" not in result.output
    assert re.search(r"epoch 1: loss [\d.]+, value error [\d.]+, judge \d/\d", result.output), result.output
    meta = _metadata(output)
    assert meta["heads"]["outputs"] == ["value"] and not meta["heads"].get("action_kind")
    learnt = meta["training_record"]["learn"]
    assert learnt["recipe"]["head"] == "value"
    assert learnt["phases"]["labelling"] == pytest.approx(labelled["phases"]["labelling"], abs=0.05)
    assert set(learnt["data"]["labelled"]) == {k for k, v in labelled["labels"].items() if v["status"] != "not-tried"}
    problem = PDDLReader().parse_problem(str(domain), str(large))
    with OneshotPlanner(name="gnnplan", params={"model": str(output), "mode": "gbfs"}) as planner:
        solved = planner.solve(problem, timeout=60)
    assert solved.status in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY), solved.log_messages

    # Labels of other problems, or of a run still labelling, are refused before any work.
    _gripper(tmp_path / "other", [2, 3])
    other = CliRunner().invoke(main, ["learn", str(tmp_path / "other" / "domain.pddl"), str(tmp_path / "other"),
                                      "-o", str(tmp_path / "o.onnx"), "--timeout", "25", "--labels-from", str(source)])
    assert other.exit_code == 2 and "labelled other problems" in other.output, other.output
    assert not (tmp_path / "o.onnx").exists()


# Gripper problems (balls, seed, mixed): with a judge of a trained-on size, the policy of all labels solves it within
# seconds, as a rule, and is refined; with one of 8 balls it does not, as a rule, and trains on.
REFINED = ((([2, 3, 4, 5, 6], 0, 0), ([6], 50, 1), ([6], 70, 1)), (([2, 3, 4, 5, 6, 7, 8], 0, 0),))


@pytest.mark.parametrize("problems", REFINED, ids=["judge-of-a-trained-size", "larger-judge"])
def test_a_model_of_lama_firsts_labels_is_refined_on_the_optimal_ones_and_the_judge_keeps_the_better(tmp_path,
                                                                                                       problems):
    """Where some problems are labelled along LAMA-first's plans, the last part of the training time trains the chosen
    model on the optimal labels alone, if its policy solved every judge problem (else training on all labels goes
    on); the refined model is kept only where the judge found it better (more solved, or as many in fewer steps),
    and both verdicts are recorded. (Gripper's labels are all expanded: the run folder of a --label-only run says
    the largest trained-on problem was labelled along LAMA-first's plan.)"""
    for balls, seed, mixed in problems:  # the 6-ball ones of mixed rooms: other problems of the same size
        _gripper(tmp_path / "train", balls, seed, mixed)
    domain, output = tmp_path / "train" / "domain.pddl", tmp_path / "g.onnx"
    args = ["learn", str(domain), str(tmp_path / "train"), "-o", str(output), "--timeout", "36"]
    first = CliRunner().invoke(main, [*args, "--label-only"])
    assert first.exit_code == 0, first.output
    from up_gnnplan.learn.inputs import check_problems, judge_split, problem_files
    from up_gnnplan.learn.recipe import held_out

    trained, _ = judge_split(check_problems(domain, problem_files(domain, [tmp_path / "train"])))
    kept_out = held_out(trained)
    largest = [p for p in trained if p not in kept_out][-1]  # the largest trained on
    folder = tmp_path / "g.onnx.learn"
    run = json.loads((folder / "run.json").read_text())
    run["labels"][largest.name]["status"] = "satisficing-plan"
    (folder / "run.json").write_text(json.dumps(run))

    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "then refined on the optimal labels alone of 4 problem(s)" in result.output
    learnt = _metadata(output)["training_record"]
    optimal = [p.name for p in trained if p not in kept_out and p is not largest]
    assert learnt["learn"]["recipe"]["refine"] == optimal  # not the held-out one, nor LAMA-first's
    refinement = learnt["learn"]["refinement"]
    if "why" in refinement:  # the policy of all labels solved no judge problem: it trained on
        assert refinement["kept"] == "all labels" and "solved 0 of 1 judge problems" in refinement["why"]
        assert refinement["all_labels"]["solved"] == 0 and "no refinement on the optimal labels" in result.output
        assert "training on all labels goes on" in result.output and "refining" not in result.output
        assert learnt["learn"]["judge"]["epochs"] >= refinement["all_labels"]["epochs"]  # the same training, on
        assert not (folder / "refine.safetensors").exists()
        return
    assert re.search(r"refining the chosen epoch \(\d+: judge 1/1 in \d+ steps\) on the optimal labels alone",
                     result.output), result.output
    whole, refined = refinement["all_labels"], refinement["refined"]
    assert whole["solved"] == 1
    better = (refined["solved"], -refined["steps"]) > (whole["solved"], -whole["steps"])
    assert refinement["kept"] == ("refined" if better else "all labels")
    kept = refined if better else whole
    assert (learnt["learn"]["judge"]["solved"], learnt["learn"]["judge"]["steps"]) == (kept["solved"], kept["steps"])
    assert "the refined one is kept" in result.output if better else "the model of all labels is kept" in result.output


def test_the_refinement_needs_lama_firsts_labels_enough_optimal_ones_and_a_judge():
    from up_gnnplan.learn.recipe import MIN_REFINE_PROBLEMS, REFINE_SHARE, choose, refine_problems

    def labelled(*statuses):
        return [{"name": f"p{i}", "status": s, "objects": 5 + i, "plan_length": 10} for i, s in enumerate(statuses)]

    mixed = labelled("expanded", "expanded", "optimal-plan", "optimal-plan", "optimal-plan", "satisficing-plan")
    assert refine_problems(mixed, held_out_names=["p3"]) == ["p0", "p1", "p2", "p4"]
    assert refine_problems(mixed, held_out_names=["p3", "p4"]) == []  # 3 optimal ones left: too few
    assert MIN_REFINE_PROBLEMS == 4
    assert refine_problems(mixed, judges=0) == []  # nothing to choose by
    assert refine_problems(labelled(*["optimal-plan"] * 6)) == []  # every label optimal already
    recipe = choose(600, mixed, [20], held_out_names=["p3"])
    assert recipe.refine == ["p0", "p1", "p2", "p4"] and recipe.refine_share == REFINE_SHARE
    assert choose(600, mixed, [20], head="value").refine == []  # a value model is not refined
    assert choose(600, labelled(*["expanded"] * 6), [20]).refine_share == 0.0


def test_problems_of_two_folders_that_share_file_names_keep_apart(tmp_path):
    """``learn DOMAIN a/ b/`` where both folders hold ``p0.pddl``: each problem gets a name of its own (its labels
    file, its lines), ``a-p0`` and ``b-p0``, instead of the second overwriting the first's labels."""
    from up_gnnplan.learn.inputs import check_problems, problem_files

    for folder, balls in (("a", [2, 3]), ("b", [4, 5])):
        for i, path in enumerate(_gripper(tmp_path / folder, balls)):
            path.rename(path.with_name(f"p{i}.pddl"))
    domain = tmp_path / "a" / "domain.pddl"
    checked = check_problems(domain, problem_files(domain, [tmp_path / "a", tmp_path / "b"]))
    assert [p.name for p in checked] == ["a-p0", "a-p1", "b-p0", "b-p1"]  # by size, as before
    alone = check_problems(domain, problem_files(domain, [tmp_path / "a"]))
    assert [p.name for p in alone] == ["p0", "p1"]  # the file's stem where it is unique


def test_a_model_that_solved_no_judge_problem_gets_a_hint_read_from_its_run():
    from up_gnnplan.learn.run import _hint

    judge = {"problems": ["p8", "p9"], "objects": [40, 44], "solved": 0}
    few = {"labelled": {f"p{i}": {} for i in range(4)}, "skipped": {"p5": {"status": "too-large"},
                                                                    "p6": {"status": "unsolvable"}}}
    hint = _hint(few, judge, {})
    assert "1 training problem(s) were not labelled in the time" in hint and "4 labelled problem(s) are few" in hint
    many = {"labelled": {f"p{i}": {} for i in range(20)}, "skipped": {}}
    assert "nearer the judge problems' size (up to 44 objects)" in _hint(many, judge, {})
    assert _hint(many, {**judge, "solved": 1}, {}) is None and _hint(many, {"problems": []}, {}) is None
    # every judge problem solved, in walks much longer than LAMA-first's plans: they wander
    solved = {**judge, "solved": 2}
    assert _hint(many, solved, {"judge_against_lama": {"ratio": 1.2}}) is None
    hint = _hint(many, solved, {"judge_against_lama": {"ratio": 2.45}})
    assert "took 2.45x the steps of LAMA-first's plans" in hint and "(up to 44 objects)" in hint
    # some solved, in long walks: the hint fires as the lower share does (DriverLog: 3 of 4 at 1.63x)
    hint = _hint(many, {**judge, "solved": 1}, {"judge_against_lama": {"ratio": 1.63}})
    assert "walks on the 1 of 2 judge problems it solved took 1.63x" in hint


def test_labels_optimal_from_a_run_of_labels_auto_leave_lama_firsts_plans_out(tmp_path):
    """``--labels optimal --labels-from RUN`` of a ``--labels auto`` run: its expanded and optimal labels are taken,
    those along LAMA-first's plans are left out as ``--labels optimal`` would have left them (too large for an
    optimal plan in their share), and its labelling time still counts; other --labels stay refused."""
    from up_gnnplan.learn import run as learn_run

    key = {"domain": "d.pddl:0", "problems": ["p1.pddl:1", "p2.pddl:2", "p3.pddl:3"], "seed": 0}
    source = tmp_path / "auto.learn"
    (source / "labels").mkdir(parents=True)
    statuses = {"p1": "expanded", "p2": "optimal-plan", "p3": "satisficing-plan"}
    for name in statuses:
        (source / "labels" / f"{name}.npz").write_bytes(b"labels of " + name.encode())
    record = learn_run._Run(learn_run.RUN_FORMAT, dict(key, labels="auto"), spent=40.0,
                            labels={n: {"status": s, "states": 5} for n, s in statuses.items()}, labels_done=True,
                            phases={"checking": 1.0, "labelling": 39.0})
    learn_run._save_run(source, record)

    said = []
    work = tmp_path / "optimal.learn"
    run, fresh = learn_run._open_run(work, dict(key, labels="optimal"))
    learn_run._take_labels(source, work, run, fresh, said.append)
    assert {n: s["status"] for n, s in run.labels.items()} == {"p1": "expanded", "p2": "optimal-plan",
                                                              "p3": "too-large"}
    assert "left out with --labels optimal" in run.labels["p3"]["note"]
    assert sorted(p.name for p in (work / "labels").iterdir()) == ["p1.npz", "p2.npz"]
    assert run.spent == 40.0 and run.labels_done
    assert said == [f"labels of 2 problem(s) taken from {source} (1 labelled along LAMA-first's plans left out: "
                    "--labels optimal); their 40 s of labelling count against this run's time"]

    other, fresh = learn_run._open_run(tmp_path / "satisficing.learn", dict(key, labels="satisficing"))
    with pytest.raises(learn_run.LearnError, match="with --labels optimal their optimal labels alone"):
        learn_run._take_labels(source, tmp_path / "satisficing.learn", other, fresh, said.append)
