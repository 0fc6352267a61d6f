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
                              optimal plan, 2 optimal search from that state, 3 suffix of a
                              satisficing plan (an upper bound on V*: ``gnnplan learn``)
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

:meth:`Dataset.load` checks a file before anything indexes with it (array kinds and lengths,
offsets, every problem, state, predicate, schema and object id in range, no NaN values) and
never unpickles: a file that fails is refused with the array and what is wrong with it.
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
LABELS = ("expanded", "optimal-plan", "optimal-search", "satisficing-plan")


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
    def load_all(cls, paths, expect: PredicateSignature | None = None) -> "Dataset | None":
        """Read several datasets of one domain as one (None for no paths); with ``expect``, refuse one written for
        another domain."""
        data = None
        for path in paths:
            part = cls.load(path, expect=expect if data is None else data.signature)
            if data is None:
                data = part
            else:
                data.extend(part)
        return data

    @classmethod
    def load(cls, path: str | Path, expect: PredicateSignature | None = None) -> "Dataset":
        """Read a dataset; with ``expect``, refuse one written for another domain."""
        path = Path(path)
        if not path.is_file():
            raise DatasetError(f"{path}: no such dataset file")
        arrays = _read_npz(path)
        if "meta" not in arrays:
            raise DatasetError(f"{path}: not an up-gnnplan dataset (it lacks array 'meta')")
        text = arrays.pop("meta")
        if text.dtype.kind != "U" or text.ndim != 0:
            raise DatasetError(f"{path}: array 'meta' holds {text.dtype} of shape {text.shape}, not a JSON text")
        try:
            meta = json.loads(str(text))
        except ValueError as error:
            raise DatasetError(f"{path}: array 'meta' is not valid JSON ({error})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else None
            raise DatasetError(f"{path}: not an up-gnnplan dataset (format {found!r})")
        version = meta.get("version")
        if type(version) is int and version > VERSION:
            raise DatasetError(f"{path}: dataset format version {version} is not supported: the file was written by a "
                               f"newer up-gnnplan (this one reads versions 1 to {VERSION}); update up-gnnplan to read it")
        if type(version) is not int or version not in READABLE_VERSIONS:
            raise DatasetError(f"{path}: dataset format version {version!r} is not supported (this is version {VERSION})")
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
        _check_arrays(path, arrays, dataset, meta.get("problems"))

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


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    """Return the arrays of the ``.npz`` file ``path``, refusing a pickled (object) array by name.

    Each array's header is read before its data, so an object array is reported for what it is
    and never unpickled; a damaged archive or array is reported as such, not with numpy's advice.
    """
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise DatasetError(f"{path}: not a dataset file (.npz) of up-gnnplan: {_not_a_zip(path, error)}") from None
    arrays = {}
    with archive:
        for info in archive.infolist():
            key = info.filename[:-len(".npy")] if info.filename.endswith(".npy") else info.filename
            try:
                with archive.open(info) as member:
                    shape, dtype = _npy_header(member)
                # The header's shape is allocated before any data is read: it must fit in the member.
                if not dtype.hasobject and int(np.prod(shape, dtype=object)) * dtype.itemsize > info.file_size:
                    raise ValueError(f"its header claims shape {shape} of {dtype}, more than its {info.file_size} bytes")
                if not dtype.hasobject:
                    with archive.open(info) as member:
                        arrays[key] = np.lib.format.read_array(member, allow_pickle=False)
            except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, MemoryError) as error:
                reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
                raise DatasetError(f"{path}: array {key!r} is damaged or not a numpy array ({reason})") from None
            if dtype.hasobject:
                raise DatasetError(f"{path}: array {key!r} holds a pickled (object) array, which up-gnnplan never loads "
                                   "(loading one can run code); the file was not written by `gnnplan dataset`")
    return arrays


def _npy_header(member) -> tuple[tuple, np.dtype]:
    """Return (shape, dtype) from the header of an ``.npy`` stream (ValueError for anything else)."""
    version = np.lib.format.read_magic(member)
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    if version not in readers:
        raise ValueError(f".npy format version {version[0]}.{version[1]}, which numpy writes only for named fields")
    shape, _, dtype = readers[version](member)
    return shape, dtype


def _not_a_zip(path: Path, error: Exception) -> str:
    """Say why ``path`` is no zip archive: empty, cut short, or something else."""
    with open(path, "rb") as file:
        start = file.read(4)
    if not start:
        return "the file is empty"
    if start == b"PK\x03\x04":
        return "a zip archive without its directory at the end: the file is truncated or damaged"
    return f"not a zip archive ({error})"


class _ArrayCheck:
    """Checks on the arrays of one dataset file; a failure raises :class:`DatasetError` naming the
    file and the array."""

    KINDS = {"i": (("i", "u"), "integers"), "f": (("f",), "floating-point numbers"), "b": (("b",), "booleans")}

    def __init__(self, path: Path, arrays: dict[str, np.ndarray], problems: list[dict]):
        self.path, self.arrays, self.problems = path, arrays, problems
        self.objects = np.array([len(entry["object_names"]) for entry in problems], np.int64)

    def fail(self, message: str):
        raise DatasetError(f"{self.path}: {message}")

    def get(self, key: str, kind: str, ndim: int) -> np.ndarray:
        """Return array ``key``, which must hold ``kind`` ("i", "f" or "b") in ``ndim`` dimensions."""
        if key not in self.arrays:
            self.fail(f"the file lacks array {key!r}")
        array = self.arrays[key]
        kinds, named = self.KINDS[kind]
        if array.dtype.kind not in kinds:
            self.fail(f"array {key!r} holds {array.dtype}, not {named}")
        if array.ndim != ndim:
            self.fail(f"array {key!r} has {array.ndim} dimension(s), not {ndim}")
        # Indices in one dtype (a uint64 offset would wrap in np.diff); 2-D argument tables are compared as they are.
        return array.astype(np.int64) if kind == "i" and ndim == 1 else array

    def same_length(self, key: str, array: np.ndarray, anchor: str, length: int, each: str):
        if len(array) != length:
            self.fail(f"array {key!r} holds {len(array)} entries, but {anchor!r} holds {length} (one per {each})")

    def within(self, key: str, values: np.ndarray, count: int, noun: str, holder: str):
        """Every entry of ``values`` must lie in [0, count): the ids of ``count`` things ``holder`` (has/holds)."""
        bad = values[(values < 0) | (values >= count)]
        if len(bad):
            self.fail(f"array {key!r} refers to {noun} {bad[0]}, but {holder} {count} {noun}s")

    def offsets(self, key: str, ptr: np.ndarray, owners: int, each: str, target: str, length: int):
        """``ptr`` must be CSR offsets of ``owners`` slices of ``target``, which holds ``length`` entries."""
        if len(ptr) != owners + 1:
            self.fail(f"array {key!r} holds {len(ptr)} offsets, but the file holds {owners} {each}s (expected {owners + 1})")
        if ptr[0] != 0:
            self.fail(f"array {key!r} starts at {ptr[0]}, not 0")
        if (np.diff(ptr) < 0).any():
            self.fail(f"array {key!r} decreases after its entry {int(np.argmax(np.diff(ptr) < 0))}")
        if ptr[-1] != length:
            self.fail(f"array {key!r} ends at {ptr[-1]}, but {target!r} holds {length} entries")

    def arguments(self, key: str, args: np.ndarray, arity: np.ndarray, problem: np.ndarray):
        """The first ``arity[i]`` entries of row i must be objects of ``problem[i]``; the rest is padding."""
        bad = (np.arange(args.shape[1]) < arity[:, None]) & ((args < 0) | (args >= self.objects[problem][:, None]))
        if bad.any():
            row, column = np.argwhere(bad)[0]
            p = problem[row]
            self.fail(f"array {key!r} refers to object {args[row, column]} (row {row}, argument {column + 1}), but "
                      f"problem {p} ({self.problems[p].get('name')!r}) has {self.objects[p]} objects")

    def atoms(self, prefix: str, owner_problem: np.ndarray, each: str, signature: PredicateSignature, width: int):
        """Check ``PREFIX_ptr``/``_pred``/``_args``: the atoms of each owner (a state or a problem)."""
        ptr, pred = self.get(f"{prefix}_ptr", "i", 1), self.get(f"{prefix}_pred", "i", 1)
        args = self.get(f"{prefix}_args", "i", 2)
        self.offsets(f"{prefix}_ptr", ptr, len(owner_problem), each, f"{prefix}_pred", len(pred))
        if args.shape != (len(pred), width):
            self.fail(f"array '{prefix}_args' has shape {args.shape}, expected {(len(pred), width)} (a row per atom of "
                      f"'{prefix}_pred', a column per argument of the largest predicate arity)")
        self.within(f"{prefix}_pred", pred, len(signature), "predicate", "the domain's signature has")
        self.arguments(f"{prefix}_args", args, np.array(signature.arities, np.int64)[pred],
                       np.repeat(owner_problem, np.diff(ptr)))


def _check_arrays(path: Path, arrays: dict[str, np.ndarray], dataset: Dataset, problems) -> None:
    """Raise :class:`DatasetError` unless the arrays of a dataset file fit together.

    Checks what reading and training index with: every array present with its kind and number of
    dimensions, lengths that agree, offsets that cover their arrays, every problem, state,
    predicate, action schema and object referred to within range, and values that are numbers.
    Vectorised: about a quarter of a second per million atoms.
    """
    if not isinstance(problems, list) or not all(
            isinstance(entry, dict) and isinstance(entry.get("object_names"), list) for entry in problems):
        raise DatasetError(f"{path}: corrupt up-gnnplan dataset: an entry of the problems in its 'meta' lacks the list "
                           "'object_names'")
    check = _ArrayCheck(path, arrays, problems)
    state_problem = check.get("state_problem", "i", 1)
    for key, kind in (("value", "f"), ("steps", "i"), ("dead_end", "b"), ("is_goal", "b"), ("label", "i")):
        check.same_length(key, check.get(key, kind, 1), "state_problem", len(state_problem), "state")
    check.within("state_problem", state_problem, len(problems), "problem", "the file holds")
    if (np.diff(state_problem) < 0).any():  # transitions_of takes a problem's states as one slice
        check.fail(f"array 'state_problem' is not in problem order (row {int(np.argmax(np.diff(state_problem) < 0)) + 1})")
    check.atoms("fluent", state_problem, "state", dataset.signature, dataset.width)
    for prefix in ("static", "goal", "neg_goal"):
        check.atoms(prefix, np.arange(len(problems)), "problem", dataset.signature, dataset.width)
    value, steps, dead_end = arrays["value"], arrays["steps"], arrays["dead_end"]
    if np.isnan(value).any():
        check.fail(f"array 'value' holds NaN (state {int(np.argmax(np.isnan(value)))}); V* is a number, or inf for a dead end")
    if (value < 0).any():
        check.fail(f"array 'value' holds the negative V* {value[value < 0][0]} (state {int(np.argmax(value < 0))})")
    if (dead_end & np.isfinite(value)).any():
        state = int(np.argmax(dead_end & np.isfinite(value)))
        check.fail(f"array 'dead_end' flags state {state} as a dead end, but 'value' gives it the finite V* {value[state]}")
    if (steps < -1).any():
        check.fail(f"array 'steps' holds {steps[steps < -1][0]} (state {int(np.argmax(steps < -1))}); steps are -1 or more")
    if dataset.action_signature is not None:
        _check_actions(check, dataset.action_signature, state_problem)


def _check_actions(check: _ArrayCheck, actions: ActionSignature, state_problem: np.ndarray) -> None:
    """Check the recorded transitions (format 2): schemas, objects, successors and costs."""
    states = len(state_problem)
    check.same_length("has_actions", check.get("has_actions", "b", 1), "state_problem", states, "state")
    ptr, schema = check.get("action_ptr", "i", 1), check.get("action_schema", "i", 1)
    args, cost = check.get("action_args", "i", 2), check.get("action_cost", "f", 1)
    successor = check.get("action_next", "i", 1)
    check.same_length("action_cost", cost, "action_schema", len(schema), "transition")
    check.same_length("action_next", successor, "action_schema", len(schema), "transition")
    check.offsets("action_ptr", ptr, states, "state", "action_schema", len(schema))
    if args.shape != (len(schema), actions.width):
        check.fail(f"array 'action_args' has shape {args.shape}, expected {(len(schema), actions.width)} (a row per "
                   "transition, a column per parameter of the largest action arity)")
    check.within("action_schema", schema, len(actions), "action schema", "the domain has")
    problem = state_problem[np.repeat(np.arange(states), np.diff(ptr))]
    check.arguments("action_args", args, np.array(actions.arities, np.int64)[schema], problem)
    check.within("action_next", successor[successor != -1], states, "state", "the file holds")
    crossing = (successor >= 0) & (state_problem[np.maximum(successor, 0)] != problem)
    if crossing.any():
        t = int(np.argmax(crossing))
        check.fail(f"array 'action_next' leads from a state of problem {problem[t]} to one of problem "
                   f"{state_problem[successor[t]]} (transition {t})")
    bad = ~np.isfinite(cost) | (cost < 0)
    if bad.any():
        check.fail(f"array 'action_cost' holds {cost[bad][0]} (transition {int(np.argmax(bad))}); action costs are "
                   "finite and non-negative")
