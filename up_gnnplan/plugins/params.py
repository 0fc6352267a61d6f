"""The gnnplan engine's params: each one's default, check and meaning, and which modes take it.

UP hands an engine its options as ``params={...}`` (as strings, too, from a command line such as
``compare --engine-param gnnplan:symmetry=false``); :func:`check_params` converts and checks them
when the engine is built, and refuses a param the chosen mode does not take
(:data:`~up_gnnplan.search.modes.MODES` says which modes take which). ``gnnplan solve`` reads
the help texts below for its options, so each is written once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from unified_planning.exceptions import UPUsageError

from up_gnnplan.runtime.providers import DEVICES
from up_gnnplan.search.modes import FALLBACKS, MODES, PLANNERS, modes_taking


def _text(value):
    if isinstance(value, bool) or not isinstance(value, (str, bytes)) and not hasattr(value, "__fspath__"):
        raise ValueError
    return str(value) if not isinstance(value, bytes) else value.decode()


def _integer(minimum: int) -> Callable[[Any], int]:
    def convert(value):
        if isinstance(value, bool) or isinstance(value, float) and not value.is_integer():
            raise ValueError
        number = int(value)  # accepts "100": UP passes params as strings too
        if number < minimum:
            raise ValueError
        return number

    return convert


def _number(minimum: float) -> Callable[[Any], float]:
    def convert(value):
        if isinstance(value, bool):
            raise ValueError
        number = float(value)  # accepts "4": UP passes params as strings too
        if not math.isfinite(number) or number < minimum:
            raise ValueError
        return number

    return convert


def _share(value) -> float:
    number = _number(0.0)(value)
    if number > 1:
        raise ValueError
    return number


def _flag(value) -> bool:
    """Accept True/False, and their spellings on a command line (``--engine-param gnnplan:static_filter=false``)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str) else None
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError


def _auto_flag(value) -> str | bool:
    """Accept ``auto`` (or None) and what :func:`_flag` accepts."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return "auto"
    return _flag(value)


def _choice(options) -> Callable[[Any], str]:
    def convert(value):
        if value not in options:
            raise ValueError
        return value

    return convert


@dataclass(frozen=True)
class Param:
    """One engine option: its default, how a given value is checked, what it accepts (for messages), what it does."""

    default: Any
    convert: Callable[[Any], Any]
    accepts: str
    help: str = ""


PARAMS = {
    "model": Param(None, _text, "a shipped model's name or the path of an ONNX file",
                   "A shipped model's name or an ONNX file (default: the shipped model of the domain)."),
    "mode": Param("auto", _choice(MODES), "one of " + ", ".join(MODES),
                  "; ".join(f"{name}: {mode.help}" for name, mode in MODES.items()) + "."),
    "fallback": Param("model+lama", _choice(FALLBACKS), "one of " + ", ".join(FALLBACKS),
                      "The search after a policy that gave up: guided by the model alone, alternating with the FF "
                      "heuristic (dual-gbfs, dual-policy-best-first), or that until it stalls (handoff_share, "
                      "handoff_stall) and then LAMA-first with the time left (pip install "
                      "'up-gnnplan[fast-downward]'; the log and the metric found_by say who found the plan)."),
    "handoff_share": Param(None, _share, "a number from 0 to 1",
                           "With fallback model+lama: the share of the time left once the model is loaded that the "
                           "learned part (the policy, then the learned search) may take before LAMA-first gets the "
                           "rest (0: LAMA-first at once) [default: the model's, else 0.5: gnnplan learn records 0.1 "
                           "for a model whose greedy policy solved none of its judge problems, up to 0.5 in "
                           "proportion to those it solved]."),
    "handoff_stall": Param(500, _integer(0), "an integer >= 0 (0: off)",
                           "With fallback model+lama: hand over to LAMA-first earlier, after this many expansions of "
                           "the learned search without a lower FF value, or at once where at its pace the learned "
                           "search could make fewer than this many in all in its share of the time."),
    "on_course": Param(True, _flag, "True or False",
                       "With fallback model+lama: a policy still on course when the learned part's share is spent, "
                       "or its step limit reached (one not given as max_steps), goes on where the pace of its later "
                       "steps (the fall of the model's V, or goal literals achieved per step) reaches the goal "
                       "within the time left, with a margin of 1.5x; judged again when that runs out."),
    "handoff_from_walk": Param(True, _flag, "True or False",
                               "With fallback model+lama: LAMA-first first plans from the state of the policy's walk "
                               "that satisfies the most goal literals (more than the initial state), in half the time "
                               "left, and the plan is the walk up to that state and LAMA-first's plan from there; "
                               "where it finds none there, LAMA-first plans from the initial state with the rest."),
    "handoff_reduced": Param(True, _flag, "True or False",
                             "With handoff_from_walk: where a quarter of the task's objects or more are done in the "
                             "walk's furthest state (the goal names them and every goal literal naming them holds; "
                             "none in a static atom with one that is not), LAMA-first first plans from that state on "
                             "the task without them, in half the time left (unless the whole task's translation is "
                             "done); its plan counts where it applies to the whole task and reaches the whole goal."),
    "keep_goals": Param(True, _flag, "True or False",
                        "With fallback model+lama: a policy that goes round in circles (for 100 steps no closer to "
                        "the goal, while undoing goal literals it had achieved) keeps the goal literals its state "
                        "holds from then on, undoing one only where no other step is left, and gives up after 100 "
                        "more steps without progress; False: it gives up at once."),
    "max_steps": Param(None, _integer(1), "an integer >= 1",
                       "Step limit of the policy [default: 1000, or 4 x FF's estimate + 50 (astray_factor), "
                       "which a policy on course may pass (on_course); a limit given here holds]."),
    "backtrack": Param(True, _flag, "True or False",
                       "The action policy, where every successor of its state has been visited, goes back along its "
                       "path to the latest state with an unvisited successor (a depth-first search ordered by the "
                       "model) instead of giving up; every step, back or forward, counts against its step limit."),
    "hide_done": Param(True, _flag, "True or False",
                       "The action policy scores a state's actions on the state without the objects it is done with "
                       "(the goal names them, every goal literal naming them holds, nothing about them is left to "
                       "change), once a tenth of the objects are: a smaller graph, a faster step on large tasks; the "
                       "walk and its plan stay in the whole task."),
    "astray_factor": Param(None, _number(0.0), "a number >= 0 (0: off)",
                           "The policy also gives up after this many times FF's estimate of the initial state's cost "
                           "plus 50 steps, leaving the time left to the fallback; 0: off [default: the model's, else "
                           "4: gnnplan learn records 0 for a model whose greedy policy solved all its judge problems]."),
    "seed_fallback": Param(True, _flag, "True or False",
                           "The fallback search starts with the states of the path the policy walked in its open "
                           "lists (the initial state stays open), so it goes on from the best of them."),
    "action_elimination": Param(True, _flag, "True or False",
                                "Shorten the plan found, before validating it: one-step shortcuts to later states of "
                                "the plan, then leaving out every action it does not need (greedy action elimination; "
                                "at most half the time left)."),
    "symmetry": Param(True, _flag, "True or False",
                      "One successor per class of symmetric actions (actions that differ by interchangeable objects, "
                      "such as Spanner's spanners): the value policy values one, the searches keep one. Exact, and "
                      "fewer states to value."),
    "deferred": Param("auto", _auto_flag, "auto, True or False",
                      "GBFS on V (gbfs, dual-gbfs, mode auto's fallback for a model with a value head): value a state "
                      "when it is expanded, its children queued at its value and ordered by the action head (LAMA's "
                      "lazy search with preferred operators): one forward pass per expansion instead of one per "
                      "successor. auto: deferred for a model with an action head too, else eager (without one, the "
                      "children of a state would have no order)."),
    "threads": Param(1, _integer(1), "an integer >= 1", "onnxruntime intra-op threads."),
    "memory_mb": Param(None, _integer(0), "an integer number of MB (0: no limit)",
                       "Limit on the resident memory in MB [default: half the machine's RAM, within what is free; "
                       "0: none]."),
    "device": Param("auto", _choice(DEVICES), "one of " + ", ".join(DEVICES),
                    "Where the model runs: auto (CUDA when onnxruntime-gpu offers it, else the CPU), cpu or cuda "
                    "(pip install 'up-gnnplan[gpu]')."),
    "grounding_model": Param(None, _text, "a shipped goal-grounding model's name or the path of an ONNX file",
                             "A goal-grounding model's name or ONNX file (default: the shipped one of the domain)."),
    "static_filter": Param(True, _flag, "True or False",
                           "Refuse to bind a variable where a static goal atom (a colour), an inequality or an "
                           "invariant of the domain (one ball in two rooms) rules the object out."),
    "planner": Param("lama-first", _choice(PLANNERS), "one of " + ", ".join(PLANNERS),
                     "Who solves the ground problem: Fast Downward's LAMA-first, or gnnplan's mode auto with the "
                     "domain's model."),
    "max_groundings": Param(5, _integer(1), "an integer >= 1",
                            "Bindings tried at most while the planner proves them unsolvable."),
    "binding_beam": Param(1, _integer(1), "an integer >= 1",
                          "Keep this many best partial bindings by the model's value at each step and bind with the "
                          "ground goal of least FF value (1: the greedy binding)."),
    "binding_entailment": Param(True, _flag, "True or False",
                                "Make each binding that adds nothing to the goal (another variable is bound to an "
                                "object that satisfies all this one asks) without the model; off: the paper's greedy "
                                "binding."),
}


def applies_to(name: str) -> str:
    """Say which modes take param ``name`` (empty when every mode does): ``"Modes auto, ground: "``."""
    taking = modes_taking(name)
    if name == "mode" or len(taking) == len(MODES):
        return ""
    return f"{'Mode' if len(taking) == 1 else 'Modes'} {', '.join(taking)}: "


def check_params(given: dict) -> dict:
    """Return every engine option with ``given`` checked and converted; raise UPUsageError naming a
    bad one, or one that the chosen mode does not take."""
    unknown = sorted(set(given) - set(PARAMS))
    if unknown:
        raise UPUsageError(f"gnnplan: unknown param(s) {', '.join(map(repr, unknown))}; known: {', '.join(PARAMS)}")
    values = {name: param.default for name, param in PARAMS.items()}
    for name, value in given.items():
        if value is None and PARAMS[name].default is None:
            continue
        try:
            values[name] = PARAMS[name].convert(value)
        except (TypeError, ValueError):
            raise UPUsageError(f"gnnplan: param {name!r} must be {PARAMS[name].accepts}, got {value!r}") from None
    mode = MODES[values["mode"]]
    unused = [name for name, value in given.items() if name != "mode" and value is not None and not mode.takes(name)]
    if unused:
        raise UPUsageError(f"gnnplan: mode {mode.name!r} does not take param(s) "
                           + "; ".join(f"{name!r} ({applies_to(name)[:-2].lower()} only)" for name in unused))
    return values


def check_timeout(timeout) -> float | None:
    """Return ``timeout`` as seconds (None: no limit); refuse a negative or non-finite one."""
    if timeout is None:
        return None
    try:
        seconds = float(timeout)
    except (TypeError, ValueError):
        seconds = math.nan
    if isinstance(timeout, bool) or not math.isfinite(seconds) or seconds < 0:
        raise UPUsageError(f"gnnplan: timeout must be a finite number of seconds >= 0, got {timeout!r}")
    return seconds
