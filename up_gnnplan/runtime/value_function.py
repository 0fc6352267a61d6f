"""Evaluate states with an exported ONNX model through onnxruntime.

The session runs on the device asked for (:mod:`up_gnnplan.runtime.providers`: CUDA when
onnxruntime-gpu provides it, the CPU otherwise) with explicit thread counts: on the small
graphs of planning states one intra-op thread is fastest, and searches run in parallel
processes. Files are checked before any search starts: a corrupt file, a file whose metadata
is not ours or not readable, a file of another domain, or a file of a newer incompatible format
is refused with a message that says which.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from up_gnnplan import model_format
from up_gnnplan.encodings.actions import ActionInput, action_input_names, encode_actions
from up_gnnplan.encodings.base import StateInput
from up_gnnplan.encodings.packing import pack, packed_input_names
from up_gnnplan.errors import GnnplanError
from up_gnnplan.runtime.providers import check_session_device, import_onnxruntime, providers_for
from up_gnnplan.states.actions import ActionSignature
from up_gnnplan.states.signature import PredicateSignature

# Actions scored per session call at most (the state is embedded again for each call beyond).
MAX_ACTIONS_PER_CALL = 65536


class ModelError(GnnplanError):
    """A model file is unreadable, not ours, too new, or for another domain."""


def _session(path: Path, threads: int, providers: list[str]):
    ort = import_onnxruntime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # no warnings about unused initialisers on stderr
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=providers)
    except Exception as error:  # onnxruntime raises its own exception types for bad files
        raise ModelError(f"{path}: not a readable ONNX model ({error.__class__.__name__}: {str(error).strip()[:200]})") from None


def read_metadata(session_or_path, where=None) -> dict:
    """Return the up-gnnplan metadata of a session (or file), decoded from JSON.

    ``where`` names the file in messages (default: ``session_or_path``).
    """
    session = session_or_path
    if not hasattr(session, "get_modelmeta"):
        session = _session(Path(session_or_path), 1, ["CPUExecutionProvider"])
    raw = session.get_modelmeta().custom_metadata_map
    meta = {}
    for key, value in raw.items():
        if key.startswith(model_format.PREFIX):
            try:
                meta[key[len(model_format.PREFIX):]] = json.loads(value)
            except json.JSONDecodeError as error:
                raise ModelError(f"{where or session_or_path}: metadata entry '{key}' is not valid JSON ({error.msg} at character "
                                 f"{error.pos}); the file was not written by gnnplan export or was altered") from None
    return meta


class OnnxValueFunction:
    """A model file in an onnxruntime session: a value function ``V(states)``, an action scorer, or both.

    The file's ``heads`` metadata says what it computes (files before heads existed compute the
    value): ``has_value`` models are value functions (``prepare``/``run``/``__call__``, what
    the value policy and GBFS use); ``has_actions`` models score the applicable actions of a
    state in one call (``scorer(state, actions)``, what the action policy uses), their kind
    (``logits`` or ``q``) turned into preferences, higher is better.

    Args:
        path: the ONNX file written by ``gnnplan export``.
        threads: intra-op threads of the session (1 by default, see the module docstring).
        device: ``auto`` (CUDA when onnxruntime offers it, else CPU), ``cpu`` or ``cuda``.
        providers: onnxruntime execution providers, instead of ``device``.

    ``provider`` is the execution provider the session actually runs on.
    """

    def __init__(self, path, threads: int = 1, device: str = "auto", providers: list[str] | None = None):
        from up_gnnplan.encodings import make_encoding

        self.path = Path(path)
        if not self.path.is_file():
            raise ModelError(f"{self.path}: no such model file")
        self.device = device
        self.session = _session(self.path, threads, providers or providers_for(device))
        self.provider = check_session_device(self.session, device, self.path)
        self.metadata = meta = read_metadata(self.session, where=self.path)
        if meta.get("format") != model_format.FORMAT:
            raise ModelError(f"{self.path}: not an up-gnnplan model (no up_gnnplan metadata)")
        if int(meta.get("version", 0)) > model_format.VERSION:
            raise ModelError(
                f"{self.path}: model format version {meta['version']} is newer than this up-gnnplan "
                f"supports ({model_format.VERSION}); upgrade up-gnnplan (file written by version {meta.get('package_version')})"
            )
        try:
            encoding = dict(meta["encoding"])
            name = encoding.pop("encoding")
            self.signature = PredicateSignature.from_json(encoding.pop("signature"))
            self.encoding = make_encoding(name, self.signature, **encoding)
        except (KeyError, TypeError, ValueError) as error:
            raise ModelError(f"{self.path}: its up_gnnplan metadata does not describe an encoding "
                             f"({type(error).__name__}: {error})") from None
        # Packed layout (R-GNN files since 0.1): relations stacked per arity, see encodings.packing.
        self.packed = meta.get("layout") == "packed"
        self.input_names = packed_input_names(self.encoding) if self.packed else self.encoding.input_names()
        heads = meta.get("heads") or {"outputs": ["value"]}
        self.outputs = list(heads.get("outputs", ["value"]))
        self.has_value, self.has_actions = "value" in self.outputs, "scores" in self.outputs
        self.action_kind, self.actions, self.action_names = None, None, []
        if self.has_actions:
            try:
                self.action_kind = heads["action_kind"]
                self.actions = ActionSignature.from_json(heads["actions"])
            except (KeyError, TypeError, ValueError) as error:
                raise ModelError(f"{self.path}: its heads metadata does not describe the action head "
                                 f"({type(error).__name__}: {error})") from None
            self.action_names = action_input_names(self.actions)
        expected = [i.name for i in self.session.get_inputs()]
        if expected != self.input_names + self.action_names:
            raise ModelError(f"{self.path}: inputs {expected} do not match its encoding's "
                             f"{self.input_names + self.action_names}")
        hidden = (meta.get("train_config") or {}).get("hidden", 32)
        # Working memory of a call per input element, for chunking (runtime.chunks): measured
        # 0.5-1.3 KB for the shipped R-GNN models (hidden 32); it grows with the embedding size.
        self.bytes_per_element = 2048 * max(1.0, float(hidden) / 32)

    @property
    def domain(self) -> str:
        return self.metadata.get("domain", "")

    @property
    def first_policy(self) -> str:
        """The greedy policy mode auto starts with: ``action-policy`` where the model has an action head,
        else ``policy`` (the value policy); a model with both heads whose training chose the value policy
        on its judge problems (``gnnplan learn``: ``first_policy`` in its training record) starts with it."""
        chosen = (self.metadata.get("training_record") or {}).get("first_policy")
        if chosen == "policy" and self.has_value:
            return "policy"
        return "action-policy" if self.has_actions else "policy"

    @property
    def handoff_share(self) -> float | None:
        """Mode auto's share of the time for the learned part before LAMA-first, where the model's
        training record gives one (``gnnplan learn``: a tenth for a policy that solved none of its
        judge problems, more for one that solved some), else None."""
        share = (self.metadata.get("training_record") or {}).get("handoff_share")
        return float(share) if isinstance(share, (int, float)) and 0.0 <= share <= 1.0 else None

    @property
    def handoff_share_why(self) -> str:
        return str((self.metadata.get("training_record") or {}).get("handoff_share_why", ""))

    @property
    def astray_factor(self) -> float | None:
        """Mode auto's FF-relative step limit factor for the policy, where the model's training record gives
        one (``gnnplan learn``: 0, none, for a policy that solved all its judge problems), else None."""
        factor = (self.metadata.get("training_record") or {}).get("astray_factor")
        return float(factor) if isinstance(factor, (int, float)) and factor >= 0 else None

    @property
    def astray_factor_why(self) -> str:
        return str((self.metadata.get("training_record") or {}).get("astray_factor_why", ""))

    @property
    def architecture(self) -> str:
        return self.metadata.get("architecture", "")

    def check_signature(self, signature: PredicateSignature, where: str = "the problem",
                        actions: ActionSignature | None = None) -> None:
        """Raise :class:`ModelError` unless the model was trained for ``signature``'s domain (and its ``actions``)."""
        if signature != self.signature:
            raise ModelError(
                f"{self.path}: the model is for domain '{self.domain}', whose predicates differ from "
                f"those of {where} ({self.signature.describe_difference(signature)})"
            )
        if self.has_actions and actions is not None and actions != self.actions:
            raise ModelError(
                f"{self.path}: the model scores the actions of domain '{self.domain}', whose action schemas differ "
                f"from those of {where} ({self.actions.describe_difference(actions)})")

    def _state_feed(self, inputs: list[StateInput]) -> dict[str, np.ndarray]:
        feed = self.encoding.encode(inputs)
        if self.packed:
            feed = pack(feed, self.encoding.relations)
        return {name: feed[name] for name in self.input_names}

    def prepare(self, inputs: list[StateInput]) -> dict[str, np.ndarray]:
        """Return the session's input arrays for valuing a batch of states (no actions to score)."""
        feed = self._state_feed(inputs)
        for name, (_, arity) in zip(self.action_names, self.actions.schemas if self.actions else []):
            feed[name] = np.zeros((0, 1 + arity), dtype=np.int64)
        return feed

    def run(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        """Return one value per state of a batch made by :meth:`prepare`."""
        if not self.has_value:
            raise ModelError(f"{self.path}: the model has no value head (it scores actions only)")
        return self.session.run(["value"], feed)[0]

    def __call__(self, inputs: list[StateInput]) -> np.ndarray:
        """Return one value per state, all in one session call (searches chunk: runtime.chunks)."""
        return self.run(self.prepare(inputs))

    def value_and_scores(self, state: StateInput, actions: ActionInput) -> tuple[float, np.ndarray]:
        """Return V of ``state`` and the preference of each action of ``actions`` (as :meth:`scorer`), in
        one session call for a model with both heads (deferred GBFS values a state as it expands it)."""
        if not (self.has_value and self.has_actions) or len(actions) > MAX_ACTIONS_PER_CALL or not len(actions):
            return float(self([state])[0]), (self.scorer(state, actions) if self.has_actions else
                                              np.zeros(len(actions)))
        action_feed, order = encode_actions(self.actions, [actions], [state.num_objects])
        value, scores = self.session.run(["value", "scores"], {**self._state_feed([state]), **action_feed})
        scores = scores[order].astype(np.float64)
        return float(value[0]), (scores if self.action_kind == "logits" else -scores)

    def scorer(self, state: StateInput, actions: ActionInput) -> np.ndarray:
        """Return the preference of each action of ``actions`` in ``state`` (higher is better).

        The state is embedded and all its actions scored in one call, or, beyond
        ``MAX_ACTIONS_PER_CALL`` actions, in one call per that many (memory stays bounded).
        """
        if not self.has_actions:
            raise ModelError(f"{self.path}: the model has no action head (it is a value function)")
        scores = np.empty(len(actions), dtype=np.float64)
        state_feed = self._state_feed([state])
        for start in range(0, max(len(actions), 1), MAX_ACTIONS_PER_CALL):
            part = ActionInput(actions.schema[start:start + MAX_ACTIONS_PER_CALL],
                               actions.args[start:start + MAX_ACTIONS_PER_CALL])
            action_feed, order = encode_actions(self.actions, [part], [state.num_objects])
            out = self.session.run(["scores"], {**state_feed, **action_feed})[0]
            scores[start:start + len(part)] = out[order]
        return scores if self.action_kind == "logits" else -scores


@functools.lru_cache(maxsize=8)
def _cached(resolved: str, mtime_ns: int, size: int, threads: int, device: str) -> OnnxValueFunction:
    return OnnxValueFunction(resolved, threads=threads, device=device)


def load_value_function(path, threads: int = 1, device: str = "auto") -> OnnxValueFunction:
    """Return an :class:`OnnxValueFunction` for ``path``, reusing the session of an earlier call.

    Creating a session takes most of a second (0.86 s for the shipped Blocks model), so
    repeated solves in one process share it; a file that changed on disk (other modification
    time or size) gets a new session.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such model file")
    stat = path.stat()
    return _cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size, threads, device)
