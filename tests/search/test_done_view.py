"""The action policy's view of a large state without its done objects (:mod:`up_gnnplan.search.done_view`).

Which objects are done in hand-built Blocksworld and Transport states (a tower built from its goal table block up,
a block on its goal block that must move all the same, delivered packages), the smaller state's atoms and actions
renumbered, the actions it hides ranked last, and a walk on a generated task of 120 blocks with the shipped model
whose plan is valid and whose steps were scored on the view.
"""

from __future__ import annotations

import numpy as np
import pytest

from up_gnnplan.datasets.generators import generate
from up_gnnplan.encodings.actions import ActionInput
from up_gnnplan.problems import Task
from up_gnnplan.search import Status, action_policy_rollout
from up_gnnplan.search.common import Inputs
from up_gnnplan.search.done_view import MIN_OBJECTS, DoneView, scores_with_hidden
from up_gnnplan.states.actions import ActionRows
from search_cases import assert_valid_up_plan  # noqa: E402

BLOCKS = """(define (domain blocksworld) (:requirements :strips)
  (:predicates (clear ?x) (on-table ?x) (arm-empty) (holding ?x) (on ?x ?y))
  (:action pickup :parameters (?x) :precondition (and (clear ?x) (on-table ?x) (arm-empty))
    :effect (and (holding ?x) (not (clear ?x)) (not (on-table ?x)) (not (arm-empty))))
  (:action putdown :parameters (?x) :precondition (holding ?x)
    :effect (and (clear ?x) (arm-empty) (on-table ?x) (not (holding ?x))))
  (:action stack :parameters (?x ?y) :precondition (and (clear ?y) (holding ?x))
    :effect (and (arm-empty) (clear ?x) (on ?x ?y) (not (clear ?y)) (not (holding ?x))))
  (:action unstack :parameters (?x ?y) :precondition (and (on ?x ?y) (clear ?x) (arm-empty))
    :effect (and (holding ?x) (clear ?y) (not (on ?x ?y)) (not (clear ?x)) (not (arm-empty)))))
"""

# a b c d e on the table in goal order, f on e: built but for its top; g on h where h must move (its goal: on i);
# 12 blocks more on the table, their goal met (on-table) but clear: shown, as the top of a tower is.
TOWER = [f"x{i}" for i in range(12)]
BLOCKS_PROBLEM = f"""(define (problem towers) (:domain blocksworld)
  (:objects a b c d e f g h i {' '.join(TOWER)})
  (:init (arm-empty) (on-table a) (on b a) (on c b) (on d c) (on e d) (on f e) (clear f)
         (on-table h) (on g h) (clear g) (on-table i) (clear i)
         {' '.join(f'(on-table {x}) (clear {x})' for x in TOWER)})
  (:goal (and (on-table a) (on b a) (on c b) (on d c) (on e d) (on f e) (on g h) (on h i)
              {' '.join(f'(on-table {x})' for x in TOWER)})))
"""

TRANSPORT = """(define (domain transport) (:requirements :strips :typing)
  (:types location package truck)
  (:predicates (road ?a ?b - location) (at ?p - package ?l - location) (truck-at ?t - truck ?l - location)
               (in ?p - package ?t - truck))
  (:action drive :parameters (?t - truck ?a ?b - location) :precondition (and (truck-at ?t ?a) (road ?a ?b))
    :effect (and (truck-at ?t ?b) (not (truck-at ?t ?a))))
  (:action load :parameters (?t - truck ?p - package ?l - location) :precondition (and (truck-at ?t ?l) (at ?p ?l))
    :effect (and (in ?p ?t) (not (at ?p ?l))))
  (:action unload :parameters (?t - truck ?p - package ?l - location) :precondition (and (truck-at ?t ?l) (in ?p ?t))
    :effect (and (at ?p ?l) (not (in ?p ?t)))))
"""
DELIVERED = [f"d{i}" for i in range(8)]
TRANSPORT_PROBLEM = f"""(define (problem deliveries) (:domain transport)
  (:objects l1 l2 l3 - location {' '.join(DELIVERED)} p q - package t - truck)
  (:init (road l1 l2) (road l2 l1) (road l2 l3) (road l3 l2) (truck-at t l1) (at p l1) (in q t)
         {' '.join(f'(at {d} l3)' for d in DELIVERED)})
  (:goal (and (at p l3) (at q l2) {' '.join(f'(at {d} l3)' for d in DELIVERED)})))
"""


def _task(tmp_path, domain: str, problem: str) -> Task:
    (tmp_path / "domain.pddl").write_text(domain)
    (tmp_path / "problem.pddl").write_text(problem)
    return Task.from_files(tmp_path / "domain.pddl", tmp_path / "problem.pddl")


def _done_names(task) -> set[str]:
    view = DoneView(task, Inputs(task).atoms)
    done, _ = view.done(Inputs(task)([task.initial_state()])[0])
    return {task.object_names[i] for i in np.flatnonzero(done)}


def test_a_tower_built_from_its_table_block_is_done_but_for_its_top_two_and_what_stands_on_a_block_to_move(tmp_path):
    task = _task(tmp_path, BLOCKS, BLOCKS_PROBLEM)
    # f is clear (the goal does not ask it): shown; e, which f stands on, is shown with it (f's place stays whole).
    # g is on its goal block h, which must move (on h i): g must move too. i is named by an open goal literal.
    assert _done_names(task) == {"a", "b", "c", "d"}


def test_delivered_packages_are_done_and_the_map_the_truck_and_open_packages_stay(tmp_path):
    task = _task(tmp_path, TRANSPORT, TRANSPORT_PROBLEM)
    assert _done_names(task) == set(DELIVERED)


def test_the_view_renumbers_the_objects_left_and_hides_the_actions_that_name_done_ones(tmp_path, monkeypatch):
    import up_gnnplan.search.done_view as done_view

    monkeypatch.setattr(done_view, "MIN_OBJECTS", 0)
    task = _task(tmp_path, TRANSPORT, TRANSPORT_PROBLEM)
    inputs, rows = Inputs(task), ActionRows(task)
    state = task.initial_state()
    actions = state.generate_applicable_actions()
    full = inputs([state])[0]
    view, part, mask = DoneView(task, inputs.atoms)(full, ActionInput(*rows(actions)))
    assert view.num_objects == task.num_objects - len(DELIVERED)
    names = [name for name in task.object_names if name not in DELIVERED]  # the view's objects, in order
    assert view.goal.as_strings(task.signature, names) == ["at(p,l3)", "at(q,l2)"]
    assert view.atoms.as_strings(task.signature, names) == sorted(
        atom for atom in full.atoms.as_strings(task.signature, task.object_names)
        if not set(atom[atom.index("(") + 1:-1].split(",")) & set(DELIVERED))
    assert mask.all() and len(part) == len(actions)  # no applicable action names a delivered package here


def test_hidden_actions_rank_below_every_scored_one():
    scores = scores_with_hidden(np.array([3.0, -2.0]), np.array([False, True, False, True]))
    assert scores[1] == 3.0 and scores[3] == -2.0 and scores[0] < -2.0 and scores[2] < -2.0


def test_small_tasks_are_scored_whole(tmp_path):
    task = _task(tmp_path, TRANSPORT, TRANSPORT_PROBLEM)
    assert task.num_objects < MIN_OBJECTS
    inputs = Inputs(task)
    state = task.initial_state()
    actions = ActionInput(*ActionRows(task)(state.generate_applicable_actions()))
    assert DoneView(task, inputs.atoms)(inputs([state])[0], actions) is None


@pytest.mark.parametrize("hide_done", [True, False])
def test_a_walk_of_120_blocks_with_the_shipped_model_is_valid_and_scored_on_the_view(tmp_path, hide_done):
    from up_gnnplan.models_zoo import find_model
    from up_gnnplan.runtime import load_value_function

    (problem,) = generate("blocksworld", tmp_path, count=1, seed=3, blocks=120)
    task = Task.from_files(tmp_path / "domain.pddl", problem)
    model = load_value_function(find_model(task.signature, None))
    result = action_policy_rollout(task, model.scorer, max_steps=2000, hide_done=hide_done)
    assert result.status is Status.SOLVED
    assert_valid_up_plan(task, result)
    assert ("scored without their done objects" in result.message) is hide_done


def test_objects_of_one_type_joined_by_static_atoms_are_one_group(tmp_path):
    task = _task(tmp_path, TRANSPORT, TRANSPORT_PROBLEM.replace("(road l2 l3) (road l3 l2)", ""))
    group = DoneView(task, Inputs(task).atoms).group
    of = {name: int(group[i]) for i, name in enumerate(task.object_names)}
    assert of["l1"] == of["l2"] != of["l3"]  # the road between l2 and l3 left out
    assert len({of[name] for name in [*DELIVERED, "p", "q", "t"]}) == len(DELIVERED) + 3
