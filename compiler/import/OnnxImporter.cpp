//===- OnnxImporter.cpp - ONNX model -> strata dialect --------------------===//
// SPDX-License-Identifier: Apache-2.0
// Graph-level work: opset resolution, the unsupported-op census, graph
// inputs with symbolic dims, initializers, a topological order that
// rejects cycles and undefined values, `If` with a constant condition, and
// the final cleanup and verification.

#include "compiler/import/OnnxImporter.h"

#include "compiler/import/ImportContext.h"
#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxOpConverters.h"
#include "compiler/import/TensorConversion.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <onnx/onnx_pb.h>

using namespace mlir;

namespace strata::import {
namespace {

/// Largest static dim accepted from a model (2^40): larger is hostile.
constexpr int64_t kMaxDim = int64_t{1} << 40;

using DomainOpsets = llvm::StringMap<int64_t>;

StringRef canonicalDomain(StringRef domain) {
  return domain == "ai.onnx" ? StringRef("") : domain;
}

/// The name a node is known by: its own, or "<OpType>_<index>".
std::string nodeName(const onnx::NodeProto &node, int index) {
  if (!node.name().empty())
    return node.name();
  return node.op_type() + "_" + std::to_string(index);
}

class GraphImporter {
public:
  GraphImporter(MLIRContext &context, ModelStorage &storage)
      : context_(context), storage_(storage), builder_(&context),
        ctx_(builder_, storage) {}

  LogicalResult resolveOpsets();
  LogicalResult checkSupported(const onnx::GraphProto &graph);
  OwningOpRef<ModuleOp> run();

private:
  Location nodeLoc(StringRef name) {
    return NameLoc::get(StringAttr::get(&context_, name),
                        FileLineColLoc::get(&context_, storage_.path(), 0, 0));
  }
  InFlightDiagnostic modelError() {
    return emitError(FileLineColLoc::get(&context_, storage_.path(), 0, 0));
  }
  FailureOr<RankedTensorType> valueInfoType(const onnx::ValueInfoProto &info,
                                            SmallVectorImpl<Attribute> &dims);
  LogicalResult bindInitializers(const onnx::GraphProto &graph);
  FailureOr<SmallVector<int>>
  topologicalOrder(const onnx::GraphProto &graph,
                   const llvm::StringSet<> &outerNames);
  LogicalResult convertGraphNodes(const onnx::GraphProto &graph,
                                  const llvm::StringSet<> &outerNames);
  LogicalResult convertIf(const onnx::NodeProto &node,
                          const llvm::StringSet<> &outerNames);

  MLIRContext &context_;
  ModelStorage &storage_;
  OpBuilder builder_;
  ImportContext ctx_;
  DomainOpsets opsets_;
  int nodeCounter_ = 0;
};

LogicalResult GraphImporter::resolveOpsets() {
  const onnx::ModelProto &model = storage_.model();
  for (const onnx::OperatorSetIdProto &opset : model.opset_import())
    opsets_[canonicalDomain(opset.domain())] = opset.version();
  if (!opsets_.count(""))
    return modelError() << "the model has no opset_import for the default "
                           "ONNX domain";
  int64_t version = opsets_[""];
  if (version < 1 || version > 23)
    return modelError() << "default-domain opset " << version
                        << " is outside the supported range 1-23";
  if (!model.has_graph())
    return modelError() << "the model has no graph";
  return success();
}

// One error per node without a converter, across subgraphs of `If`.
LogicalResult GraphImporter::checkSupported(const onnx::GraphProto &graph) {
  bool ok = true;
  for (const onnx::NodeProto &node : graph.node()) {
    std::string name = nodeName(node, nodeCounter_++);
    StringRef domain = canonicalDomain(node.domain());
    std::string qualified =
        domain.empty() ? node.op_type() : (domain + "." + node.op_type()).str();
    auto it = opsets_.find(domain);
    if (it == opsets_.end()) {
      emitError(nodeLoc(name))
          << "unsupported ONNX op '" << qualified << "' (domain '" << domain
          << "' is not in the model's opset_import) in node '" << name << "'";
      ok = false;
      continue;
    }
    if (domain.empty() && node.op_type() == "If") {
      for (const onnx::AttributeProto &a : node.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH &&
            failed(checkSupported(a.g())))
          ok = false;
      continue;
    }
    if (!lookupConverter(domain, node.op_type(), it->second)) {
      emitError(nodeLoc(name))
          << "unsupported ONNX op '" << qualified << "' (opset " << it->second
          << ") in node '" << name << "'";
      ok = false;
    }
  }
  return success(ok);
}

FailureOr<RankedTensorType>
GraphImporter::valueInfoType(const onnx::ValueInfoProto &info,
                             SmallVectorImpl<Attribute> &dimNames) {
  if (!info.type().has_tensor_type())
    return modelError() << "graph value '" << info.name()
                        << "' is not a tensor";
  const onnx::TypeProto::Tensor &tensor = info.type().tensor_type();
  Type element = convertElementType(tensor.elem_type(), &context_);
  if (!element)
    return modelError() << "graph value '" << info.name()
                        << "' has unsupported element type "
                        << onnxDataTypeName(tensor.elem_type());
  if (!tensor.has_shape())
    return modelError() << "graph value '" << info.name()
                        << "' has no shape (rank unknown)";
  SmallVector<int64_t> dims;
  for (const onnx::TensorShapeProto::Dimension &d : tensor.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0 || d.dim_value() > kMaxDim)
        return modelError() << "graph value '" << info.name()
                            << "' has invalid dim " << d.dim_value()
                            << " (expected 0 to " << kMaxDim << ")";
      dims.push_back(d.dim_value());
      dimNames.push_back(StringAttr::get(&context_, ""));
    } else {
      dims.push_back(ShapedType::kDynamic);
      dimNames.push_back(StringAttr::get(
          &context_, d.has_dim_param() ? d.dim_param() : std::string("?")));
    }
  }
  return RankedTensorType::get(dims, element);
}

LogicalResult GraphImporter::bindInitializers(const onnx::GraphProto &graph) {
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (ctx_.isBound(init.name()))
      return modelError() << "initializer '" << init.name()
                          << "' is defined twice";
    llvm::Expected<ElementsAttr> attr =
        convertTensor(init, storage_, &context_);
    if (!attr)
      return modelError() << llvm::toString(attr.takeError());
    Location loc = nodeLoc("initializer:" + init.name());
    Value v = ir::ConstantOp::create(builder_, loc, *attr);
    // Route through setOutput's logic for known ints via a synthetic bind.
    std::optional<KnownInts> known;
    auto type = cast<RankedTensorType>(v.getType());
    if (auto dense = dyn_cast<DenseIntElementsAttr>(*attr);
        dense && type.getRank() <= 1 &&
        type.getNumElements() <= kKnownIntsLimit) {
      known.emplace();
      for (const APInt &i : dense.getValues<APInt>())
        known->push_back(i.getSExtValue());
    }
    ctx_.bind(init.name(), {v, known});
  }
  return success();
}

// Names a subgraph reads from enclosing scopes.
void collectOuterReads(const onnx::GraphProto &graph,
                       llvm::StringSet<> &reads) {
  llvm::StringSet<> local;
  for (const onnx::TensorProto &t : graph.initializer())
    local.insert(t.name());
  for (const onnx::ValueInfoProto &i : graph.input())
    local.insert(i.name());
  for (const onnx::NodeProto &n : graph.node())
    for (const std::string &o : n.output())
      local.insert(o);
  for (const onnx::NodeProto &n : graph.node()) {
    for (const std::string &i : n.input())
      if (!i.empty() && !local.contains(i))
        reads.insert(i);
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.type() == onnx::AttributeProto::GRAPH) {
        llvm::StringSet<> inner;
        collectOuterReads(a.g(), inner);
        for (auto &name : inner)
          if (!local.contains(name.getKey()))
            reads.insert(name.getKey());
      }
  }
}

// Node indices in an order where producers come first (Kahn's algorithm,
// earliest file position first among ready nodes).
FailureOr<SmallVector<int>>
GraphImporter::topologicalOrder(const onnx::GraphProto &graph,
                                const llvm::StringSet<> &available) {
  // Who produces each name; duplicates are an error.
  llvm::StringMap<int> producer;
  for (auto [i, node] : llvm::enumerate(graph.node()))
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      if (available.contains(out) || !producer.try_emplace(out, i).second)
        return emitError(nodeLoc(nodeName(node, i)))
               << "value '" << out << "' is defined more than once";
    }
  int n = graph.node_size();
  SmallVector<SmallVector<int>> consumers(n);
  SmallVector<int> pending(n, 0);
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    llvm::StringSet<> reads;
    for (const std::string &in : node.input())
      if (!in.empty())
        reads.insert(in);
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.type() == onnx::AttributeProto::GRAPH)
        collectOuterReads(a.g(), reads);
    for (auto &entry : reads) {
      StringRef in = entry.getKey();
      auto it = producer.find(in);
      if (it != producer.end()) {
        consumers[it->second].push_back(i);
        ++pending[i];
      } else if (!available.contains(in)) {
        return emitError(nodeLoc(nodeName(node, i)))
               << "ONNX node '" << nodeName(node, i) << "' ("
               << node.op_type() << ") uses undefined value '" << in << "'";
      }
    }
  }
  SmallVector<int> order;
  SmallVector<int> ready;
  for (int i = n - 1; i >= 0; --i)
    if (pending[i] == 0)
      ready.push_back(i);
  // Stable: among ready nodes take the earliest in file order.
  while (!ready.empty()) {
    std::sort(ready.begin(), ready.end(), std::greater<int>());
    int i = ready.pop_back_val();
    order.push_back(i);
    for (int c : consumers[i])
      if (--pending[c] == 0)
        ready.push_back(c);
  }
  if ((int)order.size() != n) {
    for (int i = 0; i < n; ++i)
      if (pending[i] > 0)
        return emitError(nodeLoc(nodeName(graph.node(i), i)))
               << "the graph has a cycle through node '"
               << nodeName(graph.node(i), i) << "'";
  }
  return order;
}

LogicalResult GraphImporter::convertIf(const onnx::NodeProto &node,
                                       const llvm::StringSet<> &outerNames) {
  std::optional<SmallVector<int64_t>> cond = ctx_.inputConstInts(0);
  if (!cond || cond->size() != 1)
    return ctx_.error() << "only an 'If' whose condition is a compile-time "
                           "constant is supported";
  FailureOr<const onnx::GraphProto *> branch =
      ctx_.graphAttr((*cond)[0] ? "then_branch" : "else_branch");
  if (failed(branch))
    return failure();
  const onnx::GraphProto &g = **branch;
  if (g.output_size() != node.output_size())
    return ctx_.error() << "the taken branch has " << g.output_size()
                        << " outputs, the node " << node.output_size();
  if (failed(convertGraphNodes(g, outerNames)))
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    const ImportedValue *v = ctx_.lookup(g.output(i).name());
    if (!v)
      return emitError(nodeLoc(node.name()))
             << "branch output '" << g.output(i).name() << "' is undefined";
    ctx_.bind(node.output(i), *v);
  }
  return success();
}

LogicalResult
GraphImporter::convertGraphNodes(const onnx::GraphProto &graph,
                                 const llvm::StringSet<> &outerNames) {
  if (failed(bindInitializers(graph)))
    return failure();
  llvm::StringSet<> available = outerNames;
  for (const onnx::TensorProto &t : graph.initializer())
    available.insert(t.name());
  for (const onnx::ValueInfoProto &i : graph.input())
    available.insert(i.name());
  auto order = topologicalOrder(graph, available);
  if (failed(order))
    return failure();
  llvm::StringSet<> scope = available;
  for (const onnx::NodeProto &n : graph.node())
    for (const std::string &o : n.output())
      scope.insert(o);
  for (int index : *order) {
    const onnx::NodeProto *node = &graph.node(index);
    std::string name = nodeName(*node, index);
    StringRef domain = canonicalDomain(node->domain());
    int64_t opset = opsets_.lookup(domain);
    ctx_.beginNode(*node, nodeLoc(name), opset);
    for (const std::string &in : node->input())
      if (!in.empty() && !ctx_.isBound(in))
        return ctx_.error() << "uses undefined value '" << in << "'";
    if (domain.empty() && node->op_type() == "If") {
      if (failed(convertIf(*node, scope)))
        return failure();
      continue;
    }
    const OpConverter *converter =
        lookupConverter(domain, node->op_type(), opset);
    if (!converter)
      return ctx_.error() << "unsupported op"; // census already reported
    if (failed(converter->convert(ctx_)))
      return failure();
    for (int i = 0; i < node->output_size(); ++i)
      if (ctx_.outputUsed(i) && !ctx_.isBound(node->output(i)))
        return ctx_.error() << "output '" << node->output(i)
                            << "' is not supported";
  }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  const onnx::GraphProto &graph = storage_.model().graph();
  Location modelLoc = FileLineColLoc::get(&context_, storage_.path(), 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(modelLoc);
  builder_.setInsertionPointToEnd(module->getBody());

  // Graph inputs that are not initializers become @main's arguments.
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &t : graph.initializer())
    initializers.insert(t.name());
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<std::string> argNames;
  llvm::StringSet<> seenInputs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (!seenInputs.insert(input.name()).second) {
      modelError() << "graph input '" << input.name()
                   << "' is defined more than once";
      return nullptr;
    }
    if (initializers.contains(input.name()))
      continue;
    SmallVector<Attribute> dims;
    FailureOr<RankedTensorType> type = valueInfoType(input, dims);
    if (failed(type))
      return nullptr;
    argTypes.push_back(*type);
    argNames.push_back(input.name());
    argAttrs.push_back(builder_.getDictionaryAttr(
        {builder_.getNamedAttr("strata.name",
                               builder_.getStringAttr(input.name())),
         builder_.getNamedAttr("strata.dims", builder_.getArrayAttr(dims))}));
  }
  auto func = func::FuncOp::create(builder_, modelLoc, "main",
                                   builder_.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  builder_.setInsertionPointToStart(entry);
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttrs(i, argAttrs[i]);
    ctx_.bind(name, {entry->getArgument(i), std::nullopt});
  }

  // Record which values are consumed, so converters know which optional
  // outputs matter.
  std::function<void(const onnx::GraphProto &)> markReads =
      [&](const onnx::GraphProto &g) {
        for (const onnx::NodeProto &n : g.node()) {
          for (const std::string &in : n.input())
            ctx_.markUsed(in);
          for (const onnx::AttributeProto &a : n.attribute())
            if (a.type() == onnx::AttributeProto::GRAPH)
              markReads(a.g());
        }
        for (const onnx::ValueInfoProto &o : g.output())
          ctx_.markUsed(o.name());
      };
  markReads(graph);

  llvm::StringSet<> outer;
  for (const std::string &name : argNames)
    outer.insert(name);
  if (failed(convertGraphNodes(graph, outer)))
    return nullptr;

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    const ImportedValue *v = ctx_.lookup(output.name());
    if (!v) {
      modelError() << "graph output '" << output.name()
                   << "' is never produced";
      return nullptr;
    }
    results.push_back(v->value);
    SmallVector<NamedAttribute> attrs{builder_.getNamedAttr(
        "strata.name", builder_.getStringAttr(output.name()))};
    // The declared dim names, as for inputs: the artifact's signature names
    // the output's symbolic dims after them.
    if (output.type().tensor_type().has_shape()) {
      SmallVector<Attribute> dims;
      for (const auto &d : output.type().tensor_type().shape().dim())
        dims.push_back(builder_.getStringAttr(
            d.has_dim_param() ? d.dim_param()
                              : std::string(d.has_dim_value() ? "" : "?")));
      attrs.push_back(
          builder_.getNamedAttr("strata.dims", builder_.getArrayAttr(dims)));
    }
    resultAttrs.push_back(builder_.getDictionaryAttr(attrs));
  }
  func::ReturnOp::create(builder_, modelLoc, results);
  func.setType(builder_.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, attrs] : llvm::enumerate(resultAttrs))
    func.setResultAttrs(i, attrs);

  // Shape arithmetic that folded to constants leaves dead ops behind.
  IRRewriter rewriter(&context_);
  (void)runRegionDCE(rewriter, func.getBody());
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

LogicalResult checkSupportedOps(MLIRContext &context, ModelStorage &storage) {
  context.loadDialect<ir::StrataDialect, func::FuncDialect>();
  GraphImporter importer(context, storage);
  if (failed(importer.resolveOpsets()))
    return failure();
  return importer.checkSupported(storage.model().graph());
}

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context,
                                      ModelStorage &storage) {
  context.loadDialect<ir::StrataDialect, func::FuncDialect>();
  GraphImporter importer(context, storage);
  if (failed(importer.resolveOpsets()) ||
      failed(importer.checkSupported(storage.model().graph())))
    return nullptr;
  return importer.run();
}

} // namespace strata::import
