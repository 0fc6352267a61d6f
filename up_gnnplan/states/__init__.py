"""States: the atoms a model sees, successors and the goal test, on pymimir states."""

from up_gnnplan.states.atoms import Atoms, StateAtoms
from up_gnnplan.states.signature import PredicateSignature
from up_gnnplan.states.successors import is_goal, successors

__all__ = ["Atoms", "PredicateSignature", "StateAtoms", "is_goal", "successors"]
