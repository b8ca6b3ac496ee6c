"""Tests of check_layering.py on small trees with known violations, so that
a checker that silently passes everything cannot go unnoticed.
Usage: python check_layering_test.py"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layering  # noqa: E402


class IncludeLayeringTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        for header in ("compiler/pipeline/Pipelines.h", "passes/Passes.h",
                       "compiler/import/OnnxImporter.h",
                       "codegen/abi/strata_kernel_abi.h",
                       "compiler/capi/strata_compiler.h",
                       "dialects/strata/IR/StrataOps.h",
                       "runtime/include/strata/runtime/api.h"):
            self.write(header, "")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def problems(self):
        return check_layering.check_includes(self.root)

    def assertOneProblem(self, *parts):
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        for part in parts:
            self.assertIn(part, problems[0])

    def test_passes_must_not_include_the_pipeline(self):
        self.write("passes/FuseX.cpp",
                   '#include "passes/Passes.h"\n'
                   '#include "compiler/pipeline/Pipelines.h"\n')
        self.assertOneProblem("passes/FuseX.cpp:2",
                              "'compiler/pipeline/Pipelines.h' (pipeline)")

    def test_dialect_must_not_include_passes(self):
        self.write("dialects/strata/IR/StrataOps.cpp",
                   '#include "passes/Passes.h"\n')
        self.assertOneProblem("dialects/strata/IR/StrataOps.cpp:1",
                              "'passes/Passes.h' (passes)")

    def test_codegen_must_not_include_the_importer(self):
        self.write("codegen/cpu/Emit.cpp",
                   '#include "dialects/strata/IR/StrataOps.h"\n'
                   '#include "compiler/import/OnnxImporter.h"\n')
        self.assertOneProblem("codegen/cpu/Emit.cpp:2", "(import)")

    def test_runtime_includes_only_the_abi(self):
        self.write("runtime/src/module.cc",
                   '#include "strata_kernel_abi.h"\n'
                   '#include "strata/runtime/api.h"\n'
                   '#include <vector>\n'
                   '#include "llvm/ADT/StringRef.h"\n')
        self.assertOneProblem("runtime/src/module.cc:4",
                              "'llvm/ADT/StringRef.h' (mlir)")

    def test_runtime_must_not_include_the_tokenizers(self):
        self.write("tokenizers/include/strata/tokenizers/tokenizer.h", "")
        self.write("runtime/src/session.cc",
                   '#include "strata/tokenizers/tokenizer.h"\n')
        self.assertOneProblem("runtime/src/session.cc:1", "(tokenizers)")

    def test_tokenizers_use_the_runtime_status_and_json_only(self):
        self.write("tokenizers/src/vocabulary.cc",
                   '#include "strata/runtime/api.h"\n'
                   '#include <nlohmann/json.hpp>\n'
                   '#include <sentencepiece_processor.h>\n'
                   '#include "passes/Passes.h"\n')
        self.assertOneProblem("tokenizers/src/vocabulary.cc:4", "(passes)")

    def test_runtime_must_not_include_the_compiler(self):
        self.write("runtime/src/module.cc", '#include "passes/Passes.h"\n')
        self.assertOneProblem("runtime/src/module.cc:1", "(passes)")

    def test_only_tools_and_capi_include_the_pipeline(self):
        self.write("compiler/capi/Compiler.cpp",
                   '#include "compiler/pipeline/Pipelines.h"\n')
        self.write("tools/strata-compile/strata-compile.cpp",
                   '#include "compiler/capi/strata_compiler.h"\n'
                   '#include "compiler/pipeline/Pipelines.h"\n')
        self.assertEqual(self.problems(), [])
        self.write("compiler/dispatch/Regions.cpp",
                   '#include "compiler/pipeline/Pipelines.h"\n')
        self.assertOneProblem("compiler/dispatch/Regions.cpp:1", "(pipeline)")

    def test_runtime_tools_must_not_include_the_compiler(self):
        self.write("tools/strata-run/strata-run.cpp",
                   '#include "strata/runtime/api.h"\n'
                   '#include "mlir/IR/Builders.h"\n')
        self.assertOneProblem("tools/strata-run/strata-run.cpp:2", "(mlir)")

    def test_runtime_tools_must_not_include_the_llvm_tool_header(self):
        self.write("tools/compiler-common/HelpOptions.h",
                   '#include "llvm/Support/CommandLine.h"\n')
        self.write("tools/common/ParseCount.h", "#include <cstdlib>\n")
        self.write("tools/strata-import/strata-import.cpp",
                   '#include "tools/compiler-common/HelpOptions.h"\n'
                   '#include "tools/common/ParseCount.h"\n')
        self.write("tools/strata-bench/strata-bench.cpp",
                   '#include "tools/common/ParseCount.h"\n'
                   '#include "tools/compiler-common/HelpOptions.h"\n')
        self.assertOneProblem("tools/strata-bench/strata-bench.cpp:2",
                              "(compiler-tools-common)")

    def test_unknown_quoted_include_is_reported(self):
        self.write("passes/FuseX.cpp", '#include "Nowhere.h"\n')
        self.assertOneProblem("passes/FuseX.cpp:1", "'Nowhere.h'")

    def test_generated_headers_belong_to_their_folder(self):
        self.write("passes/FuseX.cpp", '#include "passes/Passes.h.inc"\n')
        self.write("dialects/strata/IR/StrataOps.cpp",
                   '#include "passes/Passes.h.inc"\n')
        self.assertOneProblem("dialects/strata/IR/StrataOps.cpp:1",
                              "(passes)")


class LinkLayeringTest(unittest.TestCase):
    def problems(self, lines):
        with tempfile.NamedTemporaryFile("w", suffix=".tsv",
                                         delete=False) as f:
            f.write("".join(line + "\n" for line in lines))
        try:
            return check_layering.check_links(
                check_layering.read_link_graph(f.name))
        finally:
            os.unlink(f.name)

    def test_layered_graph_passes(self):
        self.assertEqual(self.problems([
            "StrataDialect\tdialects/strata/IR\tMLIR;LLVM",
            "StrataPasses\tpasses\tStrataDialect;MLIR",
            "StrataPipelines\tcompiler/pipeline\tStrataPasses;MLIR",
            "strata_runtime\truntime\tThreads::Threads;dl",
            "strata-run\ttools/strata-run\tstrata_runtime",
            "strata-opt\ttools/strata-opt\tStrataPipelines;MLIR",
        ]), [])

    def test_passes_must_not_link_the_pipeline(self):
        problems = self.problems([
            "StrataPasses\tpasses\tStrataPipelines",
            "StrataPipelines\tcompiler/pipeline\t",
        ])
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("target StrataPasses", problems[0])
        self.assertIn("'StrataPipelines' (pipeline)", problems[0])

    def test_runtime_must_not_link_mlir_even_through_genex(self):
        problems = self.problems([
            "strata_runtime\truntime\t$<LINK_ONLY:MLIR>;::@(0x1);dl",
        ])
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("'MLIR' (mlir)", problems[0])

    def test_only_the_tokenizers_link_sentencepiece(self):
        problems = self.problems([
            "strata_tokenizers\ttokenizers\tstrata_runtime;"
            "PkgConfig::STRATA_SENTENCEPIECE;nlohmann_json::nlohmann_json",
            "strata_runtime\truntime\tPkgConfig::STRATA_SENTENCEPIECE",
        ])
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("target strata_runtime", problems[0])
        self.assertIn("(sentencepiece)", problems[0])

    def test_only_the_importer_links_onnx(self):
        problems = self.problems([
            "StrataImport\tcompiler/import\tonnx;onnx_proto",
            "StrataPasses\tpasses\tonnx",
        ])
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("target StrataPasses", problems[0])


if __name__ == "__main__":
    unittest.main()
