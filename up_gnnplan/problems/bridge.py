"""Bridge a UP problem to pymimir, with explicit name maps both ways.

UP is the front end; pymimir does grounding and successor generation. The problem goes to
pymimir as PDDL text written by UP's ``PDDLWriter``, whose name maps bring pymimir's objects,
predicates and actions back to UP items. Traps handled here:

- the writer renames objects (``1st`` becomes ``o_1st``): every name goes through its maps;
- pymimir adds extra parameters for existential preconditions: ground actions are sliced to
  the UP action's arity when mapped back;
- pymimir rejects ``(exists ...)`` goals: each existential goal conjunct (and each with ``or``,
  ``imply`` or ``forall``) is compiled into a nullary derived predicate ``gnnplan-goal-k`` whose
  definition is the formula, so pymimir's own goal test, state spaces and searches stay exact.
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path

from up_gnnplan.errors import GnnplanError, ProblemLoadError, UnsupportedFeatureError
from up_gnnplan.problems.fragment import check_supported
from up_gnnplan.problems.goal_rules import MAX_INSTANCES, hidden_note
from up_gnnplan.problems.loading import Source, load_pddl, source_of
from up_gnnplan.problems.normal_form import with_normal_conditions
from up_gnnplan.problems.syntax import expression_end, with_preconditions
from up_gnnplan.states.actions import ActionSignature
from up_gnnplan.states.signature import PredicateSignature
from up_gnnplan.states.types import DomainTypes

_GOAL_PREDICATE = "gnnplan_goal_{}"
_GOAL_ACTION = "gnnplan_achieve_goal_{}"


def _instances(problem, conjunct):
    """The ground literals of a goal conjunct ``forall VARIABLES: BODY`` with BODY a literal or a conjunction
    of literals, over the problem's objects of the variables' types (what files give, goal_rules); None where
    it is not of that form, has no instance, or more than goal_rules.MAX_INSTANCES."""
    import itertools

    if not conjunct.is_forall():
        return None
    body = conjunct.arg(0)
    literals = list(body.args) if body.is_and() else [body]
    if not literals or not all((l.arg(0) if l.is_not() else l).is_fluent_exp() for l in literals):
        return None
    variables = conjunct.variables()
    domains = [list(problem.objects(v.type)) for v in variables]
    count = len(literals)
    for objects in domains:
        count *= len(objects)
    if count == 0 or count > MAX_INSTANCES:
        return None
    em = problem.environment.expression_manager
    return [literal.substitute({em.VariableExp(v): em.ObjectExp(o) for v, o in zip(variables, combination)})
            for combination in itertools.product(*domains) for literal in literals]


def goal_conjuncts(problem) -> list:
    """The conjuncts of ``problem``'s goal, each universal one over literals written out as its instances."""
    conjuncts = []
    for goal in problem.goals:
        for conjunct in goal.args if goal.is_and() else [goal]:
            instances = _instances(problem, conjunct)
            conjuncts.extend([conjunct] if instances is None else instances)
    return conjuncts


def _compiled(conjunct) -> bool:
    """Whether a goal conjunct is compiled into a derived predicate: not a literal."""
    if conjunct.is_not():
        conjunct = conjunct.arg(0)
    return not (conjunct.is_fluent_exp() or conjunct.is_equals() or conjunct.is_bool_constant())


def _compile_goals(problem, conjuncts: list):
    """Return (problem copy, (fluent, action) names) with the goal ``conjuncts`` (:func:`goal_conjuncts`) and
    each of them that is not a literal (``exists``, ``forall``, ``or``, ``imply``) made a fluent.

    The copy gets, for each existential conjunct, a nullary fluent and a parameterless action
    whose precondition is the conjunct; :func:`_derive` then turns that action's text into a
    ``:derived`` rule. Writing the formula through an action keeps every name in the writer's
    maps, so nothing is printed by hand.
    """
    import unified_planning.shortcuts as ups

    if conjuncts != [c for goal in problem.goals for c in (goal.args if goal.is_and() else [goal])]:
        problem = problem.clone()  # universal conjuncts of literals, written out
        problem.clear_goals()
        for conjunct in conjuncts:
            problem.add_goal(conjunct)
    if not any(_compiled(c) for c in conjuncts):
        return problem, []
    compiled = problem.clone()
    compiled.clear_goals()
    names = []
    for conjunct in conjuncts:
        if not _compiled(conjunct):
            compiled.add_goal(conjunct)
            continue
        # The fluent and the action need distinct names that the problem does not use yet
        # (UP refuses a name used twice).
        k = len(names)
        while compiled.has_name(_GOAL_PREDICATE.format(k)) or compiled.has_name(_GOAL_ACTION.format(k)):
            k += 1
        name = _GOAL_PREDICATE.format(k)
        fluent = ups.Fluent(name, ups.BoolType())
        compiled.add_fluent(fluent, default_initial_value=False)
        action = ups.InstantaneousAction(_GOAL_ACTION.format(k))
        action.add_precondition(conjunct)
        action.add_effect(fluent, True)
        compiled.add_action(action)
        compiled.add_goal(fluent)
        names.append((name, action.name))
    return compiled, names


def _problem_text(writer, problem, kind, domain_text: str, check) -> str:
    """Return the PDDL problem of ``problem`` in ``writer``'s names, from its explicit initial values.

    UP's ``PDDLWriter.get_problem`` reads ``problem.initial_values``, which builds an expression
    for every grounding of every fluent (160,000 ``on`` atoms for 400 blocks: 18 s of the 20 s a
    400-block task took to build). Every fluent of a problem we accept defaults to false (Boolean)
    or to undefined (the static cost fluents), so the explicit values say everything; a problem
    with another default is written by UP's writer as before.
    """
    from unified_planning.io.pddl_writer import ConverterToPDDLString

    if any(v is not None and not v.is_false() for v in problem.fluents_defaults.values()):
        return writer.get_problem()
    # The writer hands out PDDL names lazily; its own problem writer uses this method too.
    name = writer._get_mangled_name
    constants = {o for objs in (writer.domain_objects or {}).values() for o in objs}
    domain = re.search(r"\(define \(domain (\S+)\)", domain_text).group(1)
    lines = [f"(define (problem {domain}-problem)", f" (:domain {domain})", " (:objects"]
    for user_type in problem.user_types:
        objects = [name(o) for o in problem.objects(user_type) if o.type == user_type and o not in constants]
        if objects:
            lines.append(f"   {' '.join(objects)} - {name(user_type)}")
    if not problem.user_types:
        lines.append("   " + " ".join(name(o) for o in problem.all_objects))
    lines += [" )", " (:init"]
    converter = ConverterToPDDLString(problem.environment, name)
    for count, (fluent, value) in enumerate(problem.explicit_initial_values.items()):
        if count % 20_000 == 19_999:
            check(f"while building the task (writing initial atom {count + 1:,})")
        if value.is_true():
            lines.append(f"  {converter.convert(fluent)}")
        elif not value.is_false():
            lines.append(f"  (= {converter.convert(fluent)} {converter.convert(value)})")
    if kind.has_actions_cost() or kind.has_plan_length():
        lines.append("  (= (total-cost) 0)")
    lines.append(" )")
    goals = []
    for goal in (g.simplify() for g in problem.goals):
        goals.extend(map(converter.convert, goal.args if goal.is_and() else [goal]))
    lines += [" (:goal (and", *(f"  {g}" for g in goals), " ))"]
    if problem.quality_metrics:
        lines.append(" (:metric minimize (total-cost))")
    return "\n".join(lines) + "\n)\n"


def _derive(domain_text: str, writer, compiled, names: list[tuple[str, str]]) -> str:
    """Replace each goal action of ``domain_text`` by a ``:derived`` rule."""
    for name, action_name in names:
        pddl_name = writer.get_pddl_name(compiled.action(action_name))
        predicate = writer.get_pddl_name(compiled.fluent(name))
        start = domain_text.index(f"(:action {pddl_name}\n")
        end = expression_end(domain_text, start)
        block = domain_text[start:end]
        pre = block.index(":precondition") + len(":precondition")
        pre = block.index("(", pre)
        condition = block[pre : expression_end(block, pre)]
        rule = f"(:derived ({predicate}) {condition})"
        domain_text = domain_text[:start] + rule + domain_text[end:]
    return domain_text.replace("(:requirements", "(:requirements :derived-predicates", 1)


class _KnownKind:
    """``problem`` with its kind computed once, for UP's PDDL writer: the writer asks for
    ``problem.kind`` three times, and UP computes it anew each time by walking the whole problem
    (0.3 s each for Gripper with 400 balls, seconds on a loaded machine, none of it interruptible)."""

    def __init__(self, problem, kind):
        self._problem, self.kind = problem, kind

    def __getattr__(self, name):
        return getattr(self._problem, name)


class Task:
    """A planning task on pymimir, with maps between pymimir and UP items.

    Built from a UP problem (``Task(problem)``, the engine's UP entry) or straight from PDDL files
    (:meth:`from_files`: pymimir reads them, and a UP problem is read only where one is asked for,
    through :attr:`up_problem`). Either way the names, signatures and object ids are the same.

    Args:
        up_problem: the UP problem; it is checked against the supported fragment.
        source: where it came from, for error messages and dataset provenance (default: the
            files :func:`~up_gnnplan.problems.loading.load_pddl` read it from, if it did).
        mode: pymimir's successor generator, ``"lifted"`` (default; no grounding step, so
            large instances start at once) or ``"grounded"``.
        check: called as ``check(what)`` between the stages of building the task, so that a
            solve's limits (:class:`up_gnnplan.limits.Limits`) can stop it.
        kind: the problem's UP ``ProblemKind`` if already computed (it walks the whole problem).
    """

    writer = None  # UP's PDDL writer, whose name maps a task from a UP problem goes through
    syntax = None  # the domain's declarations, for a task read from files (problems.syntax.DomainSyntax)

    def __init__(self, up_problem, source: Source | None = None, mode: str = "lifted", check=None, kind=None):
        import pymimir
        from unified_planning.io import PDDLWriter

        from unified_planning.model import Problem

        check = check or (lambda what: None)
        self._up_problem, self._files, self.note = up_problem, None, None
        self.source = source or source_of(up_problem)
        if not isinstance(up_problem, Problem):
            raise UnsupportedFeatureError(
                [f"{type(up_problem).__name__} (not a classical action-based problem)"], self.source.describe()
            )
        kind = kind or up_problem.kind
        check_supported(up_problem, self.source.describe(), kind)
        check("while building the task (after checking its PDDL fragment)")
        conjuncts = self._goal_conjuncts = goal_conjuncts(up_problem)
        compiled, goal_names = _compile_goals(up_problem, conjuncts)
        self.has_existential_goal = any(c.is_exists() for c in conjuncts)
        others = sum(1 for c in conjuncts if _compiled(c) and not c.is_exists())
        if others:
            self.note = hidden_note(others)
        if goal_names:
            check("while building the task (after compiling its existential goals)")
            kind = compiled.kind
        self.writer = PDDLWriter(_KnownKind(compiled, kind))
        try:
            domain_text = self.writer.get_domain()
            check("while building the task (writing its PDDL)")
            problem_text = _problem_text(self.writer, compiled, self.writer.problem_kind, domain_text, check)
        except GnnplanError:
            raise
        except Exception as error:  # UP's writer raises its own types for constructs PDDL lacks
            raise UnsupportedFeatureError([f"a construct PDDL cannot express ({error})"], self.source.describe()) from None
        if goal_names:
            domain_text = _derive(domain_text, self.writer, compiled, goal_names)
        if "FORALL_EFFECTS" in {str(f) for f in kind.features} and ":conditional-effects" not in domain_text:
            # pymimir asks for it of a forall effect; UP's writer declares it only with a when (UP's safe_road)
            domain_text = domain_text.replace("(:requirements", "(:requirements :conditional-effects", 1)
        self.domain_text, self.problem_text = with_preconditions(domain_text), problem_text
        check("while building the task (before pymimir parses it)")
        try:
            self.mimir_domain = pymimir.Domain(with_normal_conditions(self.domain_text, self.source.describe()))
            self.mimir_problem = pymimir.Problem(self.mimir_domain, self.problem_text, mode=mode)
        except RuntimeError as error:
            raise ProblemLoadError(f"{self.source.describe()}: pymimir rejected the problem: {error}") from None
        check("while building the task (after pymimir parsed it)")
        self.signature = PredicateSignature.from_up_problem(up_problem)
        self.action_signature = ActionSignature.from_up_problem(up_problem)
        self.types = DomainTypes.from_up_problem(up_problem)
        self._objects = list(up_problem.all_objects)
        self.object_names = [o.name for o in self._objects]
        self.object_types = [o.type.name for o in self._objects]
        self._object_id = {o: i for i, o in enumerate(self._objects)}
        self._mimir_object_id = self._map_mimir_objects()
        self._mimir_predicate_id = self._map_mimir_predicates()
        self._actions: dict[int, object] = {}
        self._goal = self._size = None

    @classmethod
    def from_files(cls, domain: str | Path, problem: str | Path, mode: str = "lifted", check=None) -> "Task":
        """Return the task of two PDDL files, read by pymimir (see :mod:`up_gnnplan.problems.files`)."""
        from up_gnnplan.problems.files import read_task

        return read_task(cls.__new__(cls), domain, problem, mode, check)

    @property
    def up_problem(self):
        """The UP problem: given, or read from the files with UP's reader on first use (slow on
        large problems: only what needs a UP answer asks for it)."""
        if self._up_problem is None:
            self._up_problem = load_pddl(self._files.domain_path, self._files.problem_path)
        return self._up_problem

    @property
    def from_files_only(self) -> bool:
        """Whether this task was read from files and no UP problem has been built for it."""
        return self._up_problem is None

    @property
    def objects(self) -> list:
        """The UP objects, in our object ids' order."""
        if self._objects is None:
            problem = self.up_problem
            self._objects = [problem.object(name) for name in self.object_names]
        return self._objects

    # -- what the models and searches need, the same for both kinds of task --------------------

    def goal_literals(self):
        """Return ``(positive, negative, existential)``: the goal's literals as ``(predicate id,
        object ids)`` pairs, in the goal's order, and whether some conjunct is quantified."""
        if self._goal is None:
            positive, negative, existential = [], [], False
            object_id = {o: i for i, o in enumerate(self.objects)}
            for conjunct in self._goal_conjuncts:  # universal ones over literals written out (goal_conjuncts)
                target = positive
                if conjunct.is_not():
                    target, conjunct = negative, conjunct.arg(0)
                if conjunct.is_fluent_exp():
                    pid = self.signature.index[conjunct.fluent().name]
                    target.append((pid, [object_id[a.object()] for a in conjunct.args]))
                else:
                    existential = True  # exists, or, imply, forall: tested by pymimir, not given as atoms
            self._goal = positive, negative, existential
        return self._goal

    def has_unit_costs(self) -> bool:
        """Return whether every action costs 1."""
        from up_gnnplan.problems import files, fragment

        return files.has_unit_costs(self) if self.syntax is not None else fragment.has_unit_costs(self.up_problem)

    def min_action_cost(self) -> float:
        """Return a lower bound on the cost of any ground action (0 when none can be given)."""
        from up_gnnplan.problems import files, fragment

        return files.min_action_cost(self) if self.syntax is not None else fragment.min_action_cost(self.up_problem)

    def size_facts(self):
        """Return what :mod:`up_gnnplan.problems.size` estimates the ground actions from."""
        if self._size is None:
            from up_gnnplan.problems import files, size

            self._size = files.size_facts(self) if self.syntax is not None else size.facts_of_up_problem(self.up_problem)
        return self._size

    # -- name maps ---------------------------------------------------------------------------

    def _up_item(self, pddl_name: str):
        try:
            return self.writer.get_item_named(pddl_name)
        except Exception:  # UP raises a bare exception type for unknown names
            return None

    def _map_mimir_objects(self) -> dict[int, int]:
        mapping = {}
        for obj in self.mimir_problem.get_objects() + self.mimir_domain.get_constants():
            item = self._up_item(obj.get_name())
            if item is not None and item in self._object_id:
                mapping[obj.get_index()] = self._object_id[item]
        if len(set(mapping.values())) != len(self.objects):
            raise ProblemLoadError(f"{self.source.describe()}: objects do not map one-to-one between UP and pymimir")
        return mapping

    def _map_mimir_predicates(self) -> dict[tuple[str, int], int]:
        """Map (pymimir predicate kind, index) to our predicate id; others are left out."""
        mapping = {}
        for kind, predicates in (
            ("static", self.mimir_domain.get_predicates(ignore_fluent=True, ignore_derived=True)),
            ("fluent", self.mimir_domain.get_predicates(ignore_static=True, ignore_derived=True)),
            ("derived", self.mimir_domain.get_predicates(ignore_static=True, ignore_fluent=True)),
        ):
            for predicate in predicates:
                item = self._up_item(predicate.get_name())
                if item is None or not hasattr(item, "signature"):
                    continue  # pymimir's type predicates, our goal predicates
                pid = self.signature.index.get(item.name)
                if pid is not None:
                    mapping[(kind, predicate.get_index())] = pid
        return mapping

    def object_id(self, mimir_object) -> int:
        """Return our id of a pymimir object."""
        return self._mimir_object_id[mimir_object.get_index()]

    @property
    def mimir_object_ids(self) -> dict[int, int]:
        """Our object ids by pymimir object index (:meth:`object_id` of many objects at once)."""
        return self._mimir_object_id

    def predicate_id(self, mimir_atom) -> int | None:
        """Return our predicate id of a pymimir ground atom, or None if not in the signature."""
        kind = "static" if mimir_atom.is_static() else "fluent" if mimir_atom.is_fluent() else "derived"
        return self._mimir_predicate_id.get((kind, mimir_atom.get_predicate().get_index()))

    # -- actions -----------------------------------------------------------------------------

    def up_action_name(self, pddl_name: str) -> str:
        """Return the UP name of the action schema pymimir calls ``pddl_name``."""
        return pddl_name if self.writer is None else self._up_item(pddl_name).name

    def plan_lines(self, ground_actions) -> list[str]:
        """Return the PDDL lines ``(action o1 o2)`` of a sequence of pymimir ground actions."""
        lines = []
        for action in ground_actions:
            name = self.up_action_name(action.get_action().get_name())
            arity = self.action_signature.schemas[self.action_signature.index[name]][1]
            objects = [self.object_names[self.object_id(o)] for o in action.get_objects()[:arity]]
            lines.append(f"({' '.join([name, *objects])})")
        return lines

    def to_up_action(self, ground_action):
        """Return the UP ``ActionInstance`` of a pymimir ground action."""
        from unified_planning.plans import ActionInstance

        key = ground_action.get_index()
        cached = self._actions.get(key)
        if cached is None:
            action = self.up_problem.action(self.up_action_name(ground_action.get_action().get_name()))
            arity = len(action.parameters)
            # pymimir appends existentially quantified variables as extra parameters.
            params = [self.objects[self.object_id(o)] for o in ground_action.get_objects()[:arity]]
            cached = ActionInstance(action, tuple(params))
            self._actions[key] = cached
        return cached

    def to_up_plan(self, ground_actions):
        """Return a UP ``SequentialPlan`` for a sequence of pymimir ground actions."""
        from unified_planning.plans import SequentialPlan

        return SequentialPlan([self.to_up_action(a) for a in ground_actions], self.up_problem.environment)

    @cached_property
    def _pddl_names(self) -> tuple[dict, dict]:
        """pymimir's action schemas (a list per lower-case name: an action with a disjunctive precondition
        is one schema per disjunct) and objects (constants too) by lower-case name."""
        schemas = {}
        for action in self.mimir_domain.get_actions():
            schemas.setdefault(action.get_name().lower(), []).append(action)
        return schemas, {o.get_name().lower(): o for o in self.mimir_problem.get_objects() + self.mimir_domain.get_constants()}

    def ground_action(self, state, name: str, args) -> object | None:
        """Return the ground action ``(name args...)`` of pymimir's PDDL names (any case) if it is
        applicable in ``state``, else None.

        It is built directly (one lookup, where scanning the applicable actions of a Satellite
        state of 40 satellites took 8 ms a step). pymimir gives an action with an existential
        precondition its quantified variables as extra parameters, which a plan does not name:
        there the first applicable action whose leading objects match is taken (the effects cannot
        depend on the others). An action with a disjunctive precondition is one schema per disjunct
        in pymimir: the first applicable one is taken (they share the effects).
        """
        schemas, named_objects = self._pddl_names
        name, args = name.lower(), [arg.lower() for arg in args]
        objects = [named_objects.get(arg) for arg in args]
        if name not in schemas or None in objects:
            return None
        for schema in schemas[name]:
            if schema.get_arity() == len(args):
                action = self.mimir_problem.new_ground_action(schema, objects)
                if action.is_applicable(state):
                    return action
        if all(schema.get_arity() == len(args) for schema in schemas[name]):
            return None
        for action in state.generate_applicable_actions():
            if action.get_action().get_name().lower() == name and \
                    [o.get_name().lower() for o in action.get_objects()[:len(args)]] == args:
                return action
        return None

    def find_ground_action(self, state, action_instance):
        """Return the applicable pymimir action of ``state`` that ``action_instance`` denotes."""
        wanted = (action_instance.action.name, tuple(p.object() for p in action_instance.actual_parameters))
        for ground_action in state.generate_applicable_actions():
            up = self.to_up_action(ground_action)
            if (up.action.name, tuple(p.object() for p in up.actual_parameters)) == wanted:
                return ground_action
        raise ProblemLoadError(f"{self.source.describe()}: action {action_instance} is not applicable")

    @cached_property
    def goal_condition(self):
        """pymimir's goal condition (built once: pymimir builds it anew on every call, 8-27 ms for the
        488 goal atoms of a Blocksworld of 488 blocks, where testing a state against it takes 30 us)."""
        return self.mimir_problem.get_goal_condition()

    def initial_state(self):
        """Return pymimir's initial state."""
        return self.mimir_problem.get_initial_state()

    @property
    def num_objects(self) -> int:
        return len(self.object_names)

    @property
    def constant_ids(self) -> set[int]:
        """Our ids of the domain's constants that action schemas name."""
        if self.syntax is not None:
            named = self.syntax.constants_named()
            return {i for i, name in enumerate(self.object_names[:len(self.syntax.constants)]) if name in named}
        return {self._mimir_object_id[c.get_index()] for c in self.mimir_domain.get_constants()
                if c.get_index() in self._mimir_object_id}


def load_task(domain: str | Path, problem: str | Path, **task_options) -> Task:
    """Read PDDL files into a checked :class:`Task` (:meth:`Task.from_files`: pymimir reads them)."""
    return Task.from_files(domain, problem, **task_options)
