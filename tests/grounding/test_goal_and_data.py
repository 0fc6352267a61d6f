"""Quantified goals, the grounding encoding and V*(s; G) data, on a coloured Blocks domain (no model)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from unified_planning.io import PDDLReader, PDDLWriter

from tests.grounding.cases import COLOURS, DOMAIN, GROUND, PROBLEMS, SHARED, TABLE, problem
from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.store import Dataset
from up_gnnplan.grounding.dataset import (UNSATISFIABLE_FACTOR, UNSATISFIABLE_LABEL, UNSATISFIABLE_MARGIN,
                                          GroundingDataOptions, build_grounding_dataset)
from up_gnnplan.grounding.encoding import (BINDING, CONSTANT, DISTINCT, VARIABLE, GroundingInputs, domain_signature,
                                           grounding_signature, is_grounding_signature)
from up_gnnplan.grounding.goal import GoalGroundingError, QuantifiedGoal, static_facts, static_fluents
from up_gnnplan.problems.bridge import Task
from up_gnnplan.problems.loading import load_pddl
from up_gnnplan.states.atoms import StateAtoms


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("colour-blocks")
    (folder / "domain.pddl").write_text(DOMAIN)
    for name, text in {**PROBLEMS, "ground": GROUND, "shared": SHARED}.items():
        (folder / f"{name}.pddl").write_text(text)
    return folder


def load(files, name):
    return load_pddl(files / "domain.pddl", files / f"{name}.pddl")


def test_the_goal_is_read_into_ground_part_variables_atoms_and_inequalities(files):
    goal = QuantifiedGoal.of(load(files, "tower"))
    assert [str(g) for g in goal.ground] == ["clear(a)"]
    assert [v.name for v in goal.variables] == ["x1", "x2", "x3"]
    assert sorted(map(str, goal.atoms)) == ["(blue ?x2)", "(blue ?x3)", "(on ?x1 ?x2)", "(on ?x2 ?x3)", "(red ?x1)"]
    assert len(goal.distinct) == 3 and goal.is_quantified and not goal.is_ground
    assert not QuantifiedGoal.of(load(files, "ground")).variables


@pytest.mark.parametrize("goal, message", [
    ("(exists (?x) (or (red ?x) (blue ?x)))", "is not supported by goal grounding"),
    ("(exists (?x) (and (red ?x) (not (clear ?x))))", "is not supported by goal grounding"),
    ("(and (exists (?x) (red ?x)) (exists (?x) (blue ?x)))", "quantified in more than one 'exists'"),
])
def test_goals_outside_the_fragment_are_refused_with_the_part_named(tmp_path, goal, message):
    (tmp_path / "d.pddl").write_text(DOMAIN)
    (tmp_path / "p.pddl").write_text(problem("p", "(clear a) (ontable a) (handempty) (red a)", goal, "a"))
    with pytest.raises(GoalGroundingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        QuantifiedGoal.of(load_pddl(tmp_path / "d.pddl", tmp_path / "p.pddl"))


def test_binding_substitutes_and_static_violations_are_named(files):
    prob = load(files, "red-on-blue")
    goal = QuantifiedGoal.of(prob)
    fluents = static_fluents(prob)
    facts = static_facts(prob, fluents)
    assert fluents == {"red", "blue"}
    x1, x2 = goal.variables
    a, c = prob.object("a"), prob.object("c")
    valid = goal.bind(x1, a).bind(x2, c)
    assert valid.is_ground and valid.violations(facts, fluents) == []
    assert valid.describe_binding() == "?x1=a, ?x2=c"
    wrong = goal.bind(x1, c).bind(x2, c)
    assert wrong.violations(facts, fluents) == ["(not (= c c))", "(red c) is static and false"]
    with pytest.raises(GoalGroundingError, match="not a free variable"):
        valid.bind(x1, a)


def test_ground_goals_write_plain_pddl_and_read_back(files):
    prob = load(files, "tower")
    goal = QuantifiedGoal.of(prob)
    partial = goal.bind(goal.variables[0], prob.object("a"))
    text = PDDLWriter(partial.with_goal_of(prob)).get_problem()
    assert "exists" in text and "(red a)" in text
    x2, x3 = partial.variables
    ground = partial.bind(x2, prob.object("c")).bind(x3, prob.object("d"))
    text = PDDLWriter(ground.with_goal_of(prob)).get_problem()
    assert "exists" not in text and "(on c d)" in text and "(= " not in text  # true inequalities are dropped
    reread = PDDLReader().parse_problem_string(PDDLWriter(prob).get_domain(), text)
    assert len(reread.goals) == 1


def test_the_encoding_adds_variables_as_objects_with_the_grounding_atoms(files):
    task = Task(load(files, "red-on-blue"))
    inputs = GroundingInputs(task)
    signature = inputs.signature
    assert is_grounding_signature(signature) and not is_grounding_signature(task.signature)
    assert domain_signature(signature) == task.signature
    goal = QuantifiedGoal.of(task.up_problem)
    state = inputs.state_input(StateAtoms(task).of(task.initial_state()), goal)
    names = inputs.object_names(goal)
    assert names == ["a", "b", "c", "d", "?x1", "?x2"] and state.num_objects == 6
    atoms = state.atoms.as_strings(signature, names)
    assert f"{VARIABLE}(?x1)" in atoms and f"{CONSTANT}(d)" in atoms and f"{CONSTANT}(?x1)" not in atoms
    assert sum(a.startswith(BINDING) for a in atoms) == 8  # untyped: every object may stand for each variable
    assert {f"{DISTINCT}(?x1,?x2)", f"{DISTINCT}(?x2,?x1)"} <= set(atoms)
    assert state.goal.as_strings(signature, names) == ["blue(?x2)", "on(?x1,?x2)", "red(?x1)"]


def _optimal_cost(domain_file, prob, goal) -> float:
    labelled = expand(Task(goal.with_goal_of(prob)))
    return float(labelled.value[labelled.initial])


def test_vstar_of_the_quantified_goal_is_the_least_over_its_bindings(files):
    """The semantics of section 4.3: a state satisfies G when some binding does."""
    prob = load(files, "tower")
    goal = QuantifiedGoal.of(prob)
    quantified = _optimal_cost(files, prob, goal)
    costs = []
    for objects in itertools.product(prob.all_objects, repeat=len(goal.variables)):
        bound = goal
        for variable, obj in zip(goal.variables, objects):
            bound = bound.bind(variable, obj)
        if not bound.violations(static_facts(prob, {"red", "blue"}), {"red", "blue"}):
            costs.append(_optimal_cost(files, prob, bound))
    assert quantified == min(costs) == 4.0  # stack c on d, then a (red, clear) on c: 4 actions


def test_a_binding_that_adds_nothing_is_made_only_where_every_atom_is_already_asked(files):
    prob = load(files, "shared")
    goal = QuantifiedGoal.of(prob)
    x1, x2, x3 = goal.variables
    c, d = prob.object("c"), prob.object("d")
    assert goal.entailed(prob.all_objects) is None  # nothing bound: every binding asks something
    closed, made = goal.bind(x1, c).closed(prob.all_objects)
    assert made == [(x2, c), (x3, c)] and closed.is_ground  # (blue c) (clear c) already asked for ?x1
    assert goal.bind(x3, d).entailed(prob.all_objects) is None  # ?x1 would add (clear d)
    # The closed goal means what the partly bound one means: the same V* from the initial state.
    assert _optimal_cost(files, prob, closed) == _optimal_cost(files, prob, goal.bind(x1, c)) == 0.0
    # An inequality with the bound object keeps the variable free; a ground atom of the goal can stand for one.
    def problem_of(files, goal):
        (files / "entailed.pddl").write_text(problem("entailed", TABLE + " " + COLOURS, goal))
        return load(files, "entailed")

    apart = QuantifiedGoal.of(problem_of(files, "(exists (?x1 ?x2) (and (blue ?x1) (clear ?x1) (blue ?x2) (clear ?x2) "
                                              "(not (= ?x1 ?x2))))"))
    assert apart.bind(apart.variables[0], c).entailed(prob.all_objects) is None
    held = QuantifiedGoal.of(problem_of(files, "(and (clear c) (exists (?x1) (and (blue ?x1) (clear ?x1))))"))
    assert held.entailed(prob.all_objects) is None  # (blue c) is not asked for: ?x1 = c adds it
    both = QuantifiedGoal.of(problem_of(files, "(and (blue c) (clear c) (exists (?x1) (and (blue ?x1) (clear ?x1))))"))
    assert [(v.name, o.name) for v, o in both.closed(prob.all_objects)[1]] == [("x1", "c")]
    # An inequality with a free variable, or a relation between variables, keeps a variable free.
    tower = QuantifiedGoal.of(load(files, "tower"))
    for variable in tower.variables:
        assert tower.bind(variable, c).closed(prob.all_objects)[1] == []


@pytest.fixture(scope="module")
def data(files):
    problems = [files / "red-on-blue.pddl", files / "tower.pddl"]
    return build_grounding_dataset(files / "domain.pddl", problems, GroundingDataOptions(goals_per_problem=10,
                                                                                           states_per_goal=30))


def test_the_dataset_holds_goal_variants_with_exact_values(files, data, tmp_path):
    assert data.signature == grounding_signature(Task(load(files, "tower")).signature)
    names = [p.name for p in data.problems]
    assert names[0] == "red-on-blue#0" and len(names) == 20
    first = data.problems[0]
    assert first.stats["binding"] == "(nothing bound)" and first.stats["initial_value"] == 0.0  # b is on d already
    # A variant's stored initial value is V* of that goal from the initial state.
    prob = load(files, "tower")
    goal = QuantifiedGoal.of(prob)
    by_name = {v.name: v for v in goal.variables}
    for index, record in enumerate(data.problems):
        if not record.name.startswith("tower") or record.stats["unsatisfiable_states"]:
            continue
        variant = goal
        for pair in filter(None, record.stats["binding"].split(", ")) if record.stats["binding"] != "(nothing bound)" else []:
            name, obj = pair.split("=")
            variant = variant.bind(by_name[name.lstrip("?")], prob.object(obj))
        assert record.stats["initial_value"] == _optimal_cost(files, prob, variant), record.stats
    copy = Dataset.load(data.save(tmp_path / "g.npz"))
    assert len(copy) == len(data) and copy.signature == data.signature


def test_unreachable_goal_variants_get_a_large_finite_cost_and_their_label(data):
    unsatisfiable = data.label == UNSATISFIABLE_LABEL
    assert unsatisfiable.any() and (~unsatisfiable).any()
    assert np.all(data.value[unsatisfiable] >= UNSATISFIABLE_MARGIN)
    assert np.all(np.isfinite(data.value)) and not data.dead_end.any()  # all of it is trained on
    # The initial state of an unreachable variant costs twice the goal as written, plus the margin.
    written = {p.name.split("#")[0]: p.stats["initial_value"] for p in data.problems if p.name.endswith("#0")}
    for record in data.problems:
        if record.stats["unsatisfiable_states"]:
            base = written[record.name.split("#")[0]]
            assert record.stats["initial_value"] == UNSATISFIABLE_FACTOR * base + UNSATISFIABLE_MARGIN


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_valid_share_says_how_often_a_bound_variable_keeps_the_static_atoms(files, share):
    prob = load(files, "tower")
    fluents = static_fluents(prob)
    facts = static_facts(prob, fluents)
    data = build_grounding_dataset(files / "domain.pddl", [files / "tower.pddl"],
                                   GroundingDataOptions(goals_per_problem=12, states_per_goal=2, valid_share=share))
    goal = QuantifiedGoal.of(prob)
    by_name = {v.name: v for v in goal.variables}
    broken = 0
    for record in data.problems[1:]:  # the goal variants with something bound
        variant = goal
        for pair in record.stats["binding"].split(", "):
            name, obj = pair.split("=")
            variant = variant.bind(by_name[name.lstrip("?")], prob.object(obj))
        broken += bool(variant.violations(facts, fluents))
    if share == 1.0:
        assert broken == 0  # every bound variable got an object that keeps its colour and the inequalities
    else:
        assert broken >= len(data.problems[1:]) // 2  # drawn among all four blocks: most break a colour


def test_a_goal_without_quantified_variables_is_refused_for_grounding_data(files):
    with pytest.raises(GoalGroundingError, match="no existentially quantified variable"):
        build_grounding_dataset(files / "domain.pddl", [files / "ground.pddl"])


def test_mode_ground_params_are_checked_when_the_engine_is_built():
    from unified_planning.exceptions import UPUsageError

    from up_gnnplan.plugins.engine import GnnplanEngine

    engine = GnnplanEngine(mode="ground", static_filter="false", planner="gnnplan", max_groundings=2, binding_beam=4,
                           binding_entailment="false")
    assert engine.grounding == {"grounding_model": None, "static_filter": False, "planner": "gnnplan",
                                "max_groundings": 2, "binding_beam": 4, "binding_entailment": False}
    for bad in ({"static_filter": "maybe"}, {"planner": "lama"}, {"max_groundings": 0}, {"binding_beam": 0},
                {"binding_entailment": "sometimes"}):
        with pytest.raises(UPUsageError, match=f"param '{next(iter(bad))}' must be"):
            GnnplanEngine(mode="ground", **bad)
