"""up-gnnplan: learned general policies and heuristics for classical planning.

Relational graph neural networks are trained on small instances of a PDDL domain and then
solve much larger ones through the Unified Planning engine ``gnnplan``.

Importing the package must stay cheap: no torch, no onnxruntime session, no UP environment
access at import time (UP itself may import this package while it builds its factory).
"""

__version__ = "0.1.0"

from up_gnnplan.errors import (  # noqa: F401  (re-exported for users)
    DatasetError,
    DatasetMismatchError,
    GnnplanError,
    ProblemLoadError,
    StateLimitExceeded,
    UnsolvableProblemError,
    UnsupportedFeatureError,
)


def register(env=None) -> None:
    """Register the ``gnnplan`` engine in a UP environment (the global one by default)."""
    from up_gnnplan.plugins import register as _register

    _register(env)


try:  # importing the package registers the engine in UP's global environment
    register()
except ImportError:  # pragma: no cover - UP is a hard dependency; keep import working regardless
    pass
