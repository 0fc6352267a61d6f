"""The training recipe of ``gnnplan learn``: the settings behind the shipped models, chosen without per-domain input.

What the shipped models' runs (``benchmarks/training_curve.py``, ``models_zoo/index.json``) had
in common, and is used here:

- an action head (``logits``: cross-entropy over the optimal actions) beat the value policy on
  every domain it was tried on (Childsnack 30/30 against 5/30, Rovers 23 against 13, Miconic the
  same coverage in a quarter of the time: one forward pass per step instead of one per
  successor);
- the action head alone (``logits``), no value head beside it: with the epoch choice below, the
  action head alone found as many or more test plans by the model than both heads in every
  comparison on the same labels (``learn``, 30 minutes, testing/easy: Rovers 21 against 15,
  Transport 28 against 27; ``gnnplan train`` arms: 25 against 18, 28 against 21;
  ``benchmarks/results/learn_eval/README.md``), and the hand-made models of those domains are
  action heads alone. Its fallback in mode auto is policy-best-first with FF (10 and 12 plans
  there, against GBFS on V's 7 and 10). ``--head logits+value`` adds the value head, and with it
  the choosing stage (mode auto starts with the value policy where it solves more judge problems);
- the epoch is chosen by a policy judge (``gnnplan train --validation-problem``): the greedy
  policy on problems larger than the training ones, most solved; on Blocks a lower validation
  error did not mean a better policy on larger problems;
- among the epochs that solve as many judge problems, the one with the lowest action error on
  held-out labelled problems (:func:`held_out`: every second one from the second largest down)
  is kept (``gnnplan train --validation-dataset --judge-ties error-unless-all``). Where the greedy policy
  solves as many in every epoch (Rovers, Transport: 1 of 4), the steps of its runs chose an
  overfit epoch. Among epochs that solve every judge problem the fewest steps decide, then the error: the
  error's differences there are small (Hiking: 0.027-0.068), the steps' are not (410-893 for 4 of 4);
  on the same labels and training the epoch of the fewest steps solved 1 of Hiking's 10 test problems,
  the epoch of the lowest error none (``benchmarks/results/learn_eval/judge-ties/``);
- an action whose successor the labeller left without a label counts as non-optimal in the
  cross-entropy (``--unknown-successors non-optimal``): the plan's action, and the actions of its
  symmetry class (:mod:`up_gnnplan.datasets.optimal`), are the target. Left out of it instead
  (``left-out``), Childsnack's training loss fell from 0.68 to 0.03 on the same labels, but the large
  problems' plan states, which the batches over distinct V* values draw often, then taught almost
  nothing: testing/easy 27/30 (25 by the model) against 30/30 (30), Childsnack-scaled 1/5 against 0/5
  (``benchmarks/results/learn_eval/README.md``);
- no early stop on the validation error (``--patience 1000``): the judge keeps the best epoch. Training
  stops before its time only once the judge has settled (:data:`SETTLE_EPOCHS` epochs in a row solved every
  judge problem with no error on the held-out problems, in the same steps; Gripper's and Vacuum's runs
  chose their first epoch and trained 30 and 44 more that scored the same);
- the R-GNN's defaults otherwise (30 shared layers, 32 features, Adam 1e-3, batch 32 on a CPU); ``--hidden`` and
  ``--layers`` set another size.

Where some problems are labelled along LAMA-first's plans (``--labels auto``) and at least
:data:`MIN_REFINE_PROBLEMS` trained-on ones optimally, the last :data:`REFINE_SHARE` of the training time
refines the chosen model on the optimal labels alone (:func:`refine_problems`), if its greedy policy solved
every judge problem (else training on all labels goes on through that time), judged by the same problems
with ties broken by the policy's steps, and the refined model is kept where its greedy policy solves more
judge problems, or as many in fewer steps. Refined on the same labels (30 minutes): Blocksworld's judge
4/4 in 322 steps against 392, test plans of 1,502 and 724 actions against 1,816 and 894; Rovers, refined
where its policy solved 2 of 4 judge problems, 3/4, but 21 of 30 test tasks by the model against 26
trained all the time on all labels (``benchmarks/results/learn_eval/refine/``). LAMA-first's plans (Blocksworld's up to 2x as long as optimal
ones, after action elimination) label the larger problems that A* with LM-cut cannot, and carry the policy
where optimal labels are few, but teach it longer plans: on the same 30-minute runs, a model of the optimal
labels alone made Blocksworld plans of 0.84x the cost (judge 4/4 in 310 steps against 386), and solved fewer
Rovers tasks by its policy (14 of 30 against 26; judge 1/4 against 3/4); the judge told the two apart in
both (``benchmarks/results/learn_eval/labels-optimal-only/``).

On a GPU the batch is 256 states, with the learning rate scaled by the batch (8e-3): an H100
trained 2.8x one CPU thread's states per second at batch 32 (each step is thousands of small
kernels) and 7.1x at batch 256. At 1e-3, batch 256 learnt no more per step than batch 32, so the
GPU's larger batches were wasted (a 16-minute Rovers run: training action error 0.11-0.13
against 0.05 on the CPU); at 8e-3 it reached the training loss and validation error of the CPU's
batch 32 in the same time (``benchmarks/results/gpu_check``).

The budget and the device decide the size of an epoch, so that the judge sees ten or more epochs
whatever the budget; the judge's step limit grows with the judge problems' size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

HEAD = "logits"
HEADS = ("logits", "logits+value", "value")  # what gnnplan learn --head takes; value: a value model (modes policy
#                                            and gbfs), to ship beside an action model of the domain
# An epoch should take about this share of the training time (at least 10 judged epochs); its steps end at 1.5x
# that (TrainConfig.epoch_seconds), and its judge after JUDGE_SHARE of it (TrainConfig.judge_seconds).
EPOCH_SHARE = 0.08
JUDGE_SHARE = 0.06
# Training states per second assumed (logits+value R-GNN on one CPU thread): measured about 100 on Goldminer's
# states on a loaded 2-core machine, with the epoch's evaluation; a little less, so that epochs are not too long.
ASSUMED_RATE = 80.0
# The same on a GPU at GPU_BATCH (an H100: 1,788 states/s on Satellite's labels, 274 at batch 32).
ASSUMED_GPU_RATE = 1200.0
CPU_BATCH, GPU_BATCH = 32, 256
BASE_LR = 1e-3  # Adam's learning rate at CPU_BATCH; other batches scale it in proportion
SETTLE_EPOCHS = 5  # TrainConfig.settle_epochs: stop once this many epochs in a row found nothing left to improve
UNKNOWN_SUCCESSORS = "non-optimal"  # an unlabelled successor's action (see above)
JUDGE_TIES = "error-unless-all"  # TrainConfig.judge_ties where problems are held out (see above)
MIN_EPOCH_STATES, MAX_EPOCH_STATES = 128, 8192
MAX_GPU_EPOCH_STATES = 65536  # a GPU's epoch of 8,192 states is seconds: the judge would take most of the time
# Labelled problems held out to compare epochs by: a fifth of them, 1 to MAX_HELD_OUT, where there are MIN_FOR_HELD_OUT.
MIN_FOR_HELD_OUT, MAX_HELD_OUT = 4, 5
# Mode auto's share of the time for the learned part (the policy, then the learned search) where no greedy
# policy of the model solved a judge problem (gnnplan learn records it in the model; the engine's default is
# 0.5): such a model's learned search is, at best, a slower FF search, and LAMA-first needs the time. A policy that
# solved some of them gets more, up to the default in proportion: Elevators (judge 1/4, its walks going round in
# circles), test set: 5/10 at 0.2 against 3/10 at 0.5, LAMA-first alone 5/10; the shipped Floortile model (judge 1/4)
# at 0.2 loses p27 of testing/easy, whose learned search took 17.1 s, of the 4 it solved in over 9 s at 0.5
# (results/learn_eval/practice-1201/).
WEAK_POLICY_SHARE = 0.1
# Mode auto's FF-relative step limit factor (engine param astray_factor; the engine's default is 4) where the
# greedy action policy solved every judge problem, at least MIN_TRUSTED_JUDGES of them: no such limit. Goldminer's
# learnt model walked 85-691 steps (going back where stuck) to solve all ten test problems, where 4 x FF's
# estimate + 50 allowed 150-346 and cut seven of them.
TRUSTED_ASTRAY_FACTOR, MIN_TRUSTED_JUDGES = 0.0, 2
# A policy whose walks on the judge problems it solved (two at least) took more than LONG_WALKS times the steps of
# LAMA-first's plans for the same problems is not trusted so: mode auto keeps the step limit tied to FF's estimate
# and gives the learned part at most LONG_WALK_SHARE of the time. Judge walks against LAMA-first's plans where learn's models
# generalise: 0.43 (Blocksworld) to 1.00 (Spanner); where they wander at 2-5x the judge's sizes: Zenotravel 1.77,
# DriverLog 2.45. Those two at LONG_WALK_SHARE with the limit: the same coverage of their test sets (8/10, 10/10) in
# 0.66x and 0.88x the time (results/learn_eval/written-1201/).
LONG_WALKS, LONG_WALK_SHARE = 1.5, 0.2
# LAMA-first on the judge problems (learn's "judge-plans" stage, before training): at most this share of the budget,
# at most JUDGE_PLAN_SECONDS a problem.
JUDGE_PLAN_SHARE, JUDGE_PLAN_SECONDS = 0.05, 15.0
# The refinement on optimal labels alone (see above): its share of the training time, and the trained-on problems
# labelled optimally (expanded, or along an optimal plan) it needs.
REFINE_SHARE = 0.3
# The network's size: 32 features and 30 layers (the R-GNN paper's) unless the command asks for others (``--hidden``,
# ``--layers``): a policy step's time grows with both, the problems the policy generalises to with the layers.
HIDDEN, LAYERS = 32, 30
# Weight averaging (``--ema-epochs``): each epoch is judged and kept as an exponential moving average of the weights
# whose time constant is this many epochs (the decay per step follows from the epoch's steps); 0: off. At 2, on the same
# labels, seed and budget: Hiking's judge solved all four in 10 of 16 epochs against 4 of 15, but the model it chose
# walked to its step limit on every test problem (0/10 against 7/10); Floortile 20/30 against 21/30
# (benchmarks/results/learn_eval/ema/).
EMA_EPOCHS = 0.0
MIN_REFINE_PROBLEMS = 4
OPTIMAL_LABELS = ("expanded", "optimal-plan")


@dataclass
class Recipe:
    """The choices of one run (recorded in the model's metadata)."""

    head: str
    epoch_states: int
    policy_steps: int
    seconds: float
    batch_size: int = CPU_BATCH  # runs of an earlier version recorded no batch: theirs was 32
    lr: float = BASE_LR
    held_out: list[str] = field(default_factory=list)  # labelled problems not trained on: the epochs' validation error
    judge_ties: str = "steps"  # runs of an earlier version held none out, and broke the judge's ties by steps
    unknown_successors: str = "non-optimal"  # TrainConfig.unknown_successors; runs of an earlier version counted
    #                                          unlabelled successors' actions as non-optimal
    refine: list[str] = field(default_factory=list)  # the problems the refinement trains on (refine_problems); none:
    #                                                   the whole training time on all labels
    refine_share: float = 0.0  # of the training time (seconds), kept for the refinement
    hidden: int = HIDDEN  # the R-GNN's features; runs of an earlier version recorded none: theirs were 32
    layers: int = LAYERS  # its message-passing layers (weights shared); runs of an earlier version: 30
    ema: float = 0.0  # TrainConfig.ema: the weight average's decay per step (ema_decay); 0: none (earlier versions')


def error_name(head: str) -> str:
    """What the per-epoch error of a model of ``head`` measures, as the run's lines name it: the share of
    states whose best action is not optimal (an action head), or the mean absolute error of V (a value head
    alone)."""
    return "action error" if "logits" in head.split("+") else "value error"


def held_out(labelled: list) -> list:
    """Return the labelled problems (smallest first) to hold out of training: a fifth of them (1 to
    :data:`MAX_HELD_OUT`, none below :data:`MIN_FOR_HELD_OUT`), every second one from the second largest
    down, so that the largest sizes are both trained on and held out."""
    if len(labelled) < MIN_FOR_HELD_OUT:
        return []
    count = min(MAX_HELD_OUT, max(1, len(labelled) // 5))
    return [labelled[-2 - 2 * i] for i in range(count)]


def refine_problems(labelled: list[dict], held_out_names=(), judges: int = 1) -> list[str]:
    """Return the labelled problems (``name`` and ``status`` each) the refinement on optimal labels trains on: the
    optimally labelled ones not held out, where some others are labelled along LAMA-first's plans, there are
    :data:`MIN_REFINE_PROBLEMS` of them and judge problems to choose by; else none (no refinement)."""
    optimal = [p["name"] for p in labelled if p.get("status") in OPTIMAL_LABELS and p["name"] not in held_out_names]
    satisficing = any(p.get("status") == "satisficing-plan" for p in labelled)
    return optimal if satisficing and judges and len(optimal) >= MIN_REFINE_PROBLEMS else []


def ema_decay(epochs: float, epoch_states: int, batch_size: int) -> float:
    """The weight average's decay per optimisation step for a time constant of ``epochs`` epochs of ``epoch_states``
    states in batches of ``batch_size``; 0.0 (no average) where ``epochs`` is 0."""
    if epochs <= 0:
        return 0.0
    steps = max(1.0, epochs * epoch_states / batch_size)
    return 1.0 - 1.0 / steps


def choose(train_seconds: float, labelled: list[dict], judge_objects: list[int], gpu: bool = False,
           batch_size: int | None = None, head: str = HEAD, held_out_names: list[str] = (), hidden: int | None = None,
           layers: int | None = None, ema_epochs: float | None = None) -> Recipe:
    """Return the recipe for ``train_seconds`` of training on ``labelled`` problem summaries
    (``objects``, ``plan_length`` each), judged on problems of ``judge_objects`` objects, on a GPU or
    not; ``batch_size`` None: the device's (:data:`CPU_BATCH`, :data:`GPU_BATCH`); ``head``: one of :data:`HEADS`;
    ``held_out_names``: the labelled problems held out (:func:`held_out`), by whose error the judge's ties are broken;
    ``hidden``, ``layers``: the network's size (None: :data:`HIDDEN`, :data:`LAYERS`); ``ema_epochs``: the weight
    average's time constant in epochs (None: :data:`EMA_EPOCHS`; 0: none)."""
    batch = batch_size or (GPU_BATCH if gpu else CPU_BATCH)
    # States per second grow with the batch, less than in proportion (measured: CPU 2.5x, H100 6.5x from 32 to 256).
    rate = (ASSUMED_GPU_RATE * (batch / GPU_BATCH) ** 0.9) if gpu else ASSUMED_RATE * (batch / CPU_BATCH) ** 0.44
    largest_epoch = MAX_GPU_EPOCH_STATES if gpu else MAX_EPOCH_STATES
    epoch_states = int(min(largest_epoch, max(MIN_EPOCH_STATES, train_seconds * EPOCH_SHARE * rate)))
    # Plans grow about linearly with the objects in most domains; allow the greedy policy three times the
    # length of the longest labelled plan scaled to the judge's size, and at least 100 steps.
    per_object = max((p["plan_length"] / max(p["objects"], 1) for p in labelled), default=1.0)
    largest = max(judge_objects, default=0)
    policy_steps = int(min(1000, max(100, 3 * per_object * largest)))
    refine = refine_problems(labelled, held_out_names, len(judge_objects)) if "logits" in head.split("+") else []
    return Recipe(head, epoch_states, policy_steps, train_seconds, batch, BASE_LR * batch / CPU_BATCH,
                  list(held_out_names), JUDGE_TIES if held_out_names else "steps", UNKNOWN_SUCCESSORS, refine,
                  REFINE_SHARE if refine else 0.0, hidden or HIDDEN, layers or LAYERS,
                  ema_decay(EMA_EPOCHS if ema_epochs is None else ema_epochs, epoch_states, batch))


def config_of(recipe: Recipe, seed: int, device: str = "auto"):
    """Return the :class:`~up_gnnplan.training.config.TrainConfig` of ``recipe`` on ``device`` (imports torch's
    side)."""
    from up_gnnplan.training.config import TrainConfig

    # The per-epoch error (on the held-out problems, else on training states) is taken on at most a quarter of an epoch.
    return TrainConfig(architecture="rgnn", head=recipe.head, max_seconds=recipe.seconds, patience=1000,
                       settle_epochs=SETTLE_EPOCHS, max_epochs=100_000, epoch_states=recipe.epoch_states,
                       policy_steps=recipe.policy_steps,
                       validation_fraction=0.0, validation_states=max(64, min(2000, recipe.epoch_states // 4)),
                       seed=seed, threads=1, batch_size=recipe.batch_size, lr=recipe.lr, hidden=recipe.hidden,
                       layers=recipe.layers, ema=recipe.ema,
                       judge_ties=recipe.judge_ties, unknown_successors=recipe.unknown_successors, device=device,
                       epoch_seconds=EPOCH_SHARE * recipe.seconds, judge_seconds=JUDGE_SHARE * recipe.seconds)
