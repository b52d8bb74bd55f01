#include "devcluster/cel_parse.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cloneset::devcluster::cel {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 64;

// ---- parser --------------------------------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  absl::StatusOr<std::unique_ptr<Node>> ParseAll() {
    auto e = Expr(0);
    if (!e.ok()) return e;
    Skip();
    if (pos_ != s_.size()) return Error("unexpected input");
    return e;
  }
  bool uses_old_self = false;

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("CEL: ", what, " at offset ", pos_));
  }
  void Skip() {
    while (pos_ < s_.size() && absl::ascii_isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Eat(std::string_view tok) {
    Skip();
    if (s_.compare(pos_, tok.size(), tok) != 0) return false;
    // "in" and keywords must not be a prefix of an identifier.
    if (absl::ascii_isalpha(static_cast<unsigned char>(tok[0])) && pos_ + tok.size() < s_.size() &&
        (absl::ascii_isalnum(static_cast<unsigned char>(s_[pos_ + tok.size()])) || s_[pos_ + tok.size()] == '_'))
      return false;
    pos_ += tok.size();
    return true;
  }
  bool Peek(std::string_view tok) {
    size_t save = pos_;
    bool ok = Eat(tok);
    pos_ = save;
    return ok;
  }
  static std::unique_ptr<Node> Make(NodeKind k, std::string name = "") {
    auto n = std::make_unique<Node>();
    n->kind = k;
    n->name = std::move(name);
    return n;
  }
  static std::unique_ptr<Node> Binary(std::string op, std::unique_ptr<Node> a, std::unique_ptr<Node> b) {
    auto n = Make(NodeKind::kBinary, std::move(op));
    n->args.push_back(std::move(a));
    n->args.push_back(std::move(b));
    return n;
  }

  absl::StatusOr<std::unique_ptr<Node>> Expr(int depth) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    auto cond = Or(depth);
    if (!cond.ok() || !Eat("?")) return cond;
    auto a = Or(depth + 1);
    if (!a.ok()) return a;
    if (!Eat(":")) return Error("expected ':'");
    auto b = Expr(depth + 1);
    if (!b.ok()) return b;
    auto n = Make(NodeKind::kTernary);
    n->args.push_back(std::move(*cond));
    n->args.push_back(std::move(*a));
    n->args.push_back(std::move(*b));
    return n;
  }
  absl::StatusOr<std::unique_ptr<Node>> Or(int depth) {
    auto l = And(depth);
    while (l.ok() && Eat("||")) {
      auto r = And(depth);
      if (!r.ok()) return r;
      l = Binary("||", std::move(*l), std::move(*r));
    }
    return l;
  }
  absl::StatusOr<std::unique_ptr<Node>> And(int depth) {
    auto l = Relation(depth);
    while (l.ok() && Eat("&&")) {
      auto r = Relation(depth);
      if (!r.ok()) return r;
      l = Binary("&&", std::move(*l), std::move(*r));
    }
    return l;
  }
  absl::StatusOr<std::unique_ptr<Node>> Relation(int depth) {
    auto l = Addition(depth);
    while (l.ok()) {
      std::string op;
      for (const char* o : {"==", "!=", "<=", ">=", "<", ">", "in"})
        if (Eat(o)) {
          op = o;
          break;
        }
      if (op.empty()) break;
      auto r = Addition(depth);
      if (!r.ok()) return r;
      l = Binary(op, std::move(*l), std::move(*r));
    }
    return l;
  }
  absl::StatusOr<std::unique_ptr<Node>> Addition(int depth) {
    auto l = Multiplication(depth);
    while (l.ok()) {
      std::string op = Eat("+") ? "+" : Eat("-") ? "-" : "";
      if (op.empty()) break;
      auto r = Multiplication(depth);
      if (!r.ok()) return r;
      l = Binary(op, std::move(*l), std::move(*r));
    }
    return l;
  }
  absl::StatusOr<std::unique_ptr<Node>> Multiplication(int depth) {
    auto l = Unary(depth);
    while (l.ok()) {
      std::string op = Eat("*") ? "*" : Eat("/") ? "/" : Eat("%") ? "%" : "";
      if (op.empty()) break;
      auto r = Unary(depth);
      if (!r.ok()) return r;
      l = Binary(op, std::move(*l), std::move(*r));
    }
    return l;
  }
  absl::StatusOr<std::unique_ptr<Node>> Unary(int depth) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    Skip();
    if (Peek("!=")) return Error("unexpected '!='");
    if (Eat("!")) {
      auto e = Unary(depth + 1);
      if (!e.ok()) return e;
      auto n = Make(NodeKind::kNot);
      n->args.push_back(std::move(*e));
      return n;
    }
    if (Eat("-")) {
      auto e = Unary(depth + 1);
      if (!e.ok()) return e;
      if ((*e)->kind == NodeKind::kLiteral && (*e)->literal.is_number()) {
        (*e)->literal = (*e)->literal.is_number_float() ? json(-(*e)->literal.get<double>())
                                                         : json(-(*e)->literal.get<int64_t>());
        return e;
      }
      auto n = Make(NodeKind::kNeg);
      n->args.push_back(std::move(*e));
      return n;
    }
    return Member(depth + 1);
  }
  absl::StatusOr<std::vector<std::unique_ptr<Node>>> Args(int depth, const char* close) {
    std::vector<std::unique_ptr<Node>> out;
    if (Eat(close)) return out;
    while (true) {
      auto e = Expr(depth + 1);
      if (!e.ok()) return e.status();
      out.push_back(std::move(*e));
      if (Eat(close)) return out;
      if (!Eat(",")) return Error(absl::StrCat("expected ',' or '", close, "'"));
    }
  }
  absl::StatusOr<std::unique_ptr<Node>> Member(int depth) {
    auto e = Primary(depth);
    while (e.ok()) {
      if (Eat(".")) {
        auto id = Ident();
        if (!id.ok()) return id.status();
        if (Eat("(")) {
          auto args = Args(depth, ")");
          if (!args.ok()) return args.status();
          auto made = MakeCall(*id, std::move(*e), std::move(*args));
          if (!made.ok()) return made;
          e = std::move(made);
        } else {
          auto n = Make(NodeKind::kSelect, *id);
          n->args.push_back(std::move(*e));
          e = std::move(n);
        }
      } else if (Eat("[")) {
        auto i = Expr(depth + 1);
        if (!i.ok()) return i;
        if (!Eat("]")) return Error("expected ']'");
        auto n = Make(NodeKind::kIndex);
        n->args.push_back(std::move(*e));
        n->args.push_back(std::move(*i));
        e = std::move(n);
      } else {
        break;
      }
    }
    return e;
  }
  absl::StatusOr<std::unique_ptr<Node>> MakeCall(const std::string& fn, std::unique_ptr<Node> target,
                                                std::vector<std::unique_ptr<Node>> args) {
    static const char* kMacros[] = {"all", "exists", "exists_one", "map", "filter"};
    for (const char* m : kMacros) {
      if (fn != m) continue;
      if (args.size() != 2 || args[0]->kind != NodeKind::kIdent)
        return Error(absl::StrCat("macro ", fn, " takes a variable name and an expression"));
      auto n = Make(NodeKind::kMacro, fn);
      n->var = args[0]->name;
      if (n->var == "self" || n->var == "oldSelf") return Error("a macro variable may not be named self or oldSelf");
      n->args.push_back(std::move(target));
      n->args.push_back(std::move(args[1]));
      return n;
    }
    static const char* kMethods[] = {"matches", "startsWith", "endsWith", "contains", "size"};
    bool known = false;
    for (const char* m : kMethods) known |= fn == m;
    if (!known) return Error(absl::StrCat("function ", fn, " is not supported"));
    auto n = Make(NodeKind::kCall, fn);
    n->has_target = true;
    n->args.push_back(std::move(target));
    for (auto& a : args) n->args.push_back(std::move(a));
    return n;
  }
  absl::StatusOr<std::string> Ident() {
    Skip();
    size_t start = pos_;
    if (pos_ < s_.size() && (absl::ascii_isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      ++pos_;
      while (pos_ < s_.size() && (absl::ascii_isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
    }
    if (start == pos_) return Error("expected an identifier");
    return s_.substr(start, pos_ - start);
  }
  absl::StatusOr<std::unique_ptr<Node>> Primary(int depth) {
    Skip();
    if (pos_ >= s_.size()) return Error("unexpected end of expression");
    char c = s_[pos_];
    if (Eat("(")) {
      auto e = Expr(depth + 1);
      if (!e.ok()) return e;
      if (!Eat(")")) return Error("expected ')'");
      return e;
    }
    if (Eat("[")) {
      auto items = Args(depth, "]");
      if (!items.ok()) return items.status();
      auto n = Make(NodeKind::kList);
      n->args = std::move(*items);
      return n;
    }
    if (c == '{') return Error("map literals are not supported");
    if (c == '"' || c == '\'' || ((c == 'r' || c == 'R') && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '\'' || s_[pos_ + 1] == '"'))) {
      auto str = String();
      if (!str.ok()) return str.status();
      auto n = Make(NodeKind::kLiteral);
      n->literal = *str;
      return n;
    }
    if (absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '.') return Number();
    auto id = Ident();
    if (!id.ok()) return id.status();
    if (*id == "true" || *id == "false") {
      auto n = Make(NodeKind::kLiteral);
      n->literal = *id == "true";
      return n;
    }
    if (*id == "null") return Make(NodeKind::kLiteral);
    if (Eat("(")) {
      auto args = Args(depth, ")");
      if (!args.ok()) return args.status();
      if (*id == "has") {
        if (args->size() != 1 || (*args)[0]->kind != NodeKind::kSelect)
          return Error("has() takes one field selection such as has(self.field)");
        auto n = Make(NodeKind::kHas);
        n->args.push_back(std::move((*args)[0]));
        return n;
      }
      static const char* kGlobals[] = {"size", "type", "int", "string", "double", "matches"};
      bool known = false;
      for (const char* g : kGlobals) known |= *id == g;
      if (!known) return Error(absl::StrCat("function ", *id, " is not supported"));
      size_t want = *id == "matches" ? 2 : 1;
      if (args->size() != want) return Error(absl::StrCat(*id, "() takes ", want, " argument(s)"));
      auto n = Make(NodeKind::kCall, *id);
      n->args = std::move(*args);
      return n;
    }
    if (*id == "oldSelf") uses_old_self = true;
    return Make(NodeKind::kIdent, *id);
  }
  absl::StatusOr<std::string> String() {
    bool raw = false;
    if (s_[pos_] == 'r' || s_[pos_] == 'R') {
      raw = true;
      ++pos_;
    }
    char q = s_[pos_++];
    if (s_.compare(pos_, 2, std::string(2, q)) == 0) return Error("triple-quoted strings are not supported");
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != q) {
      char c = s_[pos_++];
      if (c == '\\' && !raw) {
        if (pos_ >= s_.size()) break;
        char e = s_[pos_++];
        switch (e) {
          case '\\': out += '\\'; break;
          case '\'': out += '\''; break;
          case '"': out += '"'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          default: return Error(absl::StrCat("escape \\", std::string(1, e), " is not supported"));
        }
      } else {
        out += c;
      }
    }
    if (pos_ >= s_.size()) return Error("unterminated string");
    ++pos_;
    return out;
  }
  absl::StatusOr<std::unique_ptr<Node>> Number() {
    size_t start = pos_;
    bool is_float = false;
    while (pos_ < s_.size() && (absl::ascii_isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                s_[pos_] == 'e' || s_[pos_] == 'E' ||
                                ((s_[pos_] == '+' || s_[pos_] == '-') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')))) {
      is_float |= s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E';
      ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'u' || s_[pos_] == 'U' || s_[pos_] == 'x'))
      return Error("unsigned and hexadecimal literals are not supported");
    std::string text = s_.substr(start, pos_ - start);
    auto n = Make(NodeKind::kLiteral);
    if (is_float) {
      double d;
      if (!absl::SimpleAtod(text, &d)) return Error("bad number");
      n->literal = d;
    } else {
      int64_t i;
      if (!absl::SimpleAtoi(text, &i)) return Error("bad integer");
      n->literal = i;
    }
    return n;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Node>> Parse(const std::string& text, bool* uses_old_self) {
  Parser parser(text);
  auto root = parser.ParseAll();
  if (root.ok()) *uses_old_self = parser.uses_old_self;
  return root;
}

}  // namespace cloneset::devcluster::cel
