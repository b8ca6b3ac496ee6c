//===- Plan.cpp - The workload plan of strata-bench -----------------------===//
// SPDX-License-Identifier: Apache-2.0
// A recursive-descent reader of the JSON subset a plan needs (RFC 8259
// values; nesting limited so hostile input cannot exhaust the stack), then
// the plan's schema: known kinds, known keys, integer counts in range.
//===----------------------------------------------------------------------===//

#include "Plan.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

namespace strata::tools {
namespace {

constexpr int kMaxDepth = 32;

struct JsonValue {
  enum Type { Null, Bool, Number, String, Array, Object } type = Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;
};

const char *typeName(JsonValue::Type type) {
  switch (type) {
  case JsonValue::Null:
    return "null";
  case JsonValue::Bool:
    return "a boolean";
  case JsonValue::Number:
    return "a number";
  case JsonValue::String:
    return "a string";
  case JsonValue::Array:
    return "an array";
  case JsonValue::Object:
    return "an object";
  }
  return "?";
}

class JsonReader {
public:
  explicit JsonReader(const std::string &text) : text_(text) {}

  // Parses the whole text as one value; "" or the problem.
  std::string parse(JsonValue *out) {
    skipSpace();
    if (!value(out, 0))
      return error_;
    skipSpace();
    if (pos_ != text_.size())
      return at("unexpected text after the JSON value");
    return "";
  }

private:
  std::string at(const std::string &what) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return "invalid JSON at line " + std::to_string(line) + " column " +
           std::to_string(column) + ": " + what;
  }

  bool failWith(const std::string &what) {
    error_ = at(what);
    return false;
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(const char *word) {
    size_t n = std::char_traits<char>::length(word);
    if (text_.compare(pos_, n, word) != 0)
      return false;
    pos_ += n;
    return true;
  }

  bool value(JsonValue *out, int depth) {
    if (depth > kMaxDepth)
      return failWith("nested deeper than " + std::to_string(kMaxDepth));
    if (pos_ >= text_.size())
      return failWith("unexpected end of input");
    char c = text_[pos_];
    if (c == '{')
      return object(out, depth);
    if (c == '[')
      return array(out, depth);
    if (c == '"') {
      out->type = JsonValue::String;
      return string(&out->string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return number(out);
    if (literal("true")) {
      out->type = JsonValue::Bool;
      out->boolean = true;
      return true;
    }
    if (literal("false")) {
      out->type = JsonValue::Bool;
      return true;
    }
    if (literal("null")) {
      out->type = JsonValue::Null;
      return true;
    }
    return failWith(std::string("unexpected character '") + c + "'");
  }

  bool number(JsonValue *out) {
    size_t start = pos_;
    if (text_[pos_] == '-')
      ++pos_;
    auto digits = [&] {
      size_t first = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
        ++pos_;
      return pos_ > first;
    };
    if (!digits())
      return failWith("expected a digit");
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!digits())
        return failWith("expected a digit after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (!digits())
        return failWith("expected an exponent");
    }
    std::string token = text_.substr(start, pos_ - start);
    out->type = JsonValue::Number;
    out->number = std::strtod(token.c_str(), nullptr);
    return true;
  }

  bool string(std::string *out) {
    ++pos_; // the opening quote
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return failWith("control character in a string");
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= text_.size())
        break;
      char e = text_[pos_++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        *out += e;
        break;
      case 'b':
        *out += '\b';
        break;
      case 'f':
        *out += '\f';
        break;
      case 'n':
        *out += '\n';
        break;
      case 'r':
        *out += '\r';
        break;
      case 't':
        *out += '\t';
        break;
      case 'u': {
        // Kept as '?': plan keys and kinds are ASCII, so any escaped
        // character makes them unknown anyway.
        for (int i = 0; i < 4; ++i, ++pos_) {
          if (pos_ >= text_.size() ||
              !std::isxdigit(static_cast<unsigned char>(text_[pos_])))
            return failWith("expected 4 hex digits after \\u");
        }
        *out += '?';
        break;
      }
      default:
        return failWith(std::string("unknown escape '\\") + e + "'");
      }
    }
    return failWith("unterminated string");
  }

  bool array(JsonValue *out, int depth) {
    out->type = JsonValue::Array;
    ++pos_;
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      out->items.emplace_back();
      skipSpace();
      if (!value(&out->items.back(), depth + 1))
        return false;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return failWith("expected ',' or ']'");
    }
  }

  bool object(JsonValue *out, int depth) {
    out->type = JsonValue::Object;
    ++pos_;
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"')
        return failWith("expected a key string");
      std::string key;
      if (!string(&key))
        return false;
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return failWith("expected ':'");
      ++pos_;
      skipSpace();
      out->members.emplace_back(std::move(key), JsonValue());
      if (!value(&out->members.back().second, depth + 1))
        return false;
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return failWith("expected ',' or '}'");
    }
  }

  const std::string &text_;
  size_t pos_ = 0;
  std::string error_;
};

// The keys each kind takes; the first ones are required.
struct KindSchema {
  WorkloadKind kind;
  std::vector<const char *> required;
  std::vector<const char *> optional;
};

const std::vector<KindSchema> &schemas() {
  static const std::vector<KindSchema> table = {
      {WorkloadKind::Prefill, {"seq"}, {"batch"}},
      {WorkloadKind::Decode, {"ctx"}, {"batch", "steps"}},
      {WorkloadKind::Generate, {"prompt", "gen"}, {"batch"}},
      {WorkloadKind::Ttft, {"seq"}, {"batch"}},
  };
  return table;
}

int64_t *fieldOf(Workload *w, const std::string &key) {
  if (key == "batch")
    return &w->batch;
  if (key == "seq")
    return &w->seq;
  if (key == "ctx")
    return &w->ctx;
  if (key == "steps")
    return &w->steps;
  if (key == "prompt")
    return &w->prompt;
  if (key == "gen")
    return &w->gen;
  return nullptr;
}

std::string parseWorkload(const JsonValue &value, Workload *out) {
  if (value.type != JsonValue::Object)
    return std::string("expected an object, got ") + typeName(value.type);
  const JsonValue *kind = nullptr;
  for (const auto &[key, v] : value.members) {
    if (key == "kind")
      kind = &v;
  }
  if (!kind)
    return "missing 'kind' (prefill, decode, generate or ttft)";
  if (kind->type != JsonValue::String)
    return std::string("'kind' must be a string, got ") + typeName(kind->type);
  const KindSchema *schema = nullptr;
  for (const KindSchema &s : schemas()) {
    if (kind->string == kindName(s.kind))
      schema = &s;
  }
  if (!schema)
    return "unknown kind '" + kind->string +
           "' (expected prefill, decode, generate or ttft)";
  Workload w;
  w.kind = schema->kind;
  if (w.kind == WorkloadKind::Decode)
    w.steps = 4;
  std::vector<std::string> seen;
  for (const auto &[key, v] : value.members) {
    if (key == "kind")
      continue;
    for (const std::string &s : seen) {
      if (s == key)
        return "'" + key + "' given twice";
    }
    seen.push_back(key);
    bool known = false;
    for (const auto *list : {&schema->required, &schema->optional}) {
      for (const char *name : *list)
        known |= key == name;
    }
    if (!known) {
      std::string keys;
      for (const auto *list : {&schema->required, &schema->optional}) {
        for (const char *name : *list)
          keys += std::string(keys.empty() ? "" : ", ") + name;
      }
      return "unknown key '" + key + "' for kind '" + kind->string +
             "' (it takes " + keys + ")";
    }
    double number = v.number;
    if (v.type != JsonValue::Number || std::floor(number) != number ||
        number < 1 || number > static_cast<double>(kPlanMaxCount)) {
      char got[64];
      if (v.type == JsonValue::Number)
        std::snprintf(got, sizeof(got), "%.17g", number);
      else
        std::snprintf(got, sizeof(got), "%s", typeName(v.type));
      return "'" + key + "' must be an integer in [1, " +
             std::to_string(kPlanMaxCount) + "], got " + got;
    }
    *fieldOf(&w, key) = static_cast<int64_t>(number);
  }
  for (const char *name : schema->required) {
    bool found = false;
    for (const std::string &s : seen)
      found |= s == name;
    if (!found)
      return "kind '" + kind->string + "' needs '" + name + "'";
  }
  if (w.kind == WorkloadKind::Decode && w.ctx < 2)
    return "'ctx' must be at least 2 (a decode step needs a past of ctx - 1 "
           "tokens), got " +
           std::to_string(w.ctx);
  *out = w;
  return "";
}

} // namespace

const char *kindName(WorkloadKind kind) {
  switch (kind) {
  case WorkloadKind::Prefill:
    return "prefill";
  case WorkloadKind::Decode:
    return "decode";
  case WorkloadKind::Generate:
    return "generate";
  case WorkloadKind::Ttft:
    return "ttft";
  }
  return "?";
}

std::string parsePlan(const std::string &text, std::vector<Workload> *out) {
  JsonValue root;
  std::string problem = JsonReader(text).parse(&root);
  if (!problem.empty())
    return problem;
  if (root.type != JsonValue::Object)
    return std::string("the plan must be an object {\"workloads\": [...]}, "
                       "got ") +
           typeName(root.type);
  const JsonValue *list = nullptr;
  for (const auto &[key, v] : root.members) {
    if (key == "workloads")
      list = &v;
  }
  if (!list)
    return "the plan has no 'workloads' list";
  if (list->type != JsonValue::Array)
    return std::string("'workloads' must be an array, got ") +
           typeName(list->type);
  if (list->items.empty())
    return "'workloads' is empty";
  std::vector<Workload> workloads;
  for (size_t i = 0; i < list->items.size(); ++i) {
    Workload w;
    problem = parseWorkload(list->items[i], &w);
    if (!problem.empty())
      return "workload " + std::to_string(i + 1) + ": " + problem;
    workloads.push_back(w);
  }
  *out = std::move(workloads);
  return "";
}

} // namespace strata::tools
