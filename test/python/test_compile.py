"""strata.compile: options, ModelProto input and CompileError."""
import os

import onnx
import pytest
from onnx import TensorProto, helper

import strata

from conftest import fixture_path


def test_compile_to_a_temporary_file():
    artifact = strata.compile(fixture_path("bert_op17", "model.onnx"),
                              max_seq=16)
    path = artifact.path
    assert os.path.isfile(path) and artifact.size > 0
    module = artifact.load()
    assert module.entries["main"].inputs[0].dims[1].max == 16
    del artifact, module
    assert not os.path.exists(path)  # deleted with its last user


def test_compile_a_model_proto(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"],
                                                name="relu")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    artifact = strata.compile(model, tmp_path / "relu.strata")
    import numpy as np
    out = artifact.load().session().run(
        {"x": np.array([[-1, 2, -3], [4, -5, 6]], dtype=np.float32)})["y"]
    np.testing.assert_array_equal(out, [[0, 2, 0], [4, 0, 6]])


def test_bad_model_path(tmp_path):
    with pytest.raises(strata.CompileError) as info:
        strata.compile(tmp_path / "missing.onnx", tmp_path / "out.strata")
    assert info.value.code == 5  # NOT_FOUND
    assert isinstance(info.value, strata.StrataError)


def test_unsupported_op_names_the_node(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [])
    graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"],
                                                name="the_det_node")],
                              "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "det.onnx"
    onnx.save(model, path)
    with pytest.raises(strata.CompileError) as info:
        strata.compile(path, tmp_path / "det.strata")
    error = info.value
    assert "the_det_node" in error.nodes
    assert "Det" in str(error)
    assert any(d.severity == "error" for d in error.diagnostics)
    assert not (tmp_path / "det.strata").exists()


def test_verify_length(tmp_path):
    # A decoder gets the verify entry of speculative decoding by default;
    # verify_length sizes it, 0 leaves it out, a negative one is an error.
    model = fixture_path("bytegpt_draft", "decode.onnx")
    short = strata.compile(model, max_seq=64, verify_length=4).load()
    assert short.entries["verify"].inputs[0].dims[1].max == 4
    none = strata.compile(model, max_seq=64, verify_length=0).load()
    assert "verify" not in none.entries and "decode" in none.entries
    with pytest.raises(strata.CompileError, match="verify_length"):
        strata.compile(model, tmp_path / "x.strata", verify_length=-1)


def test_paged_kv_cache(tmp_path):
    # kv_block_size pages the KV cache: decode takes block tables of
    # ceil(64 / 16) blocks instead of slots; kv_blocks needs a block size.
    model = fixture_path("bytegpt_draft", "decode.onnx")
    paged = strata.compile(model, max_seq=64, kv_block_size=16).load()
    inputs = {t.name: t for t in paged.entries["decode"].inputs}
    assert "slots" not in inputs
    assert inputs["block_tables"].dims[1].max == 4
    with pytest.raises(strata.CompileError,
                       match="--kv-blocks only with --kv-block-size") as info:
        strata.compile(model, tmp_path / "x.strata", kv_blocks=8)
    assert info.value.code == 3  # INVALID_ARGUMENT


def test_bad_option_values(tmp_path):
    with pytest.raises(strata.CompileError, match="decode"):
        strata.compile(fixture_path("bert_op17", "model.onnx"),
                       tmp_path / "x.strata", decode_precision="int3")
    with pytest.raises(strata.UnimplementedError, match="cpu"):
        strata.compile(fixture_path("bert_op17", "model.onnx"),
                       target="cuda")
    with pytest.raises(TypeError):
        strata.compile(42)


def test_report_as_python_data(tmp_path):
    artifact = strata.compile(fixture_path("bert_op17", "model.onnx"),
                              tmp_path / "bert.strata", max_seq=16,
                              report=True)
    report = artifact.report
    # The fixture's fusion, as its meta.json expects it.
    assert report["fused_ops"]["strata.attention"] == 2
    assert report["fused_ops"]["strata.layer_norm"] == 5
    assert report["missed_fusions"] == []
    assert report["codegen_done"] and report["codegen"]["matmul_calls"] > 0
    plan = report["memory_plan"]
    assert plan["planned_buffers"] > 0 and plan["arena_bytes"] > 0
    main = [d for d in report["codegen"]["dispatches"] if d["entry"] == "main"]
    assert main and main[0]["total"] > 0
    assert report["weights_bytes"] > 0
    assert strata.compile(fixture_path("bert_op17", "model.onnx"),
                          max_seq=16).report is None


def test_report_of_a_failed_compile(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [])
    graph = helper.make_graph([helper.make_node("Det", ["x"], ["y"],
                                                name="det")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(strata.CompileError) as info:
        strata.compile(model, report=True)
    assert info.value.report is not None
    assert info.value.report["codegen_done"] is False


def test_parallel_ranks(tmp_path):
    # One rank's artifact of a tensor x pipeline job: the report counts the
    # collectives of its share (two all-reduces a layer, a row-parallel
    # attention output and MLP down projection) and the stage hand-overs.
    model = fixture_path("bytegpt_draft", "decode.onnx")
    for rank in range(4):
        report = strata.compile(model, tmp_path / f"m.rank{rank}.strata",
                                max_seq=64, tensor_parallel=2,
                                pipeline_parallel=2, rank=rank,
                                report=True).report
        assert report["tensor_parallel"]["all_reduces"] > 0
        assert report["pipeline_parallel"]["sends"] > 0
    whole = strata.compile(model, max_seq=64, report=True).report
    assert whole["tensor_parallel"]["all_reduces"] == 0
    assert whole["pipeline_parallel"]["sends"] == 0
    with pytest.raises(ValueError, match="rank="):
        strata.compile(model, tmp_path / "x.strata", tensor_parallel=2)
    with pytest.raises(ValueError, match="outside"):
        strata.compile(model, tmp_path / "x.strata", pipeline_parallel=2,
                       rank=2)
    # A stage count the layers cannot fill is the compiler's error.
    with pytest.raises(strata.CompileError, match="pipeline"):
        strata.compile(model, tmp_path / "x.strata", pipeline_parallel=64,
                       rank=0)
