#include "devcluster/cel.h"

#include <cmath>
#include <deque>
#include <limits>
#include <vector>

#include <re2/re2.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "devcluster/cel_parse.h"

namespace cloneset::devcluster::cel {

using nlohmann::json;

namespace {

// ---- evaluation ----------------------------------------------------------------------------------------------

// A value: a JSON datum (borrowed from the input, or owned by the context's arena) or a type.
struct Value {
  const json* j = nullptr;
  std::string type;  // non-empty: a type value ("int", "string", ...)
};

const json kNull = nullptr;
const json kTrue = true;
const json kFalse = false;

std::string TypeName(const Value& v) {
  if (!v.type.empty()) return "type";
  switch (v.j->type()) {
    case json::value_t::null: return "null_type";
    case json::value_t::boolean: return "bool";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "int";
    case json::value_t::number_float: return "double";
    case json::value_t::string: return "string";
    case json::value_t::array: return "list";
    case json::value_t::object: return "map";
    default: return "unknown";
  }
}

class Context {
 public:
  Context(const json& self, const json* old_self) {
    vars_.push_back({"self", Value{&self, ""}});
    if (old_self) vars_.push_back({"oldSelf", Value{old_self, ""}});
  }

  absl::StatusOr<Value> Eval(const Node& n) {
    if (++steps_ > kStepBudget) return absl::InvalidArgumentError("operation cancelled: actual cost limit exceeded");
    switch (n.kind) {
      case NodeKind::kLiteral: return Value{&n.literal, ""};
      case NodeKind::kIdent: {
        for (auto it = vars_.rbegin(); it != vars_.rend(); ++it)
          if (it->first == n.name) return it->second;
        static const char* kTypes[] = {"int", "uint", "double", "string", "bool", "list", "map", "null_type", "bytes"};
        for (const char* t : kTypes)
          if (n.name == t) return Value{&kNull, t};
        return Err(absl::StrCat("undeclared reference to '", n.name, "'"));
      }
      case NodeKind::kSelect: {
        auto obj = Eval(*n.args[0]);
        if (!obj.ok()) return obj;
        if (!obj->type.empty() || !obj->j->is_object())
          return Err(absl::StrCat("no such key: ", n.name, " (on a ", TypeName(*obj), ")"));
        auto it = obj->j->find(n.name);
        if (it == obj->j->end()) return Err(absl::StrCat("no such key: ", n.name));
        return Value{&*it, ""};
      }
      case NodeKind::kHas: {
        const Node& sel = *n.args[0];
        auto obj = Eval(*sel.args[0]);
        if (!obj.ok()) return obj;
        if (!obj->type.empty() || !obj->j->is_object())
          return Err(absl::StrCat("invalid type for field selection: ", TypeName(*obj)));
        auto it = obj->j->find(sel.name);
        return Bool(it != obj->j->end() && !it->is_null());
      }
      case NodeKind::kIndex: {
        auto obj = Eval(*n.args[0]);
        if (!obj.ok()) return obj;
        auto idx = Eval(*n.args[1]);
        if (!idx.ok()) return idx;
        if (obj->type.empty() && obj->j->is_array() && idx->type.empty() && idx->j->is_number_integer()) {
          int64_t i = idx->j->get<int64_t>();
          if (i < 0 || static_cast<size_t>(i) >= obj->j->size()) return Err(absl::StrCat("index out of range: ", i));
          return Value{&(*obj->j)[static_cast<size_t>(i)], ""};
        }
        if (obj->type.empty() && obj->j->is_object() && idx->type.empty() && idx->j->is_string()) {
          auto it = obj->j->find(idx->j->get<std::string>());
          if (it == obj->j->end()) return Err(absl::StrCat("no such key: ", idx->j->get<std::string>()));
          return Value{&*it, ""};
        }
        return Err(absl::StrCat("no such overload: ", TypeName(*obj), "[", TypeName(*idx), "]"));
      }
      case NodeKind::kList: {
        json list = json::array();
        for (const auto& a : n.args) {
          auto v = Eval(*a);
          if (!v.ok()) return v;
          if (!v->type.empty()) return Err("a type cannot be a list element");
          list.push_back(*v->j);
        }
        return Own(std::move(list));
      }
      case NodeKind::kNot: {
        auto v = Eval(*n.args[0]);
        if (!v.ok()) return v;
        if (!IsBool(*v)) return Err(absl::StrCat("no such overload: !", TypeName(*v)));
        return Bool(!v->j->get<bool>());
      }
      case NodeKind::kNeg: {
        auto v = Eval(*n.args[0]);
        if (!v.ok()) return v;
        if (IsInt(*v)) {
          int64_t i = v->j->get<int64_t>();
          if (i == std::numeric_limits<int64_t>::min()) return Err("integer overflow");
          return Own(-i);
        }
        if (IsDouble(*v)) return Own(-v->j->get<double>());
        return Err(absl::StrCat("no such overload: -", TypeName(*v)));
      }
      case NodeKind::kTernary: {
        auto c = Eval(*n.args[0]);
        if (!c.ok()) return c;
        if (!IsBool(*c)) return Err(absl::StrCat("no such overload: ", TypeName(*c), " ? _ : _"));
        return Eval(*n.args[c->j->get<bool>() ? 1 : 2]);
      }
      case NodeKind::kBinary: return EvalBinary(n);
      case NodeKind::kCall: return EvalCall(n);
      case NodeKind::kMacro: return EvalMacro(n);
    }
    return Err("unknown expression");
  }

 private:
  static absl::Status Err(const std::string& m) { return absl::InvalidArgumentError(m); }
  static bool IsBool(const Value& v) { return v.type.empty() && v.j->is_boolean(); }
  static bool IsInt(const Value& v) { return v.type.empty() && (v.j->is_number_integer()); }
  static bool IsDouble(const Value& v) { return v.type.empty() && v.j->is_number_float(); }
  static bool IsString(const Value& v) { return v.type.empty() && v.j->is_string(); }
  static Value Bool(bool b) { return Value{b ? &kTrue : &kFalse, ""}; }
  Value Own(json j) {
    arena_.push_back(std::move(j));
    return Value{&arena_.back(), ""};
  }

  static bool Equal(const Value& a, const Value& b) {
    if (!a.type.empty() || !b.type.empty()) return a.type == b.type;
    if (a.j->is_number() && b.j->is_number()) {
      if (a.j->is_number_float() || b.j->is_number_float()) return a.j->get<double>() == b.j->get<double>();
      return a.j->get<int64_t>() == b.j->get<int64_t>();
    }
    return *a.j == *b.j;
  }

  absl::StatusOr<Value> EvalBinary(const Node& n) {
    const std::string& op = n.name;
    if (op == "&&" || op == "||") {
      // CEL's commutative logic: an absorbing operand (false for &&, true for ||) wins over an error in the other.
      const bool absorbing = op == "||";
      auto l = Eval(*n.args[0]);
      if (l.ok() && !IsBool(*l)) return Err(absl::StrCat("no such overload: ", TypeName(*l), " ", op, " _"));
      if (l.ok() && l->j->get<bool>() == absorbing) return *l;
      auto r = Eval(*n.args[1]);
      if (r.ok() && !IsBool(*r)) return Err(absl::StrCat("no such overload: _ ", op, " ", TypeName(*r)));
      if (r.ok() && r->j->get<bool>() == absorbing) return *r;
      if (!l.ok()) return l;
      return r;
    }
    auto l = Eval(*n.args[0]);
    if (!l.ok()) return l;
    auto r = Eval(*n.args[1]);
    if (!r.ok()) return r;
    if (op == "==") return Bool(Equal(*l, *r));
    if (op == "!=") return Bool(!Equal(*l, *r));
    if (op == "in") {
      if (r->type.empty() && r->j->is_array()) {
        for (const auto& e : *r->j)
          if (Equal(*l, Value{&e, ""})) return Bool(true);
        return Bool(false);
      }
      if (r->type.empty() && r->j->is_object() && IsString(*l)) return Bool(r->j->contains(l->j->get<std::string>()));
      return Err(absl::StrCat("no such overload: ", TypeName(*l), " in ", TypeName(*r)));
    }
    const bool numbers = l->type.empty() && r->type.empty() && l->j->is_number() && r->j->is_number();
    const bool mixed = numbers && (IsDouble(*l) != IsDouble(*r));
    if (op == "<" || op == "<=" || op == ">" || op == ">=") {
      int cmp;
      if (numbers) {
        if (mixed || IsDouble(*l)) {
          double a = l->j->get<double>(), b = r->j->get<double>();
          cmp = a < b ? -1 : a > b ? 1 : 0;
        } else {
          int64_t a = l->j->get<int64_t>(), b = r->j->get<int64_t>();
          cmp = a < b ? -1 : a > b ? 1 : 0;
        }
      } else if (IsString(*l) && IsString(*r)) {
        cmp = l->j->get_ref<const std::string&>().compare(r->j->get_ref<const std::string&>());
      } else if (IsBool(*l) && IsBool(*r)) {
        cmp = static_cast<int>(l->j->get<bool>()) - static_cast<int>(r->j->get<bool>());
      } else {
        return Err(absl::StrCat("no such overload: ", TypeName(*l), " ", op, " ", TypeName(*r)));
      }
      if (op == "<") return Bool(cmp < 0);
      if (op == "<=") return Bool(cmp <= 0);
      if (op == ">") return Bool(cmp > 0);
      return Bool(cmp >= 0);
    }
    // Arithmetic: CEL has no implicit int/double conversion.
    if (IsInt(*l) && IsInt(*r)) {
      int64_t a = l->j->get<int64_t>(), b = r->j->get<int64_t>(), out = 0;
      bool overflow = false;
      if (op == "+") overflow = __builtin_add_overflow(a, b, &out);
      else if (op == "-") overflow = __builtin_sub_overflow(a, b, &out);
      else if (op == "*") overflow = __builtin_mul_overflow(a, b, &out);
      else if (op == "/" || op == "%") {
        if (b == 0) return Err(op == "/" ? "division by zero" : "modulus by zero");
        if (a == std::numeric_limits<int64_t>::min() && b == -1) return Err("integer overflow");
        out = op == "/" ? a / b : a % b;
      }
      if (overflow) return Err("integer overflow");
      return Own(out);
    }
    if (IsDouble(*l) && IsDouble(*r) && op != "%") {
      double a = l->j->get<double>(), b = r->j->get<double>();
      return Own(op == "+" ? a + b : op == "-" ? a - b : op == "*" ? a * b : a / b);
    }
    if (op == "+" && IsString(*l) && IsString(*r))
      return Own(l->j->get<std::string>() + r->j->get<std::string>());
    if (op == "+" && l->type.empty() && r->type.empty() && l->j->is_array() && r->j->is_array()) {
      json out = *l->j;
      for (const auto& e : *r->j) out.push_back(e);
      return Own(std::move(out));
    }
    return Err(absl::StrCat("no such overload: ", TypeName(*l), " ", op, " ", TypeName(*r)));
  }

  absl::StatusOr<Value> EvalCall(const Node& n) {
    std::vector<Value> args;
    for (const auto& a : n.args) {
      auto v = Eval(*a);
      if (!v.ok()) return v;
      args.push_back(*v);
    }
    const std::string& fn = n.name;
    if (fn == "size") {
      const Value& v = args[0];
      if (IsString(v)) {
        int64_t count = 0;  // code points
        for (unsigned char c : v.j->get_ref<const std::string&>()) count += (c & 0xC0) != 0x80;
        return Own(count);
      }
      if (v.type.empty() && (v.j->is_array() || v.j->is_object())) return Own(static_cast<int64_t>(v.j->size()));
      return Err(absl::StrCat("no such overload: size(", TypeName(v), ")"));
    }
    if (fn == "type") return Value{&kNull, TypeName(args[0])};
    if (fn == "string") {
      const Value& v = args[0];
      if (IsString(v)) return v;
      if (IsInt(v)) return Own(std::to_string(v.j->get<int64_t>()));
      if (IsBool(v)) return Own(std::string(v.j->get<bool>() ? "true" : "false"));
      if (IsDouble(v)) return Own(v.j->dump());
      return Err(absl::StrCat("no such overload: string(", TypeName(v), ")"));
    }
    if (fn == "int") {
      const Value& v = args[0];
      if (IsInt(v)) return v;
      if (IsDouble(v)) {
        double d = v.j->get<double>();
        if (!std::isfinite(d) || d >= 9.2233720368547758e18 || d < -9.2233720368547758e18)
          return Err("integer overflow");
        return Own(static_cast<int64_t>(d));
      }
      if (IsString(v)) {
        int64_t i;
        if (!absl::SimpleAtoi(v.j->get<std::string>(), &i)) return Err("invalid integer string");
        return Own(i);
      }
      return Err(absl::StrCat("no such overload: int(", TypeName(v), ")"));
    }
    if (fn == "double") {
      const Value& v = args[0];
      if (IsDouble(v)) return v;
      if (IsInt(v)) return Own(static_cast<double>(v.j->get<int64_t>()));
      if (IsString(v)) {
        double d;
        if (!absl::SimpleAtod(v.j->get<std::string>(), &d)) return Err("invalid double string");
        return Own(d);
      }
      return Err(absl::StrCat("no such overload: double(", TypeName(v), ")"));
    }
    // String methods: target first.
    if (args.size() != 2 || !IsString(args[0]) || !IsString(args[1]))
      return Err(absl::StrCat("no such overload: ", fn, "(", TypeName(args[0]), args.size() > 1 ? ", " : "",
                              args.size() > 1 ? TypeName(args[1]) : "", ")"));
    const std::string& s = args[0].j->get_ref<const std::string&>();
    const std::string& t = args[1].j->get_ref<const std::string&>();
    if (fn == "matches") {
      RE2 re(t, RE2::Quiet);
      if (!re.ok()) return Err(absl::StrCat("invalid regular expression '", t, "': ", re.error()));
      return Bool(RE2::PartialMatch(s, re));
    }
    if (fn == "startsWith") return Bool(absl::StartsWith(s, t));
    if (fn == "endsWith") return Bool(absl::EndsWith(s, t));
    if (fn == "contains") return Bool(absl::StrContains(s, t));
    return Err(absl::StrCat("function ", fn, " is not supported"));
  }

  absl::StatusOr<Value> EvalMacro(const Node& n) {
    auto range = Eval(*n.args[0]);
    if (!range.ok()) return range;
    if (!range->type.empty() || !(range->j->is_array() || range->j->is_object()))
      return Err(absl::StrCat("no such overload: ", TypeName(*range), ".", n.name, "()"));
    std::vector<Value> items;
    if (range->j->is_array()) {
      for (const auto& e : *range->j) items.push_back(Value{&e, ""});
    } else {
      for (const auto& [k, v] : range->j->items()) items.push_back(Own(k));
    }
    const std::string& m = n.name;
    int64_t count = 0;
    bool all = true, any = false;
    absl::Status first_error;
    json mapped = json::array();
    for (const Value& item : items) {
      vars_.push_back({n.var, item});
      auto v = Eval(*n.args[1]);
      vars_.pop_back();
      if (m == "map") {
        if (!v.ok()) return v;
        if (!v->type.empty()) return Err("map() produced a type");
        mapped.push_back(*v->j);
        continue;
      }
      if (!v.ok()) {
        if (m == "exists_one" || m == "filter") return v;
        if (first_error.ok()) first_error = v.status();  // all/exists absorb errors like && and ||
        continue;
      }
      if (!IsBool(*v)) return Err(absl::StrCat(m, "() predicate must be a bool, got ", TypeName(*v)));
      bool b = v->j->get<bool>();
      if (m == "filter") {
        if (b) mapped.push_back(*item.j);
        continue;
      }
      all &= b;
      any |= b;
      count += b;
      if (m == "all" && !b) return Bool(false);
      if (m == "exists" && b) return Bool(true);
    }
    if (m == "map" || m == "filter") return Own(std::move(mapped));
    if (m == "exists_one") return Bool(count == 1);
    if (!first_error.ok()) return first_error;
    return Bool(m == "all" ? all : any);
  }

  std::vector<std::pair<std::string, Value>> vars_;
  std::deque<json> arena_;
  int64_t steps_ = 0;
};

}  // namespace

Program::~Program() = default;

absl::StatusOr<std::shared_ptr<const Program>> Program::Compile(const std::string& expression) {
  if (expression.size() > 64 * 1024) return absl::InvalidArgumentError("CEL: expression longer than 64 KiB");
  bool uses_old_self = false;
  auto root = Parse(expression, &uses_old_self);
  if (!root.ok()) return root.status();
  std::shared_ptr<Program> p(new Program());
  p->root_ = std::move(*root);
  p->uses_old_self_ = uses_old_self;
  return std::shared_ptr<const Program>(std::move(p));
}

absl::StatusOr<bool> Program::EvaluateRule(const json& self, const json* old_self) const {
  Context ctx(self, old_self);
  auto v = ctx.Eval(*root_);
  if (!v.ok()) return v.status();
  if (!v->type.empty() || !v->j->is_boolean())
    return absl::InvalidArgumentError(absl::StrCat("rule did not evaluate to a bool but to a ", TypeName(*v)));
  return v->j->get<bool>();
}

}  // namespace cloneset::devcluster::cel
