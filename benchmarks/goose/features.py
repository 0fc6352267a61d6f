"""WL features of Instance Learning Graphs (ILG) with wlplan, and the model file.

States reach wlplan from our own atom arrays (:class:`~up_gnnplan.states.atoms.Atoms`), so a
dataset row and a pymimir state of a task go through the same code: predicates are those of
the domain's :class:`~up_gnnplan.states.signature.PredicateSignature` (static and ``type:T``
predicates included), objects are named as in the problem. Static atoms are put in every
state, as GOOSE does with its ``facts=all`` option: wlplan's ILG colours the atoms of a
state and ignores a problem's own list of statics.

The model file is wlplan's own JSON (the feature generator's colour hash and the linear
weights, written by ``Features.save``) with one more key, ``up_gnnplan``, that records the
domain, the predicate signature, the training configuration and record. wlplan ignores that
key when it loads the file. No pickles.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

FORMAT = "up-gnnplan-wl-goose"
VERSION = 1


class ModelError(ValueError):
    """A model file that cannot be used: missing, not ours, or for another domain."""


def wl_domain(name: str, signature):
    """Return the wlplan ``Domain`` of a predicate signature (one wlplan predicate per entry)."""
    from wlplan.planning import Domain, Predicate

    predicates = [Predicate(name=p, arity=a) for p, a in signature.predicates]
    return Domain(name, predicates, [], [], [])


class StateConverter:
    """Turn the states of one problem, given as fluent :class:`Atoms`, into wlplan states.

    Args:
        domain: the wlplan domain (:func:`wl_domain`) of ``signature``.
        signature: the domain's predicate signature (our predicate ids index it).
        object_names: the problem's objects, by our object id.
        static, goal, negative_goal: the problem's static (and type) atoms and goal atoms.
    """

    def __init__(self, domain, signature, object_names, static, goal, negative_goal):
        from wlplan.planning import Problem

        self.predicates = {p.name: p for p in domain.predicates}
        self.names = [self.predicates[name] for name, _ in signature.predicates]
        self.arities = signature.arities
        self.object_names = list(object_names)
        self._atoms: dict[tuple, object] = {}  # (pred, args...) -> wlplan Atom, built once per ground atom
        self.static = self.atoms(static)
        self.problem = Problem(domain, self.object_names, self.atoms(goal), self.atoms(negative_goal))

    def atoms(self, atoms) -> list:
        """Return the wlplan atoms of an :class:`Atoms` array."""
        from wlplan.planning import Atom

        out = []
        for key in zip(atoms.pred.tolist(), *atoms.args.T.tolist()):
            atom = self._atoms.get(key)
            if atom is None:
                pred = key[0]
                args = [self.object_names[o] for o in key[1:1 + self.arities[pred]]]
                atom = self._atoms[key] = Atom(self.names[pred], args)
            out.append(atom)
        return out

    def state(self, fluent):
        """Return the wlplan state whose atoms are the problem's static atoms and ``fluent``."""
        from wlplan.planning import State

        return State(self.static + self.atoms(fluent))


def task_converter(domain, task):
    """Return a :class:`StateConverter` for a :class:`~up_gnnplan.problems.Task` and its ``StateAtoms``."""
    from up_gnnplan.states.atoms import StateAtoms

    atoms = StateAtoms(task)
    converter = StateConverter(domain, task.signature, task.object_names, atoms.static, atoms.goal,
                               atoms.negative_goal)
    return converter, atoms


def embed(generator, domain, problem, states) -> np.ndarray:
    """Return the WL feature vectors of wlplan ``states`` of one problem, one row each (one call to wlplan)."""
    from wlplan.data import DomainDataset, ProblemDataset

    if not states:
        return np.zeros((0, generator.get_n_features()))
    return np.asarray(generator.embed(DomainDataset(domain, [ProblemDataset(problem, list(states))])), dtype=np.float64)


# -- the model file ----------------------------------------------------------------------------

def save_model(path, generator, weights, meta: dict) -> Path:
    """Write the feature generator with ``weights`` in wlplan's format, plus our ``meta``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    generator.save(str(path), [float(w) for w in weights])
    data = json.loads(path.read_text())
    data["up_gnnplan"] = {"format": FORMAT, "version": VERSION, **meta}
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    return path


def read_meta(path) -> dict:
    """Return our metadata of a model file; raise :class:`ModelError` if it is not a WL-GOOSE model."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    try:
        meta = json.loads(path.read_text()).get("up_gnnplan")
    except (OSError, ValueError, AttributeError) as error:
        raise ModelError(f"{path}: not a WL-GOOSE model ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelError(f"{path}: not a WL-GOOSE model (no '{FORMAT}' metadata)")
    if meta.get("version") != VERSION:
        raise ModelError(f"{path}: model format version {meta.get('version')} is not supported (this is {VERSION})")
    return meta


def load_model(path):
    """Return (wlplan feature generator with its weights, weights as an array, metadata) of a model file."""
    from wlplan.feature_generator import load_feature_generator

    meta = read_meta(path)
    generator = load_feature_generator(str(path), quiet=True)
    return generator, np.asarray(generator.get_weights(), dtype=np.float64), meta
