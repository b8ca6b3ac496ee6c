"""Exceptions of the strata package: one class per runtime status code.

Every failure the runtime reports arrives as the class of its code, all
subclasses of StrataError, with the runtime's message (which names the
input, node or file at fault) and the numeric ``code``. Compile failures
are CompileError, which also carries the compiler's diagnostics.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


class StrataError(RuntimeError):
    """A failure reported by the Strata runtime or compiler."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


class CancelledError(StrataError):
    """A run or generation stopped by a cancel request (code 1)."""


class InvalidArgumentError(StrataError, ValueError):
    """A bad input (wrong dtype, shape, name) or option (code 3)."""


class NotFoundError(StrataError, LookupError):
    """A missing file, entry, input or sequence (code 5)."""


class ResourceExhaustedError(StrataError, MemoryError):
    """Out of memory, sequence slots or cache (code 8)."""


class FailedPreconditionError(StrataError):
    """The model or module cannot do what was asked (code 9)."""


class OutOfRangeError(StrataError, IndexError):
    """A prompt or index past what the module was compiled for (code 11)."""


class UnimplementedError(StrataError, NotImplementedError):
    """Not supported by this build (code 12)."""


class InternalError(StrataError):
    """A bug in Strata, contained (code 13)."""


class UnavailableError(StrataError, OSError):
    """A file could not be read, mapped or written (code 14)."""


class DataLossError(StrataError):
    """A corrupt artifact (code 15)."""


class IncompatibleError(StrataError):
    """An artifact this runtime or CPU cannot run (code 18)."""


_BY_CODE = {
    1: CancelledError,
    3: InvalidArgumentError,
    5: NotFoundError,
    8: ResourceExhaustedError,
    9: FailedPreconditionError,
    11: OutOfRangeError,
    12: UnimplementedError,
    13: InternalError,
    14: UnavailableError,
    15: DataLossError,
    18: IncompatibleError,
}


def error_class(code: int) -> type:
    """The exception class of status ``code`` (StrataError if unknown)."""
    return _BY_CODE.get(code, StrataError)


@dataclass(frozen=True)
class Diagnostic:
    """One compiler message: severity ("error", "warning", "note",
    "remark"), the ONNX node name(s) or file it is about ("" if none), and
    the text."""
    severity: str
    location: str
    message: str


class CompileError(StrataError):
    """A model that did not compile. ``diagnostics`` lists every message;
    ``nodes`` the ONNX node names the errors are located at; ``report`` the
    compile report as far as it got (with strata.compile(report=True))."""

    def __init__(self, message: str, code: int,
                 diagnostics: Optional[List[Diagnostic]] = None):
        super().__init__(message, code)
        self.diagnostics = list(diagnostics or [])
        nodes = []
        for d in self.diagnostics:
            if d.severity != "error" or not d.location:
                continue
            for name in d.location.split(", "):
                if name not in nodes:
                    nodes.append(name)
        self.nodes = nodes
        self.report = None
