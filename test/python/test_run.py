"""strata.load, Module signatures and Session.run against onnxruntime."""
import time

import numpy as np
import onnxruntime as ort
import pytest

import strata

from conftest import fixture_path


def bert_inputs(batch=2, seq=16, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 100, (batch, seq), dtype=np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids)}


def test_signatures(bert_artifact):
    module = strata.load(bert_artifact.path)
    main = module.entries["main"]
    assert main.kind == "generic"
    assert [t.name for t in main.inputs] == [
        "input_ids", "attention_mask", "token_type_ids"]
    assert main.inputs[0].dtype == "i64"
    assert main.inputs[0].shape == ("batch", "sequence")
    assert main.inputs[0].dims[1].max == 32
    assert main.outputs[0].shape == ("batch", "sequence", 64)
    assert module.weights_size > 0
    assert all(isinstance(f, str) for f in module.cpu_features)
    module.verify_weights()


def test_matches_onnxruntime(bert_artifact):
    # fp32 end to end; 1e-4 relative to the output's scale, as the C++
    # fixture checks (test/e2e/check_fixtures.py).
    inputs = bert_inputs()
    session = bert_artifact.load().session(threads=2)
    got = session.run(inputs)["last_hidden_state"]
    ref = ort.InferenceSession(
        fixture_path("bert_op17", "model.onnx"),
        providers=["CPUExecutionProvider"]).run(None, inputs)[0]
    assert got.shape == ref.shape and got.dtype == np.float32
    scale = max(1.0, float(np.abs(ref).max()))
    assert float(np.abs(got - ref).max()) <= 1e-4 * scale


def test_outputs_are_views_of_runtime_memory(bert_artifact):
    out = bert_artifact.load().session().run(bert_inputs())
    array = out["last_hidden_state"]
    assert not array.flags["OWNDATA"]  # no copy out of the runtime
    del out
    assert np.isfinite(array).all()  # still alive through the view


def test_dlpack_and_non_contiguous_inputs(bert_artifact):
    session = bert_artifact.load().session()
    inputs = bert_inputs()
    ref = session.run(inputs)["last_hidden_state"]

    class DLPackOnly:
        def __init__(self, array):
            self._array = array

        def __dlpack__(self, **kwargs):
            return self._array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self._array.__dlpack_device__()

    wide = np.zeros((2, 32), dtype=np.int64)
    wide[:, ::2] = inputs["input_ids"]
    got = session.run({"input_ids": wide[:, ::2],  # strided: copied
                       "attention_mask": DLPackOnly(inputs["attention_mask"]),
                       "token_type_ids": inputs["token_type_ids"]})
    np.testing.assert_array_equal(got["last_hidden_state"], ref)


def test_output_selection(bert_artifact):
    session = bert_artifact.load().session()
    assert list(session.run(bert_inputs(),
                            outputs=["last_hidden_state"])) == [
        "last_hidden_state"]
    with pytest.raises(strata.InvalidArgumentError, match="no output 'nope'"):
        session.run(bert_inputs(), outputs=["nope"])


def test_wrong_dtype_names_the_input(bert_artifact):
    session = bert_artifact.load().session()
    inputs = bert_inputs()
    inputs["attention_mask"] = inputs["attention_mask"].astype(np.float32)
    with pytest.raises(strata.InvalidArgumentError, match="attention_mask"):
        session.run(inputs)


def test_wrong_shape_names_the_input(bert_artifact):
    session = bert_artifact.load().session()
    inputs = bert_inputs()
    inputs["token_type_ids"] = np.zeros((2, 17), dtype=np.int64)
    with pytest.raises(strata.InvalidArgumentError, match="token_type_ids"):
        session.run(inputs)
    inputs = bert_inputs(seq=33)  # past the compiled maximum of 32
    with pytest.raises(strata.InvalidArgumentError, match="input_ids"):
        session.run(inputs)


def test_missing_and_unknown_inputs(bert_artifact):
    session = bert_artifact.load().session()
    inputs = bert_inputs()
    del inputs["token_type_ids"]
    with pytest.raises(strata.InvalidArgumentError, match="token_type_ids"):
        session.run(inputs)
    with pytest.raises(strata.InvalidArgumentError, match="no input 'x'"):
        session.run(dict(bert_inputs(), x=np.zeros(1)))
    with pytest.raises(strata.InvalidArgumentError, match="no entry 'decode'"):
        session.run(bert_inputs(), entry="decode")


def test_bad_artifacts(tmp_path):
    with pytest.raises(strata.NotFoundError):
        strata.load(tmp_path / "missing.strata")
    junk = tmp_path / "junk.strata"
    junk.write_bytes(b"not an artifact" * 100)
    with pytest.raises(strata.StrataError) as info:
        strata.load(junk)
    assert isinstance(info.value, (strata.DataLossError,
                                   strata.IncompatibleError))


def test_threads_and_state(bert_artifact):
    session = bert_artifact.load().session(threads=1)
    assert session.threads == 1
    session.threads = 2
    assert session.threads == 2
    with pytest.raises(strata.InvalidArgumentError):
        session.threads = 100000
    session.reset_state()  # no state: a no-op


def test_threads_sharing_a_session(bert_artifact):
    # The GIL is released during runs; calls on one session take turns.
    import threading
    session = bert_artifact.load().session(threads=2)
    cases = [bert_inputs(seed=s) for s in range(4)]
    expected = [session.run(c)["last_hidden_state"] for c in cases]
    failures = []

    def worker(k):
        for i in range(10):
            j = (k + i) % len(cases)
            got = session.run(cases[j])["last_hidden_state"]
            if not np.array_equal(got, expected[j]):
                failures.append((k, i))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_cancel_from_another_thread(bert_artifact):
    import threading
    session = bert_artifact.load().session(threads=1)
    inputs = bert_inputs(seq=32)
    stop = threading.Event()

    def canceller():
        while not stop.is_set():
            session.cancel()

    t = threading.Thread(target=canceller)
    t.start()
    outcomes = set()
    # A run of this small model takes well under a millisecond, so on a
    # loaded host the canceller may not be scheduled inside many runs in a
    # row: run until one is cancelled, for at most 30 seconds.
    deadline = time.monotonic() + 30
    try:
        while "cancelled" not in outcomes and time.monotonic() < deadline:
            try:
                session.run(inputs)
                outcomes.add("ran")
            except strata.CancelledError:
                outcomes.add("cancelled")
    finally:
        stop.set()
        t.join()
    # A run was cancelled (each either finished or raised CancelledError);
    # the session stays usable.
    assert "cancelled" in outcomes
    assert session.run(bert_inputs())["last_hidden_state"].shape == (2, 16, 64)


def test_module_inspection_and_state(bytegpt_module):
    assert strata.kernel_isa() in ("amx", "avx512", "avx2", "scalar")
    assert all(isinstance(f, str) for f in strata.host_cpu_features())
    imports = [name for name, _set in bytegpt_module.kernels]
    assert "strata_rt_matmul_f32" in imports
    states = bytegpt_module.states
    assert states[0]["name"] == "kv_cache.0.key" and states[0]["per_sequence"]
    assert [d.max for d in states[0]["dims"]] == [2, 8, 128, 32]
    session = bytegpt_module.session()
    generator = strata.Generator(session)
    generator.generate([65, 66, 67], max_new_tokens=2)
    cache = session.read_state(0)
    assert cache.shape == (2, 8, 128, 32) and cache.dtype == np.float32
    # The generator owns the cache while it lives.
    with pytest.raises(strata.FailedPreconditionError, match="Generator"):
        session.reset_state()
    with pytest.raises(strata.FailedPreconditionError):
        strata.Generator(session)
    del generator
    session.reset_state()
    assert not session.read_state(0).any()
    with pytest.raises(strata.OutOfRangeError):
        session.read_state(1000)


def test_unusual_arrays(tmp_path):
    # bool, 0-d, read-only, unaligned and empty arrays.
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Not", ["b"], ["nb"]),
         helper.make_node("Add", ["x", "s"], ["y"])], "g",
        [helper.make_tensor_value_info("b", TensorProto.BOOL, [3]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("nb", TensorProto.BOOL, [3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    session = strata.compile(model, dims={"n": 8}).load().session()
    readonly = np.arange(5, dtype=np.float32)
    readonly.flags.writeable = False
    raw = np.zeros(4 * 5 + 1, np.uint8)
    raw[1:] = np.frombuffer(readonly.tobytes(), np.uint8)
    unaligned = np.frombuffer(raw.data, np.float32, 5, offset=1)
    assert not unaligned.flags.aligned
    for x in (readonly, unaligned):
        out = session.run({"b": np.array([True, False, True]), "x": x,
                           "s": np.float32(1.5) * np.ones((), np.float32)})
        np.testing.assert_array_equal(out["nb"], [False, True, False])
        assert out["nb"].dtype == np.bool_
        np.testing.assert_array_equal(out["y"], np.arange(5) + 1.5)
    empty = session.run({"b": np.zeros(3, bool), "x": np.zeros(0, np.float32),
                         "s": np.zeros((), np.float32)})
    assert empty["y"].shape == (0,)


def test_run_timing_and_trim(bert_artifact):
    session = bert_artifact.load().session()
    start = __import__("time").perf_counter()
    session.run(bert_inputs())
    wall = __import__("time").perf_counter() - start
    assert 0 < session.last_run_seconds <= wall
    assert session.trim() >= 0
    assert session.run(bert_inputs())["last_hidden_state"].shape == (2, 16, 64)
