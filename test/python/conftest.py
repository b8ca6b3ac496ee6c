"""Fixtures of the Python package tests: the repository's test models
compiled once per session through strata.compile."""
import os

import pytest

import strata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "test", "models", "fixtures")


def fixture_path(*parts):
    return os.path.join(FIXTURES, *parts)


@pytest.fixture(scope="session")
def bert_artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("bert") / "bert.strata"
    return strata.compile(fixture_path("bert_op17", "model.onnx"), out,
                          max_batch=2, max_seq=32)


@pytest.fixture(scope="session")
def bytegpt_module():
    # A temporary artifact: the Module keeps it alive.
    return strata.compile(fixture_path("bytegpt", "decode.onnx"),
                          max_batch=2, max_seq=128).load()
