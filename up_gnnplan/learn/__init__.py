"""The learning system as one command (``gnnplan learn``): label what fits the budget, train, judge, export.

Modules, in the order of the pipeline:

- :mod:`~up_gnnplan.learn.inputs`: gather the problem files, check their domain and PDDL fragment, order them by size;
- :mod:`~up_gnnplan.learn.labels`: label each training problem within its share of the budget;
- :mod:`~up_gnnplan.learn.recipe`: the training recipe (judge split, heads, epoch size), chosen automatically;
- :mod:`~up_gnnplan.learn.search_judge`: the exported model's learned part against LAMA-first on the judge problems;
- :mod:`~up_gnnplan.learn.run`: the named, timed stages under one deadline, resumable from a work folder.

Nothing here imports torch at import time: :func:`~up_gnnplan.learn.run.learn` imports it when training starts.
"""

from up_gnnplan.learn.run import LearnError, LearnOptions, learn

__all__ = ["LearnError", "LearnOptions", "learn"]
