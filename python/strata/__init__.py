"""Strata: an ahead-of-time ONNX compiler and thin runtime for transformer
inference.

    import strata
    artifact = strata.compile("model.onnx", max_seq=256)
    module = artifact.load()
    outputs = module.session().run({"input_ids": ids})
    generator = strata.Generator(module, tokenizer=strata.Tokenizer.byte())
    print(generator.generate("Hello", max_new_tokens=20).text)

docs/python.md is the tutorial; every failure is a strata.errors class.
"""
from . import _strata
from . import compiler as _compiler
from .compiler import Artifact, compile
from .errors import (CancelledError, CompileError, DataLossError, Diagnostic,
                     FailedPreconditionError, IncompatibleError,
                     InternalError, InvalidArgumentError, NotFoundError,
                     OutOfRangeError, ResourceExhaustedError, StrataError,
                     UnavailableError, UnimplementedError)
from .generate import Generation, Generator
from .runtime import (Dim, EntrySignature, Module, Session, TensorSignature,
                      load)
from .tokenizer import Tokenizer

__version__ = "0.7.0"

#: True when this build includes the compiler (a runtime-only one does not).
has_compiler: bool = _compiler._strata_compiler is not None


def host_cpu_features():
    """The CPU features of this host the runtime knows."""
    return list(_strata.host_cpu_features())


def kernel_isa() -> str:
    """The instruction set the runtime kernels use here ("avx512", ...)."""
    return _strata.kernel_isa()


__all__ = [
    "Artifact", "CancelledError", "CompileError", "DataLossError",
    "Diagnostic", "Dim", "EntrySignature", "FailedPreconditionError",
    "Generation", "Generator", "IncompatibleError", "InternalError",
    "InvalidArgumentError", "Module", "NotFoundError", "OutOfRangeError",
    "ResourceExhaustedError", "Session", "StrataError", "TensorSignature",
    "Tokenizer", "UnavailableError", "UnimplementedError", "compile",
    "has_compiler", "host_cpu_features", "kernel_isa", "load",
]
