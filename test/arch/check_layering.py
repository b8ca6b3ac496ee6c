"""The layering of docs/architecture.md, checked on #includes and links.

Every source file and every CMake target belongs to the component whose
path prefix is the longest match. A component may include headers of, and
link, only itself and the components it uses (directly or through them),
and only the outside libraries its row names. Two graphs are checked:
  - the #include directives of every .h/.hpp/.c/.cc/.cpp file under the
    components' folders, resolved the way the build's include paths do, and
  - the direct links of every target, as CMake computed them: the
    strata-link-graph.tsv that the configure step writes
    (cmake/StrataLinkGraph.cmake).
Usage: python check_layering.py SOURCE_DIR [--link-graph FILE]
Prints one line per violation naming the file and include (or target and
link), then a closing line; exits 1 if there is any violation."""
import argparse
import os
import re
import sys
from typing import NamedTuple

# Outside libraries, by include-path prefix and by link name.
MLIR = "mlir"        # MLIR, LLVM, lld
ONNX = "onnx"        # onnx and protobuf
GTEST = "gtest"
JSON = "json"        # nlohmann/json
SENTENCEPIECE = "sentencepiece"
NANOBIND = "nanobind"  # nanobind and Python's C API (the Python package)
HTTP = "http"        # cpp-httplib
MPI = "mpi"          # an MPI implementation (Open MPI, MPICH)


class Component(NamedTuple):
    name: str
    prefixes: tuple  # folders ("dir/") or files, relative to the repository
    uses: tuple      # components it may depend on (transitively closed)
    outside: tuple   # outside libraries it may depend on


# Bottom to top. The compiler C API (compiler/capi/) and the tools are the
# only users of the driver (compiler/pipeline/); the runtime side knows
# nothing of MLIR, LLVM or the compiler except the ABI headers and the
# manifest codec. The driver may run what it compiled through the runtime
# (calibration measures activations on a compiled copy of the model).
COMPONENTS = (
    Component("abi", ("codegen/abi/",), (), ()),
    # The manifest's one codec and rule set, shared by writer and reader.
    Component("artifact-format", ("codegen/format/",), ("abi",), ()),
    Component("artifact-writer", ("codegen/artifact/",),
              ("abi", "artifact-format"), ()),
    Component("runtime", ("runtime/",), ("abi", "artifact-format"), ()),
    # A communicator over MPI beside the runtime, which links no transport.
    Component("runtime-mpi", ("runtime/comm/mpi/",), ("runtime",), (MPI,)),
    # A communicator over NCCL beside the runtime; NCCL and the CUDA
    # runtime are loaded at run time, so it links and includes neither.
    Component("runtime-nccl", ("runtime/comm/nccl/",), ("runtime",), ()),
    # Text <-> token ids beside the runtime: its status objects, no compiler;
    # the runtime does not use it.
    Component("tokenizers", ("tokenizers/",), ("runtime",),
              (JSON, SENTENCEPIECE)),
    Component("tools-common", ("tools/common/",), (), ()),
    # What the compiler tools share on LLVM's command line.
    Component("compiler-tools-common", ("tools/compiler-common/",), (),
              (MLIR,)),
    # What the tools that link the runtime share on its public API.
    Component("runtime-tools-common", ("tools/runtime-common/",),
              ("runtime",), ()),
    # The tokenizer a --tokenizer option names (strata-run, strata-serve).
    Component("text-tools-common", ("tools/text-common/",), ("tokenizers",),
              ()),
    # The MPI (or NCCL) group of a split model's processes (strata-run,
    # strata-serve).
    Component("rank-tools-common", ("tools/rank-common/",),
              ("runtime", "runtime-mpi", "runtime-nccl", "tools-common"), ()),
    # strata-run's generate command encodes prompts; strata-bench does not.
    Component("strata-run", ("tools/strata-run/",),
              ("runtime", "runtime-mpi", "runtime-nccl", "tools-common",
               "runtime-tools-common", "text-tools-common",
               "rank-tools-common"), ()),
    # The HTTP server over the runtime's scheduler, and its thin tool.
    Component("serve", ("serve/",), ("runtime", "tokenizers"), (JSON, HTTP)),
    Component("strata-serve", ("tools/strata-serve/",),
              ("serve", "tools-common", "runtime-tools-common",
               "text-tools-common", "rank-tools-common"), ()),
    Component("runtime-tools", ("tools/strata-bench/",),
              ("runtime", "tools-common", "runtime-tools-common"), ()),
    Component("dialect", ("dialects/",), (), (MLIR,)),
    Component("import", ("compiler/import/",), ("dialect",), (MLIR, ONNX)),
    Component("passes", ("passes/",), ("dialect", "abi"), (MLIR,)),
    Component("dispatch", ("compiler/dispatch/",), ("dialect",), (MLIR,)),
    Component("analysis", ("compiler/analysis/",), (), (MLIR,)),
    Component("codegen", ("codegen/",),
              ("passes", "dispatch", "analysis", "artifact-writer"), (MLIR,)),
    Component("pipeline", ("compiler/pipeline/",),
              ("import", "passes", "dispatch", "analysis", "codegen",
               "runtime"),
              (MLIR,)),
    Component("capi", ("compiler/capi/",), ("pipeline",), (MLIR,)),
    Component("compiler-tools", ("tools/",),
              ("capi", "pipeline", "tools-common", "compiler-tools-common"),
              (MLIR,)),
    # Outside the product, held to the same rule: runtime tests and users
    # of the installed runtime link no compiler code (STYLE.md §9).
    Component("runtime-tests", ("test/unit/runtime/",),
              ("runtime", "runtime-mpi", "runtime-nccl", "runtime-tools",
               "strata-run", "artifact-writer"),
              (GTEST,)),
    Component("tokenizers-tests", ("test/unit/tokenizers/",),
              ("tokenizers",), (GTEST,)),
    Component("serve-tests", ("test/unit/serve/",), ("serve",), (GTEST,)),
    Component("compiler-tests", ("test/unit/compiler/",),
              ("import", "passes", "dispatch", "codegen", "pipeline"),
              (MLIR, ONNX, GTEST)),
    # A C embedder's view: the compiler's C API and the runtime only.
    Component("capi-tests", ("test/unit/capi/",),
              ("capi", "runtime", "runtime-tools", "strata-run"), (GTEST,)),
    # The Python package's extensions: the C APIs of the compiler, the
    # runtime and the tokenizers, nothing behind them.
    Component("python", ("python/",), ("capi", "runtime", "tokenizers"),
              (NANOBIND,)),
    # The KV transfer ping-pong of the cluster simulator's calibration
    # measures libstrata_mpi's send/recv.
    Component("bench", ("bench/",), ("runtime", "runtime-mpi"), ()),
    Component("examples", ("examples/",), ("runtime",), ()),
)

# Include roots besides the including file's folder, as the targets'
# include paths give them: the repository root (compiler code), the public
# runtime headers, the runtime's own sources, the ABI headers and the public
# tokenizer headers.
INCLUDE_ROOTS = ("", "runtime/include", "runtime/src", "codegen/abi",
                 "tokenizers/include", "serve/include",
                 "runtime/comm/mpi/include", "runtime/comm/nccl/include")
# Components whose targets add include paths of their own.
EXTRA_INCLUDE_ROOTS = {"runtime-tests": ("tools/strata-run",),
                       "capi-tests": ("tools/strata-run",),
                       "tokenizers-tests": ("tokenizers/src",),
                       "serve-tests": ("serve/src",)}

OUTSIDE_INCLUDES = {
    MLIR: ("mlir/", "mlir-c/", "llvm/", "llvm-c/", "lld/"),
    ONNX: ("onnx/", "google/protobuf/"),
    GTEST: ("gtest/", "gmock/"),
    JSON: ("nlohmann/",),
    SENTENCEPIECE: ("sentencepiece_processor.h", "sentencepiece_trainer.h"),
    NANOBIND: ("nanobind/", "Python.h"),
    HTTP: ("httplib.h",),
    MPI: ("mpi.h",),
}
OUTSIDE_LINKS = {
    MLIR: re.compile(r"^(MLIR|LLVM|lld|obj\.MLIR)|/lib(MLIR|LLVM|lld)"),
    ONNX: re.compile(r"^(onnx|onnx_proto|protobuf::.*)$|/libprotobuf|/libonnx"),
    GTEST: re.compile(r"^(GTest::|gtest|gmock)"),
    JSON: re.compile(r"^nlohmann_json::"),
    SENTENCEPIECE: re.compile(
        r"^PkgConfig::STRATA_SENTENCEPIECE$|(^|/)(lib)?sentencepiece"),
    NANOBIND: re.compile(r"^(nanobind|Python::)"),
    HTTP: re.compile(r"^PkgConfig::STRATA_HTTPLIB$|(^|/)libcpp-httplib"),
    MPI: re.compile(r"^MPI::|(^|/)lib(mpi|open-pal|open-rte)"),
}

SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cc", ".cpp", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def component_of(path):
    """The component of a repository-relative path, or None."""
    best = None
    for component in COMPONENTS:
        for prefix in component.prefixes:
            if path.startswith(prefix) and (
                    best is None or len(prefix) > len(best[1])):
                best = (component, prefix)
    return best[0] if best else None


def allowed_components(component):
    """The component and everything it uses, directly or through others."""
    by_name = {c.name: c for c in COMPONENTS}
    seen, todo = set(), [component.name]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(by_name[name].uses)
    return seen


def outside_family(patterns, text, matches):
    """The outside library |text| belongs to, or None for the system's."""
    for family, pattern in patterns.items():
        if matches(pattern, text):
            return family
    return None


def resolve_include(root, including, component, quote, name):
    """The repository-relative path an include names, or None if it is an
    outside or system header. Generated headers (.inc) are not in the source
    tree; they sit at the same relative path under the build folder."""
    roots = INCLUDE_ROOTS + EXTRA_INCLUDE_ROOTS.get(component.name, ())
    folders = ([os.path.dirname(including)] if quote == '"' else []) + [
        r for r in roots if r or quote == '"']
    for folder in folders:
        candidate = os.path.normpath(os.path.join(folder, name))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    if name.endswith(".inc"):
        if "/" not in name:
            return os.path.join(os.path.dirname(including), name)
        return name
    return None


def describe(component):
    uses = sorted(allowed_components(component) - {component.name})
    outside = list(component.outside)
    return "%s may use %s" % (
        component.name, ", ".join(uses + outside) or "nothing else")


def check_includes(root):
    """Violations of the layering by #include, one message each."""
    problems = []
    folders = sorted({p.split("/")[0] for c in COMPONENTS for p in c.prefixes})
    for top in folders:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for filename in sorted(filenames):
                if not filename.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, filename), root)
                component = component_of(path)
                if component is not None:
                    problems += check_file(root, path, component)
    return problems


def check_file(root, path, component):
    problems = []
    allowed = allowed_components(component)
    with open(os.path.join(root, path), encoding="utf-8",
              errors="replace") as f:
        for number, line in enumerate(f, 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            quote, name = match.groups()
            target = resolve_include(root, path, component, quote, name)
            if target is not None:
                used = component_of(target)
                if used is None or used.name in allowed:
                    continue
                what = "'%s' (%s)" % (target, used.name)
            else:
                family = outside_family(
                    OUTSIDE_INCLUDES, name,
                    lambda prefixes, n: n.startswith(prefixes))
                if family is None and quote == '"':
                    # A quoted include is the project's own: one the checker
                    # cannot place would escape the rules.
                    problems.append("%s:%d: includes '%s', which is in no "
                                    "include folder the checker knows" % (
                                        path, number, name))
                    continue
                if family is None or family in component.outside:
                    continue
                what = "'%s' (%s)" % (name, family)
            problems.append("%s:%d: includes %s: %s" % (
                path, number, what, describe(component)))
    return problems


def unwrap_link(item):
    """A link item without generator expressions ($<LINK_ONLY:x> -> x), or
    None for items that are no library (install-only, directory markers)."""
    while item.startswith("$<") and item.endswith(">"):
        head, _, body = item[2:-1].partition(":")
        if head == "INSTALL_INTERFACE":
            return None
        item = body
    if not item or item.startswith("::@") or item.startswith("-"):
        return None
    return item


def read_link_graph(path):
    """{target: (source dir, [links])} from strata-link-graph.tsv."""
    graph = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3:
                continue
            target, folder, links = fields
            items = [unwrap_link(i) for i in links.split(";") if i]
            graph[target] = (folder, [i for i in items if i])
    return graph


def check_links(graph):
    """Violations of the layering by linking, one message each."""
    problems = []
    for target, (folder, links) in sorted(graph.items()):
        component = component_of(folder + "/")
        if component is None:
            continue
        allowed = allowed_components(component)
        for link in links:
            if link in graph:
                used = component_of(graph[link][0] + "/")
                if used is None or used.name in allowed:
                    continue
                what = "'%s' (%s)" % (link, used.name)
            else:
                family = outside_family(
                    OUTSIDE_LINKS, link,
                    lambda pattern, n: pattern.search(n) is not None)
                if family is None or family in component.outside:
                    continue
                what = "'%s' (%s)" % (link, family)
            problems.append("target %s (%s/) links %s: %s" % (
                target, folder, what, describe(component)))
    return problems


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_dir")
    parser.add_argument("--link-graph",
                        help="strata-link-graph.tsv of a configured build")
    args = parser.parse_args(argv)

    problems = check_includes(args.source_dir)
    checked = "includes"
    if args.link_graph:
        if not os.path.isfile(args.link_graph):
            print("no link graph at %s: configure the build again"
                  % args.link_graph)
            return 1
        problems += check_links(read_link_graph(args.link_graph))
        checked = "includes and links"
    for problem in problems:
        print(problem)
    if problems:
        print("%d layering violation(s) in the %s (the rules: COMPONENTS in "
              "%s)" % (len(problems), checked, os.path.relpath(__file__)))
        return 1
    print("layering holds for the %s" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
