"""strata.compile: an ONNX model to a .strata artifact, in-process.

Options are the compiler's (the flags of strata-compile) as keyword
arguments; one left at None keeps the compiler's default. A model that
does not compile raises CompileError naming the ONNX nodes at fault.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from .errors import CompileError, Diagnostic, UnimplementedError
from .runtime import Module, load

_SEVERITIES = ("error", "warning", "note", "remark")

try:
    from . import _strata_compiler
except ImportError:  # a runtime-only build
    _strata_compiler = None


class Artifact:
    """A compiled artifact on disk: ``path``, the compiler's ``warnings``
    (Diagnostics), the compile ``report`` (a dict, when compiled with
    report=True) and ``load()``. One compiled to a temporary file (no
    ``output`` given) is deleted with this object."""

    def __init__(self, path: str, diagnostics: Sequence[Diagnostic],
                 temporary_dir: Optional[str] = None,
                 report: Optional[Dict[str, Any]] = None):
        self.path = path
        self.diagnostics = list(diagnostics)
        self.report = report
        if temporary_dir is not None:
            self._cleanup = weakref.finalize(self, shutil.rmtree,
                                             temporary_dir, True)

    @property
    def warnings(self):
        return [d for d in self.diagnostics if d.severity == "warning"]

    @property
    def size(self) -> int:
        """Bytes of the artifact file."""
        return os.path.getsize(self.path)

    def load(self) -> Module:
        """The artifact loaded (strata.load); the Module keeps it alive."""
        module = load(self.path)
        module._artifact = self  # a temporary file outlives the module
        return module

    def __repr__(self) -> str:
        return f"strata.Artifact({self.path!r})"


def _model_path(model: Any, workdir: str) -> str:
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    serialize = getattr(model, "SerializeToString", None)
    if serialize is None:
        raise TypeError("model must be a path or an onnx.ModelProto, got "
                        f"{type(model).__name__}")
    path = os.path.join(workdir, "model.onnx")
    with open(path, "wb") as f:
        f.write(serialize())
    return path


def compile(model: Union[str, os.PathLike, Any],
            output: Optional[Union[str, os.PathLike]] = None, *,
            max_batch: Optional[int] = None, max_seq: Optional[int] = None,
            dims: Optional[Mapping[str, int]] = None, target: str = "cpu",
            target_cpu: Optional[str] = None,
            prefill_precision: Optional[str] = None,
            decode_precision: Optional[str] = None,
            kv_cache_precision: Optional[str] = None,
            int4_group: Optional[int] = None,
            keep_fp32_lm_head: Optional[bool] = None,
            shared_prefill_weights: Optional[bool] = None,
            calibration_data: Optional[Union[str, os.PathLike]] = None,
            calibration_format: Optional[str] = None,
            window: Optional[int] = None, sinks: Optional[int] = None,
            window_layers: Optional[Iterable[int]] = None,
            global_topk: Optional[int] = None,
            global_block: Optional[int] = None,
            generation_entries: Optional[bool] = None,
            prefill_chunk: Optional[int] = None,
            prefill_all_logits: Optional[bool] = None,
            verify_length: Optional[int] = None,
            kv_block_size: int = 0, kv_blocks: int = 0,
            fusion: Optional[bool] = None,
            runtime_attention: Optional[bool] = None,
            bindings: Optional[Mapping[str, Union[str, os.PathLike]]] = None,
            tensor_parallel: int = 1, pipeline_parallel: int = 1,
            rank: Optional[int] = None,
            report: bool = False) -> Artifact:
    """Compiles ``model`` (a path to .onnx/.onnxtext/.mlir, or an
    onnx.ModelProto) to ``output`` (default: a temporary file owned by the
    returned Artifact).

    max_batch / max_seq: maxima of the batch and sequence dims (8, 1024).
    dims: {symbolic dim name: maximum} for the others.
    target: "cpu" (the only backend of this build); target_cpu: "x86-64-v3"
    (portable default), "x86-64-v4", "native" or an LLVM CPU name.
    prefill_precision: "fp32", "bf16" or "int8" (W8A8);
    decode_precision: "fp32", "bf16", "int8" or "int4"; int4_group 32/64/128;
    kv_cache_precision: "fp32", "bf16" or "int8".
    window / sinks / window_layers: sliding-window attention; global_topk /
    global_block: top-k global blocks (docs/design/sparse-attention.md).
    generation_entries=False: no prefill/decode entries for a decoder;
    verify_length: tokens per sequence of its verify entry (speculative
    decoding, docs/speculative.md; default 9, 0: none).
    kv_block_size: a paged KV cache of blocks of that many positions, the
    entries taking block tables instead of slots (docs/serving.md; 0, the
    default: a contiguous cache per slot); kv_blocks: blocks in each
    cache's pool (0: what max_batch sequences of the whole context take).
    bindings: {graph input: TensorProto .pb file} frozen at compile time.
    tensor_parallel / pipeline_parallel: the artifact of one process of a
    tensor- and/or pipeline-parallel job (docs/distributed.md), ``rank``
    its world rank (stage * tensor_parallel + tensor rank, as
    ``strata-compile --rank`` numbers them); compile each rank to its own
    file and run them with ``mpirun ... strata-run``.
    report: keep what the compile did as ``Artifact.report`` (and
    ``CompileError.report``): op counts before and after fusion, the
    candidates that did not fuse, runtime kernel calls per entry, the memory
    plan, sizes (docs/python.md#the-compile-report).
    """
    if target != "cpu":
        raise UnimplementedError(
            f"target '{target}': this build compiles for 'cpu' only", 12)
    if _strata_compiler is None:
        raise UnimplementedError(
            "this is a runtime-only build of strata: it loads and runs "
            "artifacts but cannot compile", 12)
    if tensor_parallel < 1 or pipeline_parallel < 1:
        raise ValueError("tensor_parallel and pipeline_parallel must be >= 1")
    world = tensor_parallel * pipeline_parallel
    if world > 1 and rank is None:
        raise ValueError(f"a parallel artifact is one rank's: pass rank= "
                         f"0..{world - 1} and compile each")
    if rank is not None and not 0 <= rank < world:
        raise ValueError(f"rank {rank} outside 0..{world - 1}")
    workdir = tempfile.mkdtemp(prefix="strata-")
    keep_workdir = False
    try:
        model_path = _model_path(model, workdir)
        output_path = os.path.join(workdir, "model.strata") \
            if output is None else os.fspath(output)
        status, message, raw, report_json = _strata_compiler.compile_file(
            model_path, output_path,
            target_cpu=target_cpu,
            dims=[f"{k}={v}" for k, v in (dims or {}).items()] or None,
            max_batch=max_batch, max_seq=max_seq,
            enable_fusion=fusion, runtime_attention=runtime_attention,
            bindings=[f"{k}={os.fspath(v)}"
                      for k, v in (bindings or {}).items()] or None,
            decode_precision=decode_precision,
            prefill_precision=prefill_precision,
            kv_cache_precision=kv_cache_precision, int4_group=int4_group,
            keep_fp32_lm_head=keep_fp32_lm_head,
            shared_prefill_weights=shared_prefill_weights,
            calibration_data=None if calibration_data is None
            else os.fspath(calibration_data),
            calibration_format=calibration_format,
            no_generation_entries=None if generation_entries is None
            else not generation_entries,
            prefill_chunk=prefill_chunk,
            prefill_all_logits=prefill_all_logits,
            verify_length=verify_length,
            kv_block_size=kv_block_size, kv_blocks=kv_blocks,
            attention_window=window, attention_sinks=sinks,
            attention_layers=None if window_layers is None
            else list(window_layers),
            attention_global_topk=global_topk, attention_block=global_block,
            tensor_ranks=tensor_parallel if world > 1 else None,
            tensor_rank=rank % tensor_parallel if world > 1 else None,
            pipeline_stages=pipeline_parallel if world > 1 else None,
            pipeline_stage=rank // tensor_parallel if world > 1 else None,
            report=report)
        report_data = json.loads(report_json) if report_json else None
        diagnostics = [Diagnostic(_SEVERITIES[s] if s < len(_SEVERITIES)
                                  else "error", loc, text)
                       for s, loc, text in raw]
        if status != 0:
            error = CompileError(message or "compilation failed", status,
                                 diagnostics)
            error.report = report_data
            raise error
        keep_workdir = output is None  # the Artifact removes it
        return Artifact(output_path, diagnostics,
                        workdir if keep_workdir else None, report_data)
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
