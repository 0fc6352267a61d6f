"""The training configuration: one dataclass, each field commented, defaults chosen by measurement."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields


# The fields whose default depends on the architecture, left None until the config is made, and
# their value where the architecture's registry entry (up_gnnplan.models.ARCHITECTURES[key].defaults)
# names none: the R-GNN's 30 layers with shared weights, one attention head.
ARCHITECTURE_DEFAULTS = {"layers": 30, "heads": 1}


@dataclass
class TrainConfig:
    """Everything that decides a training run; stored in every checkpoint."""

    architecture: str = "rgnn"  # key of up_gnnplan.models.ARCHITECTURES
    head: str = "value"  # value | logits | q | logits+value | q+value (up_gnnplan.models.heads)
    t: int = 1  # R-GNN[t] parameter (architecture rgnn_t only)
    goal_mode: str = "separate"  # goal atoms as separate predicates, or split into achieved / open
    decompose_higher_arity: bool = False  # ploi: split atoms of arity >= 3 into pairwise binary ones (lossy);
    #                                       False: such domains are refused
    hidden: int = 32  # embedding size
    layers: int | None = None  # message-passing rounds; None: the architecture's default (ARCHITECTURE_DEFAULTS)
    aggregation: str = "smoothmax"  # smoothmax | max | sum | mean
    beta: float = 8.0  # sharpness of the smooth maximum
    share_weights: bool = True  # one set of weights for all rounds (paper)
    dropout: float = 0.0  # dropout in training, where the architecture takes it (Müller et al. grid: 0.1, 0.5)
    heads: int | None = None  # attention heads (Müller et al. grid: 1, 2); the embedding size must be a multiple;
    #                           None: the architecture's default (ARCHITECTURE_DEFAULTS)
    loss: str = "l1"  # l1 (paper) | mse | rank | l1+rank | mse+rank (up_gnnplan.training.ranking)
    rank_margin: float = 1.0  # ranking losses: the margin by which the optimal successor is to be valued lower
    unknown_successors: str = "non-optimal"  # logits heads: an action whose successor has no label (left out by
    #                                          the labeller's limits) counts as non-optimal, or "left-out" of the softmax
    rank_siblings: int = 16  # ranking losses: at most this many non-optimal successors per state and step
    lr: float = 1e-3  # Adam learning rate
    lr_patience: int = 0  # halve the learning rate after this many epochs without a lower validation error
    #                       (Müller et al.: 25); 0: a constant learning rate
    ema: float = 0.0  # weight averaging: each epoch is evaluated, chosen and kept with an exponential moving
    #                   average of its weights (decay per step, e.g. 0.999; warmed up over the first steps); 0: off
    batch_size: int = 32  # states per optimisation step
    curriculum: int = 0  # epochs over which training admits the problems from the smallest to all (0: all at once)
    max_epochs: int = 500  # upper bound on epochs (evaluation rounds)
    epoch_states: int = 8192  # states drawn per epoch, at most (0: as many as there are training states),
    #                           so that large datasets are still evaluated, and the best model kept, every ~20 s
    epoch_seconds: float = 0.0  # an epoch's optimisation steps that run past 1.5x this end it, and the later epochs
    #                             are as many steps as it took (large graphs: Maze's 1,200 objects); 0: no such limit
    judge_seconds: float = 0.0  # the judge of an epoch stops after this long, its problems not solved by then failed
    #                             (0: only the budget stops it)
    max_seconds: float = 300.0  # wall-clock budget of the whole run
    patience: int = 30  # epochs without a better validation error before stopping
    settle_epochs: int = 0  # with validation problems: stop once this many epochs in a row solved all of them, with
    #                         no validation error and the same steps (up_gnnplan.training.judging.settled); 0: off
    validation_fraction: float = 0.2  # share of problems (or states, with one problem) held out
    validation_states: int = 2000  # validation error per epoch on at most this many held-out states
    policy_steps: int = 150  # step limit of the greedy policy on validation problems (train(validation_tasks=...));
    #                          on 12-16 blocks, 500 made failing runs cost ~40 s per epoch, 150 ~10 s
    judge_ties: str = "steps"  # with validation problems: among epochs that solve as many of them, the fewest steps
    #                            win ("steps"), or the lowest validation error ("error": gnnplan learn's, whose
    #                            validation states are held-out labelled problems; see up_gnnplan.training.judging)
    seed: int = 0  # seeds torch, numpy and the batch sampler
    threads: int = 1  # torch intra-op threads (1 is fastest on small graphs)
    device: str = "auto"  # auto (the first CUDA device torch sees, else the CPU) | cpu | cuda | cuda:N;
    #                       under torchrun, auto and cuda take the process's own GPU (LOCAL_RANK)
    amp: bool = False  # mixed precision: forward and loss in bfloat16 under torch.autocast (weights,
    #                    optimiser and validation in float32); off by default, as it has to keep the validation error

    def __post_init__(self):
        from up_gnnplan.models import ARCHITECTURES

        # An unset field takes its architecture's default, else the common one. An unknown
        # architecture (a newer version's file) is refused later, by the builder that needs it.
        architecture = ARCHITECTURES.get(self.architecture)
        own = dict(architecture.defaults) if architecture else {}
        for name, common in ARCHITECTURE_DEFAULTS.items():
            if getattr(self, name) is None:
                setattr(self, name, own.get(name, common))

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def encoding_params(self) -> dict:
        """Return the encoding's keyword arguments: the goal mode and the architecture's encoding options."""
        from up_gnnplan.models import get_architecture

        options = get_architecture(self.architecture).encoding_options
        return {"goal_mode": self.goal_mode, **{name: getattr(self, name) for name in options}}

    def model_params(self) -> dict:
        """Return the model builder's keyword arguments: the fields its architecture lists as options."""
        from up_gnnplan.models import get_architecture

        return {name: getattr(self, name) for name in get_architecture(self.architecture).options}
