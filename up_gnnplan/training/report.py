"""What ``gnnplan train`` reads beside its datasets and says when it is done (no torch).

The judge's problems are loaded and checked against the training data's domain before any
epoch runs; snapshots are named after the output and the minutes of training; the summary
line says how well the chosen epoch did, by the measure of its head.
"""

from __future__ import annotations

from pathlib import Path

from up_gnnplan.errors import GnnplanError


def snapshot_minutes(text: str) -> list[float]:
    """Return the minutes of ``M1,M2,...`` sorted, each above 0; raise ValueError on anything else."""
    try:
        minutes = sorted({float(m) for m in text.split(",") if m.strip()})
    except ValueError:
        raise ValueError(f"{text!r} is not a comma-separated list of minutes") from None
    if any(not m > 0 or m == float("inf") for m in minutes):
        raise ValueError("minutes must be positive")
    return minutes


def snapshot_path(output, minutes: float, kind: str) -> Path:
    """Return where the snapshot after ``minutes`` goes: ``OUTPUT-Mmin.pt`` (the best epoch so far) or
    ``OUTPUT-Mmin-last.pt`` (``kind`` "last": the last epoch)."""
    path = Path(output)
    return path.with_name(f"{path.stem}-{minutes:g}min{'-last' if kind == 'last' else ''}{path.suffix or '.pt'}")


def validation_tasks(domain, problems, signature) -> list:
    """Load the judge's problems (``--validation-problem`` files of ``domain``) and check that they are
    of the training data's domain (``signature``); raise ValueError when only one of the two is given."""
    if bool(domain) != bool(problems):
        raise ValueError("--validation-problem and --validation-domain go together")
    from up_gnnplan.grounding.encoding import grounding_signature, is_grounding_signature
    from up_gnnplan.grounding.goal import QuantifiedGoal
    from up_gnnplan.problems import load_task

    grounding = is_grounding_signature(signature)
    tasks = []
    for problem in problems:
        task = load_task(domain, problem)
        theirs = grounding_signature(task.signature) if grounding else task.signature
        if theirs != signature:
            raise GnnplanError(f"{problem}: not of the training data's domain: predicates "
                               f"{theirs.describe_difference(signature)} (first: the problem's domain)")
        if grounding and not QuantifiedGoal.of(task.up_problem).variables:
            raise GnnplanError(f"{problem}: the goal has no existentially quantified variable; a grounding model is "
                               "judged by binding such goals")
        tasks.append(task)
    return tasks


# The measures of the heads that choose their epoch by a share of states, in the order they are looked for.
_CHOICES = (("best_action_optimal", "action_states", "best action optimal"),
            ("best_successor_optimal", "rank_states", "lowest-valued successor optimal"),
            ("best_variant_optimal", "variant_states", "lowest-valued goal variant a cheapest one"))


def quality(record: dict) -> str:
    """Say how well the chosen epoch did on the validation states (else the training states)."""
    val = record["validation"] or record["train"]
    choice = next((c for c in _CHOICES if c[0] in val), None)
    if choice is not None:
        metric, count, what = choice
        return (f"{what} in {val[metric]:.1%} of {val[count]} validation states"
                + (f", value MAE {val['mae']:.3f}" if "mae" in val else ""))
    valued = record.get("validation_error_states", record["validation_states"])
    of = f" of {record['validation_states']}" if valued < record["validation_states"] else ""
    return (f"validation MAE {val.get('mae', float('nan')):.3f} (max {val.get('max_error', float('nan')):.2f}) "
            f"on {valued}{of} states")


def judged(record: dict, tasks: list) -> str:
    """The end of train's summary line: what the judge of the chosen epoch saw (nothing without one)."""
    if not tasks:
        return ""
    seen = record["policy_validation"]
    if "judge" in seen:  # a grounding model: bound, then solved by LAMA-first
        return (f"; greedy binding + LAMA-first solved {seen['solved']}/{len(tasks)} validation problems, plans of "
                f"{seen['steps']} steps in all")
    return f"; greedy policy solved {seen['solved']}/{len(tasks)} validation problems in {seen['steps']} steps"
