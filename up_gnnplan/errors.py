"""Errors that name the problem for the user.

Everything the package raises on bad input derives from :class:`GnnplanError`, so the CLI can
print the message without a traceback and library users can catch one type.
"""

from __future__ import annotations


class GnnplanError(Exception):
    """Base class of every error this package raises on purpose."""


class ProblemLoadError(GnnplanError):
    """A PDDL file or UP problem could not be read (missing file, syntax, unknown symbol)."""


class UnsupportedFeatureError(GnnplanError):
    """The problem uses a feature outside the supported PDDL fragment."""

    def __init__(self, features: list[str], where: str):
        self.features = list(features)
        self.where = where
        listed = ", ".join(self.features)
        super().__init__(
            f"{where}: unsupported feature(s): {listed}. up-gnnplan supports STRIPS with typing, "
            "negative, disjunctive, existential and universal preconditions (or, imply, exists, forall), "
            "equality, goals with any of these, conditional and universally quantified "
            "effects, derived predicates (read from files), and non-negative action costs."
        )


class UnsolvableProblemError(GnnplanError):
    """The problem is proven to have no plan (or has nothing to do)."""


class StateLimitExceeded(GnnplanError):
    """A state-space expansion hit its state limit."""


class DatasetError(GnnplanError):
    """A dataset file is unreadable, corrupt, or of an unknown format version."""


class DatasetMismatchError(DatasetError):
    """A dataset was written for another domain (another predicate signature)."""


class InternalError(GnnplanError):
    """A fault of this package, not of the input: a plan found that does not validate."""
