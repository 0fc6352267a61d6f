"""Check that a UP problem lies inside the PDDL fragment up-gnnplan supports.

Supported: STRIPS with (hierarchical) typing, negative preconditions and goals, equality,
disjunctive, existential and universal preconditions (``or``, ``imply``, ``exists``, ``forall``:
pymimir compiles them into actions with more parameters and derived atoms, Fast Downward into split
operators and axioms), existential goals, conditional and universally quantified effects
(``when``, ``forall`` in effects), derived predicates (``:derived``; read from files by pymimir, as
UP's reader does not parse them), and non-negative action costs given by constants or by static
numeric fluents (``(increase (total-cost) (road-length ?a ?b))``). Fast Downward's LM-cut takes
neither conditional effects nor axioms, so the labeller's optimal plans come from A* with h^max or
blind A* there (:func:`up_gnnplan.learn.labels.optimal_fallback`). A goal conjunct with ``or``,
``imply``, ``forall`` or ``exists`` becomes a derived predicate (:mod:`up_gnnplan.problems.goal_rules`
for files, the bridge for UP problems), which the models cannot see. Everything else outside the
fragment is refused with the feature's PDDL name and the file it came from.
"""

from __future__ import annotations

from up_gnnplan.errors import ProblemLoadError, UnsupportedFeatureError

# UP problem-kind features we accept as they are.
_ALLOWED = {
    "ACTION_BASED",
    "FLAT_TYPING",
    "HIERARCHICAL_TYPING",
    "NEGATIVE_CONDITIONS",
    "EQUALITIES",
    "EXISTENTIAL_CONDITIONS",
    "DISJUNCTIVE_CONDITIONS",
    "UNIVERSAL_CONDITIONS",
    "CONDITIONAL_EFFECTS",
    "FORALL_EFFECTS",
    "ACTIONS_COST",
    "PLAN_LENGTH",
    "STATIC_FLUENTS_IN_ACTIONS_COST",
    "INT_NUMBERS_IN_ACTIONS_COST",
    "REAL_NUMBERS_IN_ACTIONS_COST",
    # Static cost fluents defined only where used (``road-length`` for linked cities only):
    # any other numeric fluent is refused below, and an action whose cost is undefined is
    # not applicable (PDDL 2.1 semantics, which pymimir follows).
    "UNDEFINED_INITIAL_NUMERIC",
}
# Numeric fluents are accepted only when they are static and feed action costs alone.
_NUMERIC = {"NUMERIC_FLUENTS", "INT_FLUENTS", "REAL_FLUENTS"}

# How to name a UP feature for a PDDL user.
_PDDL_NAMES = {
    "CONDITIONAL_EFFECTS": "conditional effects (when)",
    "FORALL_EFFECTS": "universally quantified effects (forall)",
    "CONTINUOUS_TIME": "durative actions (:durative-actions)",
    "DISCRETE_TIME": "durative actions (:durative-actions)",
    "INTERMEDIATE_CONDITIONS_AND_EFFECTS": "durative actions (:durative-actions)",
    "TIMED_EFFECTS": "timed initial literals",
    "TIMED_GOALS": "timed goals",
    "NUMERIC_FLUENTS": "numeric fluents (:numeric-fluents)",
    "INT_FLUENTS": "numeric fluents (:numeric-fluents)",
    "REAL_FLUENTS": "numeric fluents (:numeric-fluents)",
    "FLUENTS_IN_ACTIONS_COST": "action costs that change during the plan",
    "INCREASE_EFFECTS": "numeric effects (increase)",
    "DECREASE_EFFECTS": "numeric effects (decrease)",
    "STATIC_FLUENTS_IN_NUMERIC_ASSIGNMENTS": "numeric effects",
    "FLUENTS_IN_NUMERIC_ASSIGNMENTS": "numeric effects",
    "OVERSUBSCRIPTION": "soft goals (oversubscription)",
    "MAKESPAN": "makespan metric",
    "FINAL_VALUE": "numeric metric (minimize/maximize an expression)",
    "SIMULATED_EFFECTS": "simulated effects",
    "STATE_INVARIANTS": "state invariants",
    "TRAJECTORY_CONSTRAINTS": "trajectory constraints",
}


def _describe(feature: str) -> str:
    return _PDDL_NAMES.get(feature, feature.lower().replace("_", " "))


def _action_costs(problem):
    """Return the action-cost expressions of the problem's metric, or an empty dict."""
    from unified_planning.model.metrics import MinimizeActionCosts

    for metric in problem.quality_metrics:
        if isinstance(metric, MinimizeActionCosts):
            return {action: metric.get_action_cost(action) for action in problem.actions}
    return {}


def has_unit_costs(problem) -> bool:
    """Return whether every action costs 1 (no action-cost metric, or all costs the constant 1)."""
    costs = _action_costs(problem)
    return all(c is not None and c.is_constant() and c.constant_value() == 1 for c in costs.values())


def min_action_cost(problem) -> float:
    """Return a lower bound on the cost of any ground action (0 when none can be given)."""
    costs = _action_costs(problem)
    if not costs:
        return 1.0
    bounds = []
    for cost in costs.values():
        if cost is None:
            return 0.0
        if cost.is_constant():
            bounds.append(float(cost.constant_value()))
        elif cost.is_fluent_exp():
            name = cost.fluent().name
            values = [
                float(v.constant_value())
                for f, v in problem.explicit_initial_values.items()
                if f.is_fluent_exp() and f.fluent().name == name and v.is_constant()
            ]
            bounds.append(min(values, default=0.0))
        else:
            return 0.0
    return max(0.0, min(bounds, default=1.0))


def _negative_costs(problem) -> list[str]:
    """Return descriptions of action costs that can be negative."""
    found = []
    costs = _action_costs(problem)
    for action, cost in costs.items():
        if cost is None:
            continue
        if cost.is_constant():
            if cost.constant_value() < 0:
                found.append(f"action '{action.name}' costs {cost.constant_value()}")
        else:
            # Static fluent costs: check every initial value of the fluents involved.
            names = {f.fluent().name for f in _fluent_expressions(cost)}
            for fluent_expr, value in problem.explicit_initial_values.items():
                if fluent_expr.is_fluent_exp() and fluent_expr.fluent().name in names:
                    if value.is_constant() and value.constant_value() < 0:
                        found.append(f"{fluent_expr} = {value.constant_value()} (cost of '{action.name}')")
    return found


def _fluent_expressions(expression):
    stack, found = [expression], []
    while stack:
        node = stack.pop()
        if node.is_fluent_exp():
            found.append(node)
        stack.extend(node.args)
    return found


def check_supported(problem, where: str = "<UP problem>", kind=None) -> None:
    """Raise :class:`UnsupportedFeatureError` unless ``problem`` (of ``kind``, if known) is in the supported fragment."""
    features = {str(f) for f in (kind or problem.kind).features}
    unsupported = sorted({_describe(f) for f in features - _ALLOWED - _NUMERIC})
    if unsupported:
        raise UnsupportedFeatureError(unsupported, where)
    if features & _NUMERIC:
        cost_fluents = {
            f.fluent().name for cost in _action_costs(problem).values() if cost is not None for f in _fluent_expressions(cost)
        }
        modified = {
            effect.fluent.fluent().name for action in problem.actions for effect in action.effects
        }
        numeric = {f.name for f in problem.fluents if not f.type.is_bool_type()}
        misused = sorted(n for n in numeric if n not in cost_fluents or n in modified)
        if misused:
            unsupported.append("numeric fluents (:numeric-fluents): " + ", ".join(misused))
    if unsupported:
        raise UnsupportedFeatureError(unsupported, where)
    negative = _negative_costs(problem)
    if negative:
        raise UnsupportedFeatureError(["negative action costs: " + "; ".join(negative)], where)
    if not problem.goals:
        raise ProblemLoadError(f"{where}: the goal is empty, so there is nothing to plan or learn")


def check_supported_text(domain, problem, where: tuple):
    """Raise :class:`UnsupportedFeatureError` unless the files read as ``domain`` and ``problem``
    (:class:`~up_gnnplan.problems.syntax.DomainSyntax`, :class:`~up_gnnplan.problems.syntax.ProblemSyntax`)
    lie in the supported fragment: the check of :func:`check_supported` on the text, with the same
    names for the features, and the line of the first one found.

    ``where`` is ``(source, domain path, problem path)``. Return what the scan found
    (:class:`~up_gnnplan.problems.syntax.Fragment`: the action costs among it). Negative values of
    static cost fluents are checked once pymimir has read the initial values (:func:`check_cost_values`).
    """
    from up_gnnplan.problems.syntax import problem_features, scan_fragment

    source, domain_path, problem_path = where
    fragment = scan_fragment(domain)
    found = {feature: (domain_path, line) for feature, line in fragment.features.items()}
    found.update({feature: (problem_path, line) for feature, line in problem_features(problem).items()
                  if feature not in found})
    cost_fluents = set(fragment.costs.fluent.values())
    misused = sorted(name for name in domain.functions if name != "total-cost"
                     and (name not in cost_fluents or name in fragment.modified or name in fragment.numeric_used))
    if misused:
        found.setdefault(_PDDL_NAMES["NUMERIC_FLUENTS"] + ": " + ", ".join(misused), (domain_path, None))
    if found:
        first = min((line, str(path)) for path, line in found.values() if line is not None) if any(
            line is not None for _, line in found.values()) else None
        at = f" ({first[1]}, line {first[0]})" if first else ""
        raise UnsupportedFeatureError(sorted(found), f"{source}{at}")
    negative = [f"action '{a}' costs {c:g}" for a, c in fragment.costs.constant.items() if c < 0]
    if negative:
        raise UnsupportedFeatureError(["negative action costs: " + "; ".join(negative)], source)
    if not problem.goal and not problem.existential_goal and not problem.compiled_goal:
        raise ProblemLoadError(f"{source}: the goal is empty, so there is nothing to plan or learn")
    return fragment


def check_cost_values(values, costs, where: str) -> None:
    """Raise for a negative initial value of a static cost fluent: ``values`` are
    ``(function, arguments, value)``, ``costs`` the domain's :class:`~up_gnnplan.problems.syntax.Costs`."""
    users = {}
    for action, name in costs.fluent.items():
        users.setdefault(name, action)
    negative = [f"{name}({', '.join(args)}) = {value:g} (cost of '{users[name]}')"
                for name, args, value in values if name in users and value < 0]
    if negative:
        raise UnsupportedFeatureError(["negative action costs: " + "; ".join(negative)], where)
