"""Training data for goal grounding: V*(s; G) of states under partially bound existential goals.

Funkquist, Ståhlberg & Geffner (2024), section 7: the targets are the optimal costs V*(s; G) of
states ``s`` for goals ``G`` in which some variables are bound and the others quantified; a state
satisfies ``G`` when some binding of its free variables makes every atom true. For each problem
(with an existential goal) we draw goal variants, the goal as written and goals with a random
subset of its variables bound, each to a random object of the right type, with probability
``valid_share`` (half by default) one that breaks no static atom or inequality, so the model sees
valid, invalid and unreachable bindings. A binder with the static filter never asks the model about a
statically invalid binding: a higher ``valid_share`` spends the data on the bindings it does weigh. For
each variant the state space is expanded by pymimir (the quantified goal compiled as in
:mod:`up_gnnplan.problems.bridge`, so the goal test is exact) and some of its states are kept: drawn
per variant, or with ``shared_states`` drawn once per problem and labelled under every variant, so
that each kept state compares all the variants (the ranking loss,
:class:`~up_gnnplan.training.ranking.VariantRankingObjective`).

A goal no state reaches (an invalid colour, two variables on one object under an inequality, a
tower that must contain itself) has no finite V*. The paper gives such pairs "a large cost (but not
infinity)" without saying which. A fixed constant fits badly: 100 dominated a squared loss on small
instances (training MAE 3.9 against 1.0 with 20 on the same data, and the cost-0 binding ranked
last), while a small one is below the true costs of larger instances, where an invalid binding would
then look better than a valid one. So the cost scales with the state: ``2 V*(s; G) + 10``, where
``G`` is the problem's goal as written (always reachable), twice the best any binding can do from
``s`` plus a margin. Those states get label 3 (``unsatisfiable-goal``) in the dataset and are
counted in the problem's ``stats``, so that training learns to rank such bindings last.

Each (problem, goal variant) is one problem record of an ordinary dataset over the grounding
signature (:mod:`up_gnnplan.grounding.encoding`): its objects are the constants and the free
variables, its static atoms carry the ``ground:`` structure. ``gnnplan train`` trains on it like on
any dataset.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from up_gnnplan import __version__
from up_gnnplan.datasets.build import _domain_name as domain_name
from up_gnnplan.datasets.expansion import expand
from up_gnnplan.datasets.store import Dataset, ProblemRecord, file_sha256
from up_gnnplan.errors import StateLimitExceeded
from up_gnnplan.grounding.encoding import GroundingInputs, grounding_signature
from up_gnnplan.grounding.goal import GoalGroundingError, QuantifiedGoal, static_facts, static_fluents
from up_gnnplan.states.atoms import Atoms, StateAtoms

UNSATISFIABLE_FACTOR, UNSATISFIABLE_MARGIN = 2.0, 10.0  # unreachable goal: 2 V*(s; G) + 10 (see above)
UNSATISFIABLE_LABEL = 3  # the dataset label of such states


@dataclass(frozen=True)
class GroundingDataOptions:
    """How many goal variants and states to draw per problem."""

    goals_per_problem: int = 16  # goal variants per problem, the goal as written included
    states_per_goal: int = 48  # states kept per variant (the initial state always among them)
    max_states: int = 20_000  # state limit of one expansion
    seed: int = 0
    valid_share: float = 0.5  # chance that a bound variable gets an object breaking no static atom or inequality
    shared_states: bool = False  # the same sampled states under every variant of a problem (for ranking them)


def goal_variants(goal: QuantifiedGoal, objects, facts, fluents, count: int, rng: random.Random,
                  valid_share: float = 0.5) -> list[QuantifiedGoal]:
    """Return ``count`` distinct variants of ``goal``: itself first, then random partial bindings."""
    variants, seen = [goal], {()}
    for _ in range(20 * count):
        if len(variants) >= count:
            break
        variant = goal
        chosen = rng.sample(list(goal.variables), rng.randint(1, len(goal.variables)))
        for variable in chosen:
            candidates = variant.candidates(variable, objects)
            if rng.random() < valid_share:
                valid = [o for o in candidates if not variant.bind(variable, o).violations(facts, fluents)]
                candidates = valid or candidates
            variant = variant.bind(variable, rng.choice(candidates))
        key = tuple(sorted((v.name, o.name) for v, o in variant.binding))
        if key not in seen:
            seen.add(key)
            variants.append(variant)
    return variants


def build_grounding_dataset(domain, problems, options: GroundingDataOptions | None = None, progress=None) -> Dataset:
    """Label states under goal variants of ``problems`` (each with an existential goal) into one dataset."""
    from up_gnnplan.problems.bridge import Task
    from up_gnnplan.problems.loading import check_domain_names, load_pddl, source_of

    problems = list(problems)
    check_domain_names(domain, problems)  # every pair, before any labelling
    options = options or GroundingDataOptions()
    rng = random.Random(options.seed)
    dataset = None
    for index, problem_file in enumerate(problems):
        if progress is not None:
            progress.start(Path(problem_file).name, index)
        problem = load_pddl(domain, problem_file)
        goal = QuantifiedGoal.of(problem)
        if not goal.variables:
            raise GoalGroundingError(f"{problem_file}: the goal has no existentially quantified variable; "
                                     "goal grounding learns from problems whose goal has some")
        fluents = static_fluents(problem)
        facts = static_facts(problem, fluents)
        base = Task(problem, source_of(problem))
        inputs = GroundingInputs(base)
        if dataset is None:
            dataset = Dataset(domain_name(domain), grounding_signature(base.signature), package_version=__version__,
                              action_signature=base.action_signature, types=base.types)
        reference = _expand(base, options, problem_file)
        static = StateAtoms(base).static
        shared = _sample(reference, options, rng) if options.shared_states else None
        for k, variant in enumerate(goal_variants(goal, base.objects, facts, fluents, options.goals_per_problem, rng,
                                                     options.valid_share)):
            if progress is not None and hasattr(progress, "phase"):
                progress.phase(f"goal variant {k + 1}: {variant.describe_binding()}")
            if variant.violations(facts, fluents):
                labelled = None  # statically false: no expansion needed, nothing is reachable
            else:
                labelled = _expand(Task(variant.with_goal_of(problem), source_of(problem)), options, problem_file)
            if labelled is not None and not np.isfinite(labelled.initial_value):
                labelled = None  # unreachable from the initial state (the domains here are reversible): all of it
            states, value, steps, is_goal, best = (_pick(reference, labelled, options, rng) if shared is None
                                                   else _label(reference, labelled, shared))
            unsatisfiable = ~np.isfinite(value)
            value[unsatisfiable] = UNSATISFIABLE_FACTOR * best[unsatisfiable] + UNSATISFIABLE_MARGIN
            structure, positive, negative = inputs.goal_atoms(variant)
            record = ProblemRecord(
                name=f"{Path(problem_file).stem}#{k}",
                domain_file=str(domain), problem_file=str(problem_file),
                domain_sha256=file_sha256(Path(domain)), problem_sha256=file_sha256(Path(problem_file)),
                object_names=inputs.object_names(variant),
                static=Atoms.concat([_canonical(inputs.remap(static)), structure], inputs.width),
                goal=positive, negative_goal=negative, method="expanded",
                stats={"states": len(states), "binding": variant.describe_binding(),
                       "free_variables": len(variant.variables), "unsatisfiable_states": int(unsatisfiable.sum()),
                       "initial_value": float(value[0]), "objects": base.num_objects},
            )
            dataset.add_problem(record, [inputs.remap(s) for s in states], value, steps, np.zeros(len(states), bool),
                                is_goal, np.where(unsatisfiable, UNSATISFIABLE_LABEL, 0).astype(np.uint8))
    if dataset is None:
        raise ValueError("no problem files given")
    return dataset


def _expand(task, options: GroundingDataOptions, where):
    try:
        return expand(task, options.max_states)
    except StateLimitExceeded:
        raise StateLimitExceeded(f"{where}: more than {options.max_states} states; goal-grounding data needs "
                                 "problems whose state space can be expanded (raise --max-states or use smaller "
                                 "problems)") from None


def _pick(reference, labelled, options: GroundingDataOptions, rng: random.Random):
    """Return (fluent atoms, V*, steps, is_goal, V* under the goal as written) of the sampled states,
    the initial state first.

    ``reference`` is the expansion under the goal as written (its states are those of every
    variant); ``labelled`` the variant's own expansion, or None when no state reaches the variant.
    """
    source = labelled or reference
    initial = source.initial
    # pymimir's state order (and the atom order inside a state) differs between runs: sample from a
    # canonical order, so that a seed gives the same dataset.
    others = sorted((i for i in range(len(source)) if i != initial), key=lambda i: _key(source.states[i]))
    keep = [initial] + rng.sample(others, min(len(others), options.states_per_goal - 1))
    states = [_canonical(source.states[i]) for i in keep]
    if labelled is None:
        n = len(keep)
        return (states, np.full(n, np.inf), np.full(n, -1, np.int32), np.zeros(n, bool),
                reference.value[keep].copy())
    best = reference.value[[_row_of(reference, state) for state in states]]
    return states, source.value[keep].copy(), source.steps[keep].copy(), source.is_goal[keep].copy(), best


def _sample(reference, options: GroundingDataOptions, rng: random.Random) -> list[Atoms]:
    """Return the fluent atoms of ``states_per_goal`` states of a problem's space, the initial state first."""
    others = sorted((i for i in range(len(reference)) if i != reference.initial), key=lambda i: _key(reference.states[i]))
    keep = [reference.initial] + rng.sample(others, min(len(others), options.states_per_goal - 1))
    return [_canonical(reference.states[i]) for i in keep]


def _label(reference, labelled, states: list[Atoms]):
    """:func:`_pick`'s figures for given ``states`` (``--shared-states``: the same ones under every variant)."""
    best = reference.value[[_row_of(reference, state) for state in states]]
    if labelled is None:
        n = len(states)
        return list(states), np.full(n, np.inf), np.full(n, -1, np.int32), np.zeros(n, bool), best.copy()
    rows = [_row_of(labelled, state) for state in states]
    return (list(states), labelled.value[rows].copy(), labelled.steps[rows].copy(), labelled.is_goal[rows].copy(),
            best)


def _row_of(labelled, state) -> int:
    """Return the row of ``state`` (fluent atoms) in another expansion of the same problem."""
    rows = getattr(labelled, "_rows_by_key", None)
    if rows is None:
        rows = {_key(s): i for i, s in enumerate(labelled.states)}
        labelled._rows_by_key = rows
    return rows[_key(state)]


def _canonical(atoms: Atoms) -> Atoms:
    """Return ``atoms`` sorted by predicate, then arguments."""
    order = np.lexsort(np.column_stack([atoms.pred[:, None], atoms.args]).T[::-1])
    return Atoms(atoms.pred[order], atoms.args[order])


def _key(atoms: Atoms) -> bytes:
    canonical = _canonical(atoms)
    return np.column_stack([canonical.pred[:, None], canonical.args]).tobytes()
