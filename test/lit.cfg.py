# -*- Python -*-
# lit configuration of the strata test suite.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "STRATA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.strata_obj_root, "test")
# Inputs/ hold files other tests read; unit/ and models/ are run by ctest.
config.excludes = ["Inputs", "unit", "models", "e2e", "CMakeLists.txt", "lit.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.strata_test_python))
config.substitutions.append(("%models", config.strata_models_dir))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.strata_tools_dir, config.llvm_tools_dir]
tools = ["strata-opt", "strata-import", "strata-compile", "strata-run",
         "strata-bench"]
# Tools referenced by bare name inside helper scripts resolve through PATH.
llvm_config.with_environment("PATH", config.strata_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(tools, tool_dirs)

# NVRTC (the CUDA toolkit) for the tests that compile CUDA kernels; the
# compiler loads it with dlopen from the loader path or the toolkit's lib64.
def _has_nvrtc():
    import ctypes
    names = ["libnvrtc.so"] + [
        os.path.join(home, "lib64", "libnvrtc.so")
        for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                     "/usr/local/cuda") if home]
    for name in names:
        try:
            ctypes.CDLL(name)
            return True
        except OSError:
            pass
    return False


if _has_nvrtc():
    config.available_features.add("nvrtc")
