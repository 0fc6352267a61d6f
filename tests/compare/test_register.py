"""``gnnplan compare --register MODULE`` and ``--engine-param``: engines of other packages, with params per domain.

The engine is a tiny one written by the test into a folder put on the Python path: breadth-first
search on pymimir (GBFS on a constant value), refusing the problem unless its ``model`` file
says "ok", so the records show which model each domain was given.
"""

from __future__ import annotations

import sys
import textwrap

import pytest
from click.testing import CliRunner

from up_gnnplan.compare import (
    EngineParam,
    EngineSpec,
    Task,
    compare,
    file_problems,
    make_tasks,
    parse_engine,
    parse_engine_param,
    record_key,
)
from up_gnnplan.data import example

MODULE = "gnnplan_test_tiny_engine"
ENGINE = "tiny-bfs"
SOURCE = textwrap.dedent(f'''
    """A tiny UP engine for the tests: breadth-first search on pymimir; params {{"model": FILE}}."""
    import numpy as np
    from unified_planning.engines import LogLevel, LogMessage, PlanGenerationResult, PlanGenerationResultStatus
    from unified_planning.engines.engine import Engine
    from unified_planning.engines.mixins.oneshot_planner import OneshotPlannerMixin
    from unified_planning.environment import get_environment

    from up_gnnplan.plugins.engine import GnnplanEngine


    class TinyEngine(Engine, OneshotPlannerMixin):
        def __init__(self, model=None):
            Engine.__init__(self)
            OneshotPlannerMixin.__init__(self)
            self.model = model

        @property
        def name(self):
            return "{ENGINE}"

        supported_kind = staticmethod(GnnplanEngine.supported_kind)
        supports = staticmethod(GnnplanEngine.supports)

        def _solve(self, problem, heuristic=None, timeout=None, output_stream=None):
            from up_gnnplan.problems import Task
            from up_gnnplan.search.gbfs import gbfs

            if self.model is None or open(self.model).read().strip() != "ok":
                return PlanGenerationResult(PlanGenerationResultStatus.UNSUPPORTED_PROBLEM, None, self.name, {{}},
                                            [LogMessage(LogLevel.ERROR, f"not my model: {{self.model}}")])
            task = Task(problem)
            found = gbfs(task, lambda states: np.zeros(len(states)), time_limit=timeout, inputs=lambda states: states)
            return PlanGenerationResult(PlanGenerationResultStatus.SOLVED_SATISFICING, task.to_up_plan(found.actions),
                                        self.name, {{"expanded": str(found.expanded), "evaluated": str(found.evaluated)}})


    if "{ENGINE}" not in get_environment().factory.engines:
        get_environment().factory.add_engine("{ENGINE}", __name__, "TinyEngine")
''')


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The engine module and two model files, the folder on ``sys.path`` for this module's tests."""
    folder = tmp_path_factory.mktemp("engines")
    (folder / f"{MODULE}.py").write_text(SOURCE)
    (folder / "ok.txt").write_text("ok\n")
    (folder / "bad.txt").write_text("bad\n")
    sys.path.insert(0, str(folder))
    yield folder
    sys.path.remove(str(folder))
    sys.modules.pop(MODULE, None)


def blocksworld(*names):
    return file_problems(example("blocksworld"), [example("blocksworld", n) for n in names or ["p02.pddl"]])


def test_parse_engine_param():
    assert parse_engine_param("wl-goose:model=blocksworld=bw.json") == EngineParam("wl-goose", "model", "bw.json",
                                                                                   "blocksworld")
    assert parse_engine_param("wl-goose:model=models/bw.json") == EngineParam("wl-goose", "model", "models/bw.json")
    assert parse_engine_param("gnnplan:gbfs:threads=2") == EngineParam("gnnplan:gbfs", "threads", "2")
    assert parse_engine_param("x:model=some/dir=1/m.json").domain is None  # a '/' before '=': a path, not a domain
    for bad in ("model=bw.json", "wl-goose:model", ":model=x", "wl-goose:=x"):
        with pytest.raises(ValueError, match="ENGINE:KEY=VALUE"):
            parse_engine_param(bad)


def test_params_per_domain_in_tasks_and_keys(tmp_path):
    model = tmp_path / "m.json"
    model.write_text("{}")
    specs = [parse_engine("gnnplan:gbfs"), EngineSpec("fast-downward")]  # not parsed: it may not be installed
    params = [parse_engine_param(p) for p in ("fast-downward:x=all", f"fast-downward:x=blocksworld={model}",
                                              "gnnplan:threads=2")]
    problems = blocksworld() + file_problems(example("gripper"), [example("gripper", "p01.pddl")])
    tasks = {(t.engine, t.domain): t for t in make_tasks(specs, problems, 5, None, params)}
    assert tasks["fast-downward", "blocksworld"].params == (("x", str(model.resolve())),)  # the domain's own value
    assert tasks["fast-downward", "gripper"].params == (("x", "all"),)
    assert tasks["gnnplan:gbfs", "gripper"].engine_call() == ("gnnplan", {"mode": "gbfs", "threads": "2"})
    task = tasks["fast-downward", "gripper"]
    assert Task(**{**task.__dict__, "params": [["x", "all"]]}) == task  # as read back from JSON
    # Records written before engine params existed keep their key: resume still finds them.
    plain = make_tasks(specs[1:], problems[:1], 5)[0]
    old = {k: v for k, v in plain.__dict__.items() if k != "params"}
    assert record_key(old) == plain.key


def test_registered_engine_runs_in_each_task_with_its_model_per_domain(folder, tmp_path):
    problems = blocksworld() + file_problems(example("gripper"), [example("gripper", "p01.pddl")])
    outcome = compare([ENGINE], problems, tmp_path / "out", timeout=20, progress=False, plots=False, register=[MODULE],
                      engine_params=[f"{ENGINE}:model={folder / 'bad.txt'}",
                                     f"{ENGINE}:model=blocksworld={folder / 'ok.txt'}"])
    records = {r["domain"]: r for r in outcome.records}
    assert records["blocksworld"]["status"] == "solved_satisficing" and records["blocksworld"]["valid"] is True
    assert records["blocksworld"]["expanded"] > 0
    assert [list(p) for p in records["blocksworld"]["params"]] == [["model", str(folder / "ok.txt")]]
    assert records["gripper"]["status"] == "unsupported_problem" and "not my model" in records["gripper"]["error"]
    assert "| blocksworld | 1 | 1 |" in outcome.summary and "| gripper | 1 | 0 |" in outcome.summary


def test_cli_register_and_engine_param(folder, tmp_path):
    from up_gnnplan.cli import main

    out = tmp_path / "out"
    args = ["compare", str(example("blocksworld")), str(example("blocksworld", "p02.pddl")), "--register", MODULE,
            "--engine", ENGINE, "--engine-param", f"{ENGINE}:model={folder / 'ok.txt'}", "--timeout", "20",
            "-o", str(out), "--no-plots"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "| blocksworld | 1 | 1 |" in (out / "summary.md").read_text()


@pytest.mark.parametrize("extra, message", [
    (["--register", "no_such_module_for_gnnplan"], "cannot import the engine module 'no_such_module_for_gnnplan'"),
    (["--engine-param", "wl-goose:model=x.json"], "names no engine of the comparison"),
    (["--engine-param", "model=x.json"], "ENGINE:KEY=VALUE"),
])
def test_cli_refuses_bad_modules_and_params(tmp_path, extra, message):
    from up_gnnplan.cli import EXIT_INPUT_ERROR, main

    args = ["compare", str(example("blocksworld")), str(example("blocksworld", "p02.pddl")), "--engine", "gnnplan",
            "-o", str(tmp_path / "out"), *extra]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == EXIT_INPUT_ERROR and message in result.output, result.output


def test_wl_goose_peer_trains_solves_and_refuses_other_domains(tmp_path):
    """The benchmark peer itself (benchmarks/goose), when the ``peer`` extra is installed."""
    pytest.importorskip("wlplan")
    pytest.importorskip("sklearn")
    import numpy as np
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner

    from benchmarks.goose.engine import LinearHeuristic, WLGooseEngine
    from benchmarks.goose.features import embed, load_model, task_converter, wl_domain
    from benchmarks.goose.train import TrainConfig, train_file
    from up_gnnplan.datasets.build import BuildOptions, build_dataset
    from up_gnnplan.problems import Task as MimirTask
    from up_gnnplan.problems.loading import load_pddl

    data = build_dataset(example("blocksworld"), [example("blocksworld", n) for n in ("p02.pddl", "p03.pddl")],
                         BuildOptions(method="expand")).save(tmp_path / "bw.npz")
    model = tmp_path / "bw.json"
    record = train_file(data, model, TrainConfig(), log=lambda text: None)
    assert record["fit"]["pairs"] > 0 and record["fit"]["ranked_correctly"] > 0.9
    # A batch of states gets the values the features and weights give one by one.
    problem = load_pddl(example("blocksworld"), example("blocksworld", "p04.pddl"))
    task = MimirTask(problem)
    generator, weights, meta = load_model(model)
    domain = wl_domain(meta["domain"], task.signature)
    converter, atoms = task_converter(domain, task)
    root = task.initial_state()
    states = [converter.state(atoms.fluent(s)) for s in [root, *(a.apply(root) for a in root.generate_applicable_actions())]]
    batch = LinearHeuristic(generator, converter.problem)(states)
    assert np.allclose(batch, embed(generator, domain, converter.problem, states) @ weights)
    with OneshotPlanner(name="wl-goose", params={"model": str(model)}) as planner:
        solved = planner.solve(problem, timeout=30)
        other = planner.solve(load_pddl(example("gripper"), example("gripper", "p01.pddl")), timeout=30)
        stopped = planner.solve(problem, timeout=0)
    assert solved.status == Status.SOLVED_SATISFICING and solved.plan.actions
    assert other.status == Status.UNSUPPORTED_PROBLEM and "predicates differ" in other.log_messages[0].message
    assert stopped.status == Status.TIMEOUT and stopped.plan is None
    with pytest.raises(Exception, match="not a WL-GOOSE model"):
        WLGooseEngine(model=str(data))
