"""Loading artifacts and running their entries on numpy arrays.

``strata.load(path)`` maps a .strata artifact; ``module.session()`` makes a
session whose ``run`` takes a dict of arrays (numpy, or anything with
``__dlpack__`` on the CPU, such as a torch tensor) and returns a dict of
numpy arrays. C-contiguous inputs of the entry's dtype are read in place
and outputs view the runtime's memory: no copy either way.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _strata
from .errors import FailedPreconditionError, InvalidArgumentError

# Strata dtype names -> numpy dtypes. numpy has no bf16, fp8 or int4: those
# travel as their raw bits (bf16 as uint16, the others one byte each).
_NUMPY_DTYPES = {
    "f32": np.float32, "f16": np.float16, "f64": np.float64,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "bool": np.bool_, "bf16": np.uint16,
}

_ENTRY_KINDS = {1: "generic", 2: "prefill", 3: "decode"}


@dataclass(frozen=True)
class Dim:
    """One dim of a signature: ``extent`` (-1 when symbolic), the symbol's
    name (None when static) and the compiled maximum."""
    extent: int
    symbol: Optional[str]
    max: int

    def __repr__(self) -> str:
        if self.symbol is None:
            return str(self.extent)
        return f"{self.symbol}<={self.max}"


@dataclass(frozen=True)
class TensorSignature:
    """An input or output: name, Strata dtype name ("f32", "i64", ...),
    the numpy dtype it is passed as, and its dims."""
    name: str
    dtype: str
    numpy_dtype: np.dtype
    dims: Tuple[Dim, ...]
    dtype_code: int

    @property
    def shape(self) -> Tuple[Union[int, str], ...]:
        """Static extents as ints, symbolic dims by name."""
        return tuple(d.extent if d.symbol is None else d.symbol
                     for d in self.dims)


@dataclass(frozen=True)
class EntrySignature:
    """An entry point: its name, kind ("generic", "prefill" or "decode"),
    inputs and outputs in call order."""
    name: str
    kind: str
    inputs: Tuple[TensorSignature, ...]
    outputs: Tuple[TensorSignature, ...]


def _signature(t: Mapping[str, Any]) -> TensorSignature:
    return TensorSignature(
        name=t["name"], dtype=t["dtype"],
        numpy_dtype=np.dtype(_NUMPY_DTYPES.get(t["dtype"], np.uint8)),
        dims=tuple(Dim(*d) for d in t["dims"]), dtype_code=t["dtype_code"])


class Module:
    """A loaded artifact: its entries, state, kernels and weights. Made by
    ``strata.load``."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.fspath(path)
        self._module = _strata.Module(self.path)
        self.entries: Dict[str, EntrySignature] = {}
        for e in self._module.entries():
            self.entries[e["name"]] = EntrySignature(
                name=e["name"], kind=_ENTRY_KINDS.get(e["kind"], "generic"),
                inputs=tuple(_signature(t) for t in e["inputs"]),
                outputs=tuple(_signature(t) for t in e["outputs"]))
        # What every run looks up.
        self._inputs_by_name = {
            e.name: {t.name: t for t in e.inputs}
            for e in self.entries.values()}
        self._output_names = {e.name: [t.name for t in e.outputs]
                              for e in self.entries.values()}

    def session(self, threads: int = 0) -> "Session":
        """A session running this module on ``threads`` threads (0: one per
        CPU the process may use)."""
        return Session(self, threads)

    @property
    def states(self) -> List[Dict[str, Any]]:
        """The state tensors (the KV cache) the runtime keeps per session:
        name, dtype, per_sequence and dims."""
        return [dict(s, dims=tuple(Dim(*d) for d in s["dims"]))
                for s in self._module.states()]

    @property
    def kernels(self) -> List[Tuple[str, str]]:
        """(runtime import, kernel set serving it on this host) pairs."""
        return list(self._module.kernels())

    @property
    def cpu_features(self) -> List[str]:
        """The CPU features the native code was compiled for."""
        return list(self._module.cpu_features())

    @property
    def weights_size(self) -> int:
        """Bytes of the weights section."""
        return self._module.weights_size()

    def verify_weights(self) -> None:
        """Reads every weight byte and checks the checksum (DataLossError
        if it does not match)."""
        self._module.verify_weights()

    def __repr__(self) -> str:
        return f"strata.Module({self.path!r}, entries={list(self.entries)})"


def load(path: Union[str, os.PathLike]) -> Module:
    """Maps the artifact at ``path`` and loads its code. NotFoundError for
    a missing file, DataLossError for a corrupt one, IncompatibleError for
    one this runtime or CPU cannot run."""
    return Module(path)


def _as_array(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__"):
        return np.from_dlpack(value)
    return np.asarray(value)


class Session:
    """Runs of one module's entries; holds the module's state (KV cache).
    Not for concurrent runs; ``cancel`` may come from any thread."""

    def __init__(self, module: Module, threads: int = 0):
        self.module = module
        self._session = _strata.Session(module._module, threads)
        # The strata.Generator that owns the KV cache, if any (a weakref).
        self._generator = None

    def run(self, inputs: Mapping[str, Any], entry: Optional[str] = None,
            outputs: Optional[Sequence[str]] = None) -> Dict[str, np.ndarray]:
        """Runs ``entry`` (default: "main", or the module's only entry) on
        ``inputs`` by name and returns its outputs by name (only those in
        ``outputs`` when given). InvalidArgumentError names an input of the
        wrong dtype, rank or shape, or one missing or unknown."""
        signature = self._entry(entry)
        if signature.kind != "generic":
            self._check_no_generator(f"running '{signature.name}'")
        known = self.module._inputs_by_name[signature.name]
        names, arrays, dtypes = [], [], []
        for name, value in inputs.items():
            t = known.get(name)
            if t is None:
                raise InvalidArgumentError(
                    f"entry '{signature.name}' has no input '{name}' (its "
                    f"inputs: {', '.join(known) or 'none'})", 3)
            array = value if type(value) is np.ndarray else _as_array(value)
            # Identity first: numpy's dtype comparison is slow and builtin
            # dtypes are singletons.
            if array.dtype is not t.numpy_dtype and \
                    array.dtype != t.numpy_dtype:
                raise InvalidArgumentError(
                    f"input '{name}' is {array.dtype}, expected {t.dtype} "
                    f"(numpy {t.numpy_dtype})", 3)
            names.append(name)
            flags = array.flags
            arrays.append(array if flags.c_contiguous and flags.aligned
                          else np.require(array, requirements=["C", "A"]))
            dtypes.append(t.dtype_code)
        results = self._session.run(signature.name, names, arrays, dtypes,
                                    len(signature.outputs))
        named = dict(zip(self.module._output_names[signature.name], results))
        if outputs is None:
            return named
        missing = [o for o in outputs if o not in named]
        if missing:
            raise InvalidArgumentError(
                f"entry '{signature.name}' has no output "
                f"'{missing[0]}' (its outputs: {', '.join(named)})", 3)
        return {o: named[o] for o in outputs}

    @property
    def last_run_seconds(self) -> float:
        """Seconds the runtime itself took in the last run (what
        session.run took beyond that is the Python layer's)."""
        return self._session.last_run_seconds()

    def cancel(self) -> None:
        """Stops the run in progress (it raises CancelledError)."""
        self._session.cancel()

    @property
    def threads(self) -> int:
        return self._session.threads()

    @threads.setter
    def threads(self, count: int) -> None:
        self._session.set_threads(count)

    def read_state(self, index: int) -> np.ndarray:
        """A copy of state tensor ``index`` (module.states order)."""
        return self._session.read_state(index)

    def reset_state(self, slot: int = -1) -> None:
        """Zero-fills every state (slot -1) or one sequence slot's."""
        self._check_no_generator("resetting the state")
        self._session.reset_state(slot)

    def trim(self) -> int:
        """Frees the buffers the session keeps for its next run (for a
        session that will sit idle); returns their bytes."""
        return self._session.trim()

    def _check_no_generator(self, what: str) -> None:
        if self._generator is not None and self._generator() is not None:
            raise FailedPreconditionError(
                f"{what} would disturb the sequences of this session's "
                "Generator, which owns its KV cache", 9)

    def _entry(self, entry: Optional[str]) -> EntrySignature:
        entries = self.module.entries
        if entry is None:
            entry = "main" if "main" in entries or len(entries) != 1 \
                else next(iter(entries))
        if entry not in entries:
            raise InvalidArgumentError(
                f"the module has no entry '{entry}' (its entries: "
                f"{', '.join(entries)})", 3)
        return entries[entry]
