"""The ``gnnplan`` command line: dataset, generate, error reporting, and no torch at startup."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner
from pddl_cases import PROBLEMS, TYPED_BLOCKS, fixture

from up_gnnplan.cli import EXIT_INPUT_ERROR, EXIT_UNSOLVABLE, main
from up_gnnplan.data import example
from up_gnnplan.datasets.store import Dataset


def run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    # Nothing may escape as a Python exception (SystemExit is click's normal exit).
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"gnnplan {' '.join(map(str, args))} raised {result.exception!r}\n{result.output}")
    assert "Traceback" not in result.output
    return result


def test_dataset_writes_file_and_prints_summary(tmp_path):
    out = tmp_path / "blocks.npz"
    result = run("dataset", example("blocksworld"), example("blocksworld", "p03.pddl"), example("blocksworld", "p02.pddl"), "-o", out)
    assert result.exit_code == 0, result.output
    assert out.is_file()
    assert f"{out}: 27 states from 2 problem(s) of domain 'blocksworld', 0 dead end(s), V* from 0 to 8" in result.output
    assert "p03: 22 states (expanded), 3 objects, V*(initial) = 6" in result.output
    assert "p02: 5 states (expanded), 2 objects, V*(initial) = 4" in result.output
    data = Dataset.load(out)
    assert len(data) == 27 and [p.name for p in data.problems] == ["p03", "p02"]


def test_dataset_warns_when_the_time_limit_left_successors_out(tmp_path):
    problem = [example("blocksworld"), example("blocksworld", "p04.pddl"), "--method", "optimal"]
    result = run("dataset", *problem, "--successor-time-limit", "0.000001", "-o", tmp_path / "t.npz")
    assert result.exit_code == 0, result.output
    assert "left out by the time limit" in result.output and "--successor-expansion-limit" in result.output
    result = run("dataset", *problem, "--successor-expansion-limit", "2", "-o", tmp_path / "e.npz")
    assert result.exit_code == 0 and "left out by the time limit" not in result.output, result.output
    stats = Dataset.load(tmp_path / "e.npz").problems[0].stats
    assert stats["left_out_by_time_limit"] == 0 and stats["left_out_by_expansion_limit"] > 0


def test_dataset_with_action_costs(tmp_path):
    out = tmp_path / "costs.npz"
    result = run("dataset", *PROBLEMS["costs"], "-o", out)
    assert result.exit_code == 0, result.output
    assert "V*(initial) = 6" in result.output
    assert np.array_equal(np.sort(Dataset.load(out).value), [0.0, 2.0, 4.0, 6.0])


@pytest.mark.parametrize(
    "files, names",
    [
        ((TYPED_BLOCKS, "MISSING"), ["MISSING", "no such file"]),
        ((TYPED_BLOCKS, fixture("blocksworld", "unknown-predicate.pddl")), ["unknown-predicate.pddl, line 6"]),
        ((TYPED_BLOCKS, fixture("blocksworld", "unclosed-paren.pddl")), ["unclosed-paren.pddl", "never closed"]),
        (
            (fixture("unsupported", "numeric-domain.pddl"), fixture("unsupported", "numeric-p01.pddl")),
            ["numeric-domain.pddl", "numeric"],
        ),
        ((TYPED_BLOCKS, fixture("blocksworld", "empty-goal.pddl")), ["empty-goal.pddl", "goal is empty"]),
        (PROBLEMS["oneway-unsolvable"], ["unsolvable.pddl", "unsolvable", "--allow-unsolvable"]),
    ],
    ids=["missing", "unknown-predicate", "unbalanced", "unsupported", "empty-goal", "unsolvable"],
)
def test_dataset_bad_input_is_one_error_line(files, names, tmp_path):
    files = [tmp_path / f if f == "MISSING" else f for f in files]
    out = tmp_path / "out.npz"
    result = run("dataset", *files, "-o", out)
    expected = EXIT_UNSOLVABLE if "unsolvable" in names else EXIT_INPUT_ERROR
    assert result.exit_code == expected and expected in (2, 3)
    # One error line, the last one; before it at most the phases of the work (expanding, ...).
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("error: ") and sum(line.startswith("error: ") for line in lines) == 1
    assert all(": expanding" in line or ": searching" in line for line in lines[:-1]), lines
    for name in names:
        assert name in result.output
    assert not out.exists()


def test_dataset_allow_unsolvable_keeps_only_dead_ends(tmp_path):
    out = tmp_path / "dead.npz"
    result = run("dataset", *PROBLEMS["oneway-unsolvable"], "--allow-unsolvable", "-o", out)
    assert result.exit_code == 0, result.output
    assert "1 dead end(s)" in result.output and "V*(initial) = inf" in result.output
    assert Dataset.load(out).dead_end.all()


def test_dataset_typing_quirk_warns_and_succeeds(tmp_path):
    """End to end in a fresh interpreter, so that the warning reaches stderr as users see it."""
    domain = tmp_path / "domain.pddl"
    domain.write_text(fixture("strips-typing", "domain.pddl").read_text())
    args = ["dataset", domain, fixture("strips-typing", "p01.pddl"), "-o", tmp_path / "q.npz"]
    done = subprocess.run(
        [sys.executable, "-m", "up_gnnplan.cli", *map(str, args)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert f"warning: {domain}: types are used but ':typing' is not declared" in done.stderr
    assert "Traceback" not in done.stderr
    assert "V*(initial) = 4" in done.stdout


def test_generate_navig_writes_files(tmp_path):
    out = tmp_path / "navig"
    result = run("generate", "navig-xy", "-o", out, "--count", "2", "--seed", "3", "-p", "width=3", "-p", "height=3")
    assert result.exit_code == 0, result.output
    problems = sorted(p.name for p in out.glob("p*.pddl"))
    assert (out / "domain.pddl").is_file() and len(problems) == 2
    assert f"wrote {out / 'domain.pddl'} and 2 problem(s)" in result.output
    # The generated files are usable: they load and have a solvable initial state.
    data = run("dataset", out / "domain.pddl", *sorted(out.glob("p*.pddl")), "-o", tmp_path / "navig.npz")
    assert data.exit_code == 0, data.output


def test_generate_unknown_domain(tmp_path):
    result = run("generate", "no-such-domain", "-o", tmp_path / "x")
    assert result.exit_code == 2 and result.output.startswith("error: ") and "navig-xy" in result.output


def test_generate_bad_parameter(tmp_path):
    result = run("generate", "navig-xy", "-o", tmp_path / "x", "-p", "width")
    assert result.exit_code == 2 and "NAME=VALUE" in result.output


NO_TORCH = textwrap.dedent(
    """
    import sys
    import up_gnnplan, up_gnnplan.cli
    assert "torch" not in sys.modules, "import up_gnnplan imported torch"
    from click.testing import CliRunner
    runner = CliRunner()
    for args in [["--help"], ["--version"]] + [[name, "--help"] for name in sorted(up_gnnplan.cli.main.commands)]:
        result = runner.invoke(up_gnnplan.cli.main, args)
        assert result.exit_code == 0, (args, result.output)
        assert "torch" not in sys.modules, f"gnnplan {' '.join(args)} imported torch"
    print("ok")
    """
)


def test_import_and_help_do_not_import_torch():
    done = subprocess.run([sys.executable, "-c", NO_TORCH], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_required_one_liner_does_not_import_torch():
    code = "import up_gnnplan, up_gnnplan.cli, sys; assert 'torch' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_architecture_choices_and_their_options_come_from_the_registry():
    from up_gnnplan.cli import main
    from up_gnnplan.models import ARCHITECTURES

    params = {p.name: p for p in main.commands["train"].params}
    assert list(params["architecture"].type.choices) == list(ARCHITECTURES)
    # Each option's help names the architectures that take it.
    for option in ("heads", "dropout", "aggregation", "t", "decompose_higher_arity"):
        users = [k for k, a in ARCHITECTURES.items() if option in a.options + a.encoding_options]
        assert users and f"--arch {', '.join(users)}" in params[option].help, option


def test_ploi_refuses_a_ternary_predicate_and_names_the_option_that_splits_it(tmp_path):
    pytest.importorskip("torch")
    assert run("generate", "vacuum", "-o", tmp_path, "--count", 1, "--seed", 1, "-p", "locations=4",
               "-p", "robots=1").exit_code == 0
    data = tmp_path / "vacuum.npz"
    problem = next(p for p in tmp_path.glob("*.pddl") if p.name != "domain.pddl")
    assert run("dataset", tmp_path / "domain.pddl", problem, "-o", data).exit_code == 0
    options = ["--arch", "ploi", "--hidden", 8, "--layers", 2, "--max-epochs", 1, "--epoch-states", 32]
    refused = run("train", data, "-o", tmp_path / "m.pt", *options)
    assert refused.exit_code != 0 and "adjacent/3" in refused.output and "--decompose-higher-arity" in refused.output
    trained = run("train", data, "-o", tmp_path / "m.pt", *options, "--decompose-higher-arity")
    assert trained.exit_code == 0, trained.output
    exported = run("export", tmp_path / "m.pt", "-o", tmp_path / "m.onnx")  # with its torch/onnxruntime parity check
    assert exported.exit_code == 0, exported.output
    from up_gnnplan.runtime import OnnxValueFunction

    assert OnnxValueFunction(tmp_path / "m.onnx").encoding.decompose_higher_arity


# -- one dialect: streams, plan files, errors, exit codes, option names ---------------------------------

def test_solve_prints_the_plan_on_stdout_and_the_summary_on_stderr(tmp_path):
    result = run("solve", "--example", "blocksworld/p04.pddl", "--timeout", 60)
    assert result.exit_code == 0, result.output
    plan = result.stdout.splitlines()
    assert plan[-1].startswith("; cost = ") and plan[-1].endswith(" (unit cost)"), result.stdout
    assert all(line.startswith("(") for line in plan[:-1]) and int(plan[-1].split()[3]) == len(plan) - 1
    assert "plan validated" in result.stderr and "plan validated" not in result.stdout
    assert ", found by action-policy, model blocks.onnx" in result.stderr, result.stderr  # who found the plan
    path = tmp_path / "p04.plan"
    result = run("solve", "--example", "blocksworld/p04.pddl", "--timeout", 60, "--plan-file", path)
    assert result.exit_code == 0 and result.stdout == "", result.output
    assert path.read_text().splitlines()[-1].endswith(" (unit cost)")


def test_solve_verbose_prints_the_engines_log_as_it_happens_on_stderr():
    quiet = run("solve", "--example", "blocksworld/p04.pddl", "--timeout", 60)
    result = run("solve", "-v", "--example", "blocksworld/p04.pddl", "--timeout", 60)
    assert result.exit_code == 0, result.output
    assert result.stdout == quiet.stdout  # the plan alone
    log = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert any(" info: model blocks.onnx " in line for line in log), result.stderr
    assert any(" info: action-policy: solved after " in line for line in log), result.stderr
    seconds = [float(line[1:line.index(" s]")]) for line in log]
    assert seconds == sorted(seconds)  # each line stamped with the solve's clock
    assert "info:" not in quiet.stderr


def test_plan_files_say_general_cost_where_actions_cost_other_than_one():
    from unified_planning.io import PDDLReader

    from up_gnnplan.problems.loading import load_pddl
    from up_gnnplan.problems.plans import plan_text

    problem = load_pddl(*PROBLEMS["costs"])
    walked = PDDLReader().parse_plan_string(problem, "(walk s m1)\n(walk m1 m2)\n(walk m2 g)\n")
    assert plan_text(problem, walked).splitlines() == ["(walk s m1)", "(walk m1 m2)", "(walk m2 g)",
                                                       "; cost = 6 (general cost)"]


def test_files_given_with_example_are_a_usage_error(tmp_path):
    for args in (["solve", example("blocksworld"), example("blocksworld", "p04.pddl"), "--example", "gripper"],
                 ["dataset", example("blocksworld"), example("blocksworld", "p02.pddl"), "--example", "gripper",
                  "-o", tmp_path / "d.npz"]):
        result = run(*args)
        assert result.exit_code == EXIT_INPUT_ERROR and "not both" in result.output, result.output


def test_every_error_is_one_lowercase_error_line_usage_errors_included():
    for args in (["solve", "--bogus"], ["solve", "--timeout", "x", "a", "b"], ["no-such-command"],
                 ["solve", "--mode", "gbfs", "--fallback", "model", "a", "b"]):
        result = run(*args)
        assert result.exit_code == EXIT_INPUT_ERROR, (args, result.output)
        assert "Error:" not in result.output and [line for line in result.output.splitlines()
                                                  if line.startswith("error: ")], (args, result.output)
    result = run("solve", "--mode", "gbfs", "--fallback", "model", "a", "b")
    assert "--fallback: modes auto, ground only" in result.output


def test_exit_codes_are_named_and_listed_in_the_help():
    from up_gnnplan.cli import EXIT_LIMIT, EXIT_OK

    help_text = run("--help").output
    for code in (EXIT_OK, EXIT_INPUT_ERROR, EXIT_UNSOLVABLE, EXIT_LIMIT):
        assert f"  {code} " in help_text, help_text


def test_renamed_options_still_work_with_a_warning_and_not_beside_their_new_name():
    result = run("solve", "--example", "blocksworld/p04.pddl", "--memory", 4000)
    assert result.exit_code == 0 and "warning: --memory is deprecated; use --memory-mb" in result.stderr, result.output
    both = run("solve", "--example", "blocksworld/p04.pddl", "--memory", 4000, "--memory-mb", 4000)
    assert both.exit_code == EXIT_INPUT_ERROR and "not both" in both.output, both.output
    assert run("solve", "--example", "blocksworld/p04.pddl", "--memory-mb", 10).exit_code == EXIT_INPUT_ERROR
    for old, new in (("--beam", "--binding-beam"), ("--entailment", "--binding-entailment")):
        value = ["2"] if old == "--beam" else []
        both = run("ground", old, *value, new, *value, "domain.pddl", "p.pddl")
        assert both.exit_code == EXIT_INPUT_ERROR and f"give {new} or {old}, not both" in both.output, both.output


def test_the_same_concept_has_one_option_name_everywhere():
    from up_gnnplan.cli import main

    def options(command):
        return {opt for p in main.commands[command].params if not getattr(p, "hidden", False) for opt in p.opts}

    for command in ("solve", "compare", "train", "learn"):
        assert "--timeout" in options(command), command
    for command in ("solve", "compare", "dataset", "learn"):
        assert "--memory-mb" in options(command), command
    for command in ("solve", "models"):
        assert "--device" in options(command), command
    assert {"--binding-beam", "--binding-entailment"} <= options("solve") & options("ground")
    for old in ("--memory", "--max-seconds", "--minutes", "--beam", "--entailment"):
        assert all(old not in options(command) for command in main.commands), old
