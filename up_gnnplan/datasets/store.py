"""The on-disk dataset format: one compressed ``.npz`` file, no pickles.

Format ``up-gnnplan-dataset`` version 2. ``meta`` is a JSON string with the domain name, its
predicate signature (see :mod:`up_gnnplan.states.signature`), its action signature (see
:mod:`up_gnnplan.states.actions`), the package version, and one entry per problem: source files
with their SHA-256, object names, how its states were labelled and counts. Arrays (S states,
P problems, T recorded transitions, w = max(1, largest arity), wa = the same for actions):

============================  =================================================================
``state_problem`` int32[S]    index of the state's problem
``value`` float64[S]          exact optimal cost-to-go V* (action costs respected); ``inf`` for
                              dead ends, which are also flagged in ``dead_end``
``steps`` int32[S]            number of actions on that optimal path (-1 for dead ends)
``dead_end``, ``is_goal``     bool[S]
``label`` uint8[S]            how V* was obtained: 0 full state-space expansion, 1 suffix of an
                              optimal plan, 2 optimal search from that state
``fluent_ptr`` int64[S+1]     CSR offsets into ``fluent_pred`` / ``fluent_args`` [A], [A, w]
``static_ptr`` int64[P+1]     per problem: static and type atoms (shared by all its states)
``goal_ptr`` int64[P+1]       per problem: positive goal atoms; ``neg_goal_ptr`` negative ones
``has_actions`` bool[S]       whether the state's applicable actions are recorded (every state of
                              an expanded space; the plan states of an optimal-plan labelling)
``action_ptr`` int64[S+1]     CSR offsets into the transition arrays:
``action_schema`` int16[T]    the ground action's schema (position in the action signature),
``action_args`` int32[T, wa]  its objects (-1 padded), ``action_cost`` float64[T] its cost,
``action_next`` int64[T]      the dataset row of its successor (-1: not labelled)

``meta`` also records the domain's types (:mod:`up_gnnplan.states.types`), for models whose
modules follow them.
============================  =================================================================

A state's atoms are its problem's static atoms followed by its fluent atoms. The optimal
actions of a state are those with ``cost + value[next] == value[state]``. Version 1 files
(no actions) still load; :meth:`Dataset.require_actions` refuses them for action heads.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from up_gnnplan.errors import DatasetError, DatasetMismatchError
from up_gnnplan.states.actions import ActionSignature
from up_gnnplan.states.atoms import Atoms
from up_gnnplan.states.signature import PredicateSignature
from up_gnnplan.states.types import DomainTypes

ACTION_ARRAYS = ("has_actions", "action_ptr", "action_schema", "action_args", "action_cost", "action_next")

FORMAT = "up-gnnplan-dataset"
VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1: no recorded actions
LABELS = ("expanded", "optimal-plan", "optimal-search")


def file_sha256(path: Path | None) -> str | None:
    """Return the SHA-256 of a file, or None for no file."""
    if path is None:
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass
class ProblemRecord:
    """One problem of a dataset: provenance, objects, static and goal atoms."""

    name: str
    domain_file: str | None
    problem_file: str | None
    domain_sha256: str | None
    problem_sha256: str | None
    object_names: list[str]
    static: Atoms
    goal: Atoms
    negative_goal: Atoms
    method: str
    stats: dict = field(default_factory=dict)

    def meta(self) -> dict:
        keys = ("name", "domain_file", "problem_file", "domain_sha256", "problem_sha256", "object_names", "method", "stats")
        return {k: getattr(self, k) for k in keys}


@dataclass
class Dataset:
    """Labelled states of several problems of one domain."""

    domain: str
    signature: PredicateSignature
    problems: list[ProblemRecord] = field(default_factory=list)
    state_problem: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    value: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    steps: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    dead_end: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    is_goal: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    label: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    fluent_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    fluent_pred: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    fluent_args: np.ndarray | None = None
    package_version: str = ""
    action_signature: ActionSignature | None = None  # None: a version-1 file, no actions recorded
    has_actions: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    action_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    action_schema: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))
    action_args: np.ndarray | None = None
    action_cost: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    action_next: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    version: int = VERSION  # of the file it was read from
    types: DomainTypes | None = None  # the domain's type hierarchy and declared parameter types

    @property
    def width(self) -> int:
        return max(self.signature.max_arity, 1)

    @property
    def action_width(self) -> int:
        return self.action_signature.width if self.action_signature is not None else 1

    def __len__(self) -> int:
        return len(self.value)

    def __post_init__(self):
        if self.fluent_args is None:
            self.fluent_args = np.zeros((0, self.width), np.int32)
        if self.action_args is None:
            self.action_args = np.zeros((0, self.action_width), np.int32)

    def add_problem(self, record: ProblemRecord, states: list[Atoms], value, steps, dead_end, is_goal, label,
                    transitions=None) -> None:
        """Append one problem and its labelled states (fluent atoms only).

        ``transitions`` (:class:`~up_gnnplan.datasets.expansion.Transitions`, successor rows
        local to this problem) records the states' applicable actions; None records none.
        """
        index = len(self.problems)
        self.problems.append(record)
        first = len(self.value)
        n = len(states)
        counts = np.array([len(s) for s in states], dtype=np.int64)
        self.state_problem = np.concatenate([self.state_problem, np.full(n, index, np.int32)])
        self.value = np.concatenate([self.value, np.asarray(value, np.float64)])
        self.steps = np.concatenate([self.steps, np.asarray(steps, np.int32)])
        self.dead_end = np.concatenate([self.dead_end, np.asarray(dead_end, bool)])
        self.is_goal = np.concatenate([self.is_goal, np.asarray(is_goal, bool)])
        self.label = np.concatenate([self.label, np.asarray(label, np.uint8)])
        self.fluent_ptr = np.concatenate([self.fluent_ptr, self.fluent_ptr[-1] + np.cumsum(counts)])
        joined = Atoms.concat(states, self.width)
        self.fluent_pred = np.concatenate([self.fluent_pred, joined.pred])
        self.fluent_args = np.concatenate([self.fluent_args, joined.args])
        if transitions is None:
            self.has_actions = np.concatenate([self.has_actions, np.zeros(n, bool)])
            self.action_ptr = np.concatenate([self.action_ptr, np.full(n, self.action_ptr[-1])])
            return
        self.has_actions = np.concatenate([self.has_actions, transitions.recorded])
        self.action_ptr = np.concatenate([self.action_ptr, self.action_ptr[-1] + transitions.ptr[1:]])
        self.action_schema = np.concatenate([self.action_schema, transitions.schema.astype(np.int16)])
        self.action_args = np.concatenate([self.action_args, transitions.args.reshape(-1, self.action_width)])
        self.action_cost = np.concatenate([self.action_cost, transitions.cost])
        self.action_next = np.concatenate([self.action_next, np.where(transitions.next >= 0, transitions.next + first, -1)])

    def transitions_of(self, problem: int):
        """Return the transitions of one problem with successor rows local to it (None if not recorded)."""
        from up_gnnplan.datasets.expansion import Transitions

        idx = np.flatnonzero(self.state_problem == problem)
        if self.action_signature is None or len(idx) == 0:
            return None
        first, lo, hi = idx[0], self.action_ptr[idx[0]], self.action_ptr[idx[-1] + 1]
        nxt = self.action_next[lo:hi]
        return Transitions(ptr=self.action_ptr[idx[0]:idx[-1] + 2] - lo, schema=self.action_schema[lo:hi],
                           args=self.action_args[lo:hi], cost=self.action_cost[lo:hi],
                           next=np.where(nxt >= 0, nxt - first, -1), recorded=self.has_actions[idx])

    def extend(self, other: "Dataset") -> None:
        """Append every problem of ``other`` (same signature) to this dataset."""
        check_signature(other, self.signature, "the dataset being merged")
        if (self.action_signature is not None and other.action_signature is not None
                and self.action_signature != other.action_signature):
            raise DatasetMismatchError(f"the dataset being merged has other action schemas "
                                       f"({other.action_signature.describe_difference(self.action_signature)})")
        if other.action_signature is None or (self.action_signature is None and len(self)):
            self.action_signature = None  # a version-1 part: no actions for the whole
        else:
            self.action_signature = other.action_signature
        self.types = other.types if (self.types is None and not len(self)) or self.types == other.types else None
        for p, record in enumerate(other.problems):
            idx = np.flatnonzero(other.state_problem == p)
            states = [other.fluent_atoms(i) for i in idx]
            self.add_problem(record, states, other.value[idx], other.steps[idx], other.dead_end[idx], other.is_goal[idx],
                             other.label[idx], other.transitions_of(p) if self.action_signature is not None else None)

    def actions(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return (schema, args, cost, successor row) of the recorded actions of state ``i``."""
        lo, hi = self.action_ptr[i], self.action_ptr[i + 1]
        return self.action_schema[lo:hi], self.action_args[lo:hi], self.action_cost[lo:hi], self.action_next[lo:hi]

    def require_actions(self, where: str, purpose: str) -> None:
        """Raise :class:`DatasetError` unless the dataset records applicable actions (format 2)."""
        if self.action_signature is None or not self.has_actions.any():
            problems = ", ".join(str(p.problem_file) for p in self.problems[:3]) + (", ..." if len(self.problems) > 3 else "")
            raise DatasetError(
                f"{where}: {purpose} needs the applicable actions of its states, which this dataset does not record "
                f"(format version {self.version}, written by up-gnnplan {self.package_version or '?'}); rebuild it with "
                f"`gnnplan dataset DOMAIN PROBLEMS... -o FILE` (its problems: {problems})")

    def fluent_atoms(self, i: int) -> Atoms:
        lo, hi = self.fluent_ptr[i], self.fluent_ptr[i + 1]
        return Atoms(self.fluent_pred[lo:hi], self.fluent_args[lo:hi])

    def state_atoms(self, i: int) -> Atoms:
        """Return all atoms of state ``i``: its problem's static atoms, then its fluent atoms."""
        return Atoms.concat([self.problems[self.state_problem[i]].static, self.fluent_atoms(i)], self.width)

    def state_strings(self, i: int) -> list[str]:
        names = self.problems[self.state_problem[i]].object_names
        return self.state_atoms(i).as_strings(self.signature, names)

    # -- files ------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the dataset to ``path`` (``.npz`` is appended when missing)."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "domain": self.domain,
            "signature": self.signature.to_json(),
            "actions": self.action_signature.to_json() if self.action_signature is not None else None,
            "types": self.types.to_json() if self.types is not None else None,
            "package_version": self.package_version,
            "problems": [p.meta() for p in self.problems],
        }
        arrays = {}
        for key, getter in (("static", lambda p: p.static), ("goal", lambda p: p.goal), ("neg_goal", lambda p: p.negative_goal)):
            parts = [getter(p) for p in self.problems]
            joined = Atoms.concat(parts, self.width)
            arrays[f"{key}_ptr"] = np.concatenate([[0], np.cumsum([len(a) for a in parts])]).astype(np.int64)
            arrays[f"{key}_pred"], arrays[f"{key}_args"] = joined.pred, joined.args
        np.savez_compressed(
            path,
            meta=np.array(json.dumps(meta)),
            state_problem=self.state_problem,
            value=self.value,
            steps=self.steps,
            dead_end=self.dead_end,
            is_goal=self.is_goal,
            label=self.label,
            fluent_ptr=self.fluent_ptr,
            fluent_pred=self.fluent_pred,
            fluent_args=self.fluent_args,
            **{key: getattr(self, key) for key in ACTION_ARRAYS},
            **arrays,
        )
        return path

    @classmethod
    def load(cls, path: str | Path, expect: PredicateSignature | None = None) -> "Dataset":
        """Read a dataset; with ``expect``, refuse one written for another domain."""
        path = Path(path)
        if not path.is_file():
            raise DatasetError(f"{path}: no such dataset file")
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            meta = json.loads(str(arrays.pop("meta")))
        except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, zlib.error) as error:
            raise DatasetError(f"{path}: not a readable up-gnnplan dataset ({error})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else None
            raise DatasetError(f"{path}: not an up-gnnplan dataset (format {found!r})")
        if meta.get("version") not in READABLE_VERSIONS:
            raise DatasetError(f"{path}: dataset format version {meta.get('version')} is not supported (this is version {VERSION})")
        # A file with the right header can still lack arrays or metadata entries: report it as
        # corrupt rather than with a KeyError or TypeError from deep inside.
        corrupt = (KeyError, IndexError, TypeError, ValueError, AttributeError)
        try:
            signature = PredicateSignature.from_json(meta["signature"])
            actions = ActionSignature.from_json(meta["actions"]) if meta.get("actions") is not None else None
            types = DomainTypes.from_json(meta["types"]) if meta.get("types") else None
            dataset = cls(meta["domain"], signature, package_version=meta.get("package_version", ""),
                          action_signature=actions, version=meta["version"], types=types)
        except corrupt as error:
            raise DatasetError(f"{path}: corrupt up-gnnplan dataset ({type(error).__name__}: {error})") from None
        if expect is not None:
            check_signature(dataset, expect, str(path))

        def atoms(key, p):
            lo, hi = arrays[f"{key}_ptr"][p], arrays[f"{key}_ptr"][p + 1]
            return Atoms(arrays[f"{key}_pred"][lo:hi], arrays[f"{key}_args"][lo:hi])

        try:
            for p, entry in enumerate(meta["problems"]):
                dataset.problems.append(
                    ProblemRecord(static=atoms("static", p), goal=atoms("goal", p), negative_goal=atoms("neg_goal", p), **entry)
                )
            for key in ("state_problem", "value", "steps", "dead_end", "is_goal", "label", "fluent_ptr", "fluent_pred", "fluent_args"):
                setattr(dataset, key, arrays[key])
            if actions is not None:
                for key in ACTION_ARRAYS:
                    setattr(dataset, key, arrays[key])
            else:
                dataset.has_actions = np.zeros(len(dataset.value), bool)
                dataset.action_ptr = np.zeros(len(dataset.value) + 1, np.int64)
        except corrupt as error:
            raise DatasetError(f"{path}: corrupt up-gnnplan dataset ({type(error).__name__}: {error})") from None
        return dataset


def check_signature(dataset: Dataset, expect: PredicateSignature, where: str) -> None:
    """Raise :class:`DatasetMismatchError` unless ``dataset`` has signature ``expect``."""
    if dataset.signature != expect:
        raise DatasetMismatchError(
            f"{where}: the dataset is for domain '{dataset.domain}', whose predicates differ from "
            f"the expected ones ({dataset.signature.describe_difference(expect)})"
        )
