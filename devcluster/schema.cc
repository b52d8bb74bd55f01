#include "devcluster/schema.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <re2/re2.h>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cloneset::devcluster {

using nlohmann::json;

namespace {

constexpr int kMaxDepth = 128;

// How Go's field.Error prints a bad value: strings quoted, numbers and bools plain, "null" for nothing.
std::string Printed(const json& v) {
  if (v.is_string()) return json(v.get<std::string>()).dump();
  return v.dump();
}

// The JSON type name the OpenAPI validator reports ("integer", "number", "string", ...).
std::string JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "unknown";
  }
}

bool IsIntegral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

// The string formats kube-apiserver checks that CRDs here use; other formats are not checked (docs/compatibility.md).
bool FormatMatches(const std::string& format, const std::string& v) {
  static const RE2 kDateTime(R"(^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$)");
  static const RE2 kDate(R"(^\d{4}-\d{2}-\d{2}$)");
  static const RE2 kUuid(R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)");
  static const RE2 kByte(R"(^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$)");
  if (format == "date-time") return RE2::FullMatch(v, kDateTime);
  if (format == "date") return RE2::FullMatch(v, kDate);
  if (format == "uuid") return RE2::FullMatch(v, kUuid);
  if (format == "byte") return RE2::FullMatch(v, kByte);
  return true;
}

bool TypeMatches(const std::string& type, const json& v) {
  if (type == "integer") return IsIntegral(v);
  if (type == "number") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  return true;
}

std::string Child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string Index(const std::string& path, size_t i) { return absl::StrCat(path, "[", i, "]"); }

size_t Runes(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

const json* Sub(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it == schema.end() ? nullptr : &*it;
}

bool Flag(const json& schema, const char* key) {
  const json* v = Sub(schema, key);
  return v && v->is_boolean() && v->get<bool>();
}

void CollectRules(const json& schema, StructuralSchema& out, int depth) {
  if (depth > kMaxDepth || !schema.is_object()) return;
  if (const json* rules = Sub(schema, "x-kubernetes-validations"); rules && rules->is_array())
    for (const auto& r : *rules) {
      if (!r.is_object() || !r.contains("rule") || !r["rule"].is_string()) continue;
      const std::string text = r["rule"];
      if (out.rules.count(text) || out.not_evaluated.count(text)) continue;
      auto p = cel::Program::Compile(text);
      if (p.ok()) out.rules[text] = *p;
      else out.not_evaluated[text] = std::string(p.status().message());
    }
  if (const json* props = Sub(schema, "properties"); props && props->is_object())
    for (const auto& [k, s] : props->items()) CollectRules(s, out, depth + 1);
  for (const char* key : {"items", "additionalProperties"})
    if (const json* s = Sub(schema, key); s && s->is_object()) CollectRules(*s, out, depth + 1);
  for (const char* key : {"anyOf", "allOf", "oneOf"})
    if (const json* list = Sub(schema, key); list && list->is_array())
      for (const auto& s : *list) CollectRules(s, out, depth + 1);
}

// ---- pruning and defaulting ------------------------------------------------------------------------------------

// A custom resource's metadata is an ObjectMeta: other fields are pruned like unknown fields elsewhere.
void PruneObjectMeta(json& meta, std::vector<std::string>& unknown) {
  static const std::set<std::string> kFields = {
      "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
      "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
      "managedFields"};
  for (auto it = meta.begin(); it != meta.end();) {
    if (kFields.count(it.key())) {
      ++it;
    } else {
      unknown.push_back("metadata." + it.key());
      it = meta.erase(it);
    }
  }
}

void PruneDefaultAt(const json& schema, json& value, const std::string& path, std::vector<std::string>& unknown,
                    int depth) {
  if (depth > kMaxDepth || !schema.is_object()) return;
  if (value.is_object()) {
    const json* props = Sub(schema, "properties");
    const json* additional = Sub(schema, "additionalProperties");
    const bool preserve = Flag(schema, "x-kubernetes-preserve-unknown-fields");
    const bool root_meta = depth == 0;  // metadata at the root is ObjectMeta: checked elsewhere
    // Defaults first, so that a defaulted object gets its own nested defaults below.
    if (props && props->is_object())
      for (const auto& [k, s] : props->items()) {
        if (!s.is_object() || !s.contains("default")) continue;
        auto it = value.find(k);
        if (it == value.end() || (it->is_null() && !Flag(s, "nullable"))) value[k] = s["default"];
      }
    for (auto it = value.begin(); it != value.end();) {
      const std::string& key = it.key();
      if (root_meta && key == "metadata" && it->is_object()) {
        PruneObjectMeta(*it, unknown);
        ++it;
        continue;
      }
      if (root_meta && (key == "metadata" || key == "apiVersion" || key == "kind")) {
        ++it;
        continue;
      }
      const json* sub = props && props->is_object() && props->contains(key) ? &(*props)[key] : nullptr;
      if (!sub && additional && additional->is_object()) sub = additional;
      if (sub && it->is_null() && !Flag(*sub, "nullable")) {
        it = value.erase(it);  // a null where the schema does not allow one is dropped, not reported
        continue;
      }
      if (sub) {
        PruneDefaultAt(*sub, *it, Child(path, key), unknown, depth + 1);
        ++it;
      } else if (preserve || (additional && additional->is_boolean() && additional->get<bool>())) {
        ++it;
      } else {
        unknown.push_back(Child(path, key));
        it = value.erase(it);
      }
    }
  } else if (value.is_array()) {
    if (const json* items = Sub(schema, "items"); items && items->is_object())
      for (size_t i = 0; i < value.size(); ++i) PruneDefaultAt(*items, value[i], Index(path, i), unknown, depth + 1);
  }
}

// ---- validation ----------------------------------------------------------------------------------------------

// kube-apiserver checks the schema first and evaluates the CEL rules only when no "blocking" error (wrong type,
// unsupported enum value, missing required field, too long, too many) was found, since rules assume a well-typed
// object; otherwise it adds this note instead.
bool IsBlocking(const FieldError& e) {
  return e.reason == "FieldValueTypeInvalid" || e.reason == "FieldValueNotSupported" ||
         e.reason == "FieldValueRequired" || e.reason == "FieldValueTooLong" || e.reason == "FieldValueTooMany";
}

class Validator {
 public:
  enum class Pass { kSchema, kRules };
  Validator(const StructuralSchema& schema, std::vector<FieldError>& errors, Pass pass = Pass::kSchema)
      : schema_(schema), errors_(errors), pass_(pass) {}

  void Validate(const json& s, const json& v, const json* old, const std::string& path, int depth) {
    if (depth > kMaxDepth || !s.is_object()) return;
    if (old && *old == v) return;  // ratcheting: an unchanged value is not validated again
    if (pass_ == Pass::kSchema && !ValidateValue(s, v, path, depth)) return;
    if (pass_ == Pass::kRules && v.is_null()) return;
    if (v.is_object()) {
      const json* props = Sub(s, "properties");
      const json* additional = Sub(s, "additionalProperties");
      for (const auto& [k, child] : v.items()) {
        if (depth == 0 && (k == "metadata" || k == "apiVersion" || k == "kind")) continue;
        const json* sub = props && props->is_object() && props->contains(k) ? &(*props)[k] : nullptr;
        if (!sub && additional && additional->is_object()) sub = additional;
        if (!sub) continue;
        const json* old_child = old && old->is_object() && old->contains(k) ? &(*old)[k] : nullptr;
        Validate(*sub, child, old_child, Child(path, k), depth + 1);
      }
    } else if (v.is_array()) {
      if (const json* items = Sub(s, "items"); items && items->is_object())
        for (size_t i = 0; i < v.size(); ++i)
          Validate(*items, v[i], OldElement(s, v[i], old), Index(path, i), depth + 1);
    }
    if (pass_ == Pass::kRules) Rules(s, v, old, path);
  }

 private:
  // The old element that corresponds to `element`: for list-type map, the one with the same keys.
  static const json* OldElement(const json& s, const json& element, const json* old) {
    if (!old || !old->is_array()) return nullptr;
    const json* type = Sub(s, "x-kubernetes-list-type");
    const json* keys = Sub(s, "x-kubernetes-list-map-keys");
    if (!type || *type != "map" || !keys || !keys->is_array() || !element.is_object()) return nullptr;
    for (const auto& o : *old) {
      if (!o.is_object()) continue;
      bool same = true;
      for (const auto& k : *keys)
        if (k.is_string()) same &= o.value(k.get<std::string>(), json()) == element.value(k.get<std::string>(), json());
      if (same) return &o;
    }
    return nullptr;
  }

  void Add(const std::string& reason, const std::string& field, const std::string& message) {
    errors_.push_back({reason, field, message});
  }
  void Invalid(const std::string& field, const json& value, const std::string& detail) {
    Add("FieldValueInvalid", field, absl::StrCat("Invalid value: ", Printed(value), ": ", detail));
  }
  static std::string InBody(const std::string& path) { return (path.empty() ? std::string("body") : path) + " in body"; }

  // The value-level checks of one schema node (also used for anyOf/allOf/oneOf/not branches). False when the type
  // is wrong (nothing below is checked then).
  bool ValidateValue(const json& s, const json& v, const std::string& path, int depth) {
    const bool int_or_string = Flag(s, "x-kubernetes-int-or-string");
    if (v.is_null()) {
      if (Flag(s, "nullable")) return false;
      if (const json* t = Sub(s, "type"); t && t->is_string()) {
        Add("FieldValueTypeInvalid", path,
            absl::StrCat("Invalid value: \"null\": ", InBody(path), " must be of type ", t->get<std::string>(),
                         ": \"null\""));
        return false;
      }
    }
    if (int_or_string) {
      if (!IsIntegral(v) && !v.is_string()) {
        Add("FieldValueTypeInvalid", path,
            absl::StrCat("Invalid value: \"", JsonTypeName(v), "\": ", InBody(path),
                         " must be of type integer or string: \"", JsonTypeName(v), "\""));
        return false;
      }
    } else if (const json* t = Sub(s, "type"); t && t->is_string() && !TypeMatches(*t, v)) {
      Add("FieldValueTypeInvalid", path,
          absl::StrCat("Invalid value: \"", JsonTypeName(v), "\": ", InBody(path), " must be of type ",
                       t->get<std::string>(), ": \"", JsonTypeName(v), "\""));
      return false;
    }
    if (const json* e = Sub(s, "enum"); e && e->is_array()) {
      bool found = false;
      for (const auto& allowed : *e) found |= allowed == v;
      if (!found) {
        std::vector<std::string> values;
        for (const auto& allowed : *e) values.push_back(Printed(allowed));
        Add("FieldValueNotSupported", path,
            absl::StrCat("Unsupported value: ", Printed(v), ": supported values: ", absl::StrJoin(values, ", ")));
      }
    }
    if (v.is_number()) {
      const double d = v.get<double>();
      if (const json* m = Sub(s, "minimum"); m && m->is_number()) {
        bool exclusive = Flag(s, "exclusiveMinimum");
        if (exclusive ? d <= m->get<double>() : d < m->get<double>())
          Invalid(path, v, absl::StrCat(InBody(path), " should be greater than ", exclusive ? "" : "or equal to ",
                                        m->dump()));
      }
      if (const json* m = Sub(s, "maximum"); m && m->is_number()) {
        bool exclusive = Flag(s, "exclusiveMaximum");
        if (exclusive ? d >= m->get<double>() : d > m->get<double>())
          Invalid(path, v, absl::StrCat(InBody(path), " should be less than ", exclusive ? "" : "or equal to ",
                                        m->dump()));
      }
      if (const json* m = Sub(s, "multipleOf"); m && m->is_number() && m->get<double>() > 0 &&
                                                 std::fmod(d, m->get<double>()) != 0)
        Invalid(path, v, absl::StrCat(InBody(path), " should be a multiple of ", m->dump()));
    }
    if (v.is_string()) {
      const std::string& str = v.get_ref<const std::string&>();
      if (const json* m = Sub(s, "maxLength"); m && m->is_number_integer() && Runes(str) > m->get<size_t>())
        Add("FieldValueTooLong", path, absl::StrCat("Too long: may not be more than ", m->get<size_t>(), " bytes"));
      if (const json* m = Sub(s, "minLength"); m && m->is_number_integer() && Runes(str) < m->get<size_t>())
        Invalid(path, v, absl::StrCat(InBody(path), " should be at least ", m->get<size_t>(), " chars long"));
      if (const json* f = Sub(s, "format"); f && f->is_string() && !int_or_string && !FormatMatches(*f, str))
        Add("FieldValueTypeInvalid", path,
            absl::StrCat("Invalid value: ", Printed(v), ": ", InBody(path), " must be of type ", f->get<std::string>(),
                         ": ", Printed(v)));
      if (const json* p = Sub(s, "pattern"); p && p->is_string()) {
        RE2 re(p->get<std::string>(), RE2::Quiet);
        if (re.ok() && !RE2::PartialMatch(str, re))
          Invalid(path, v, absl::StrCat(InBody(path), " should match '", p->get<std::string>(), "'"));
      }
    }
    if (v.is_array()) {
      if (const json* m = Sub(s, "maxItems"); m && m->is_number_integer() && v.size() > m->get<size_t>())
        Add("FieldValueTooMany", path,
            absl::StrCat("Too many: ", v.size(), ": must have at most ", m->get<size_t>(), " items"));
      if (const json* m = Sub(s, "minItems"); m && m->is_number_integer() && v.size() < m->get<size_t>())
        Invalid(path, v.size(), absl::StrCat(InBody(path), " should have at least ", m->get<size_t>(), " items"));
      ListUniqueness(s, v, path);
    }
    if (v.is_object()) {
      if (const json* req = Sub(s, "required"); req && req->is_array())
        for (const auto& r : *req)
          if (r.is_string() && (!v.contains(r.get<std::string>()) || v[r.get<std::string>()].is_null()))
            Add("FieldValueRequired", Child(path, r), "Required value");
      if (const json* m = Sub(s, "maxProperties"); m && m->is_number_integer() && v.size() > m->get<size_t>())
        Add("FieldValueTooMany", path,
            absl::StrCat("Too many: ", v.size(), ": must have at most ", m->get<size_t>(), " items"));
      if (const json* m = Sub(s, "minProperties"); m && m->is_number_integer() && v.size() < m->get<size_t>())
        Invalid(path, v.size(), absl::StrCat(InBody(path), " should have at least ", m->get<size_t>(), " properties"));
    }
    // Value validations of the junctors (structural schemas allow only value checks in them).
    if (const json* any = Sub(s, "anyOf"); any && any->is_array() && !any->empty()) {
      bool one_ok = false;
      for (const auto& b : *any) one_ok |= Passes(b, v, path, depth);
      if (!one_ok) Invalid(path, v, absl::StrCat(InBody(path), " must validate at least one schema (anyOf)"));
    }
    if (const json* one = Sub(s, "oneOf"); one && one->is_array() && !one->empty()) {
      int passing = 0;
      for (const auto& b : *one) passing += Passes(b, v, path, depth);
      if (passing != 1) Invalid(path, v, absl::StrCat(InBody(path), " must validate one and only one schema (oneOf)"));
    }
    if (const json* all = Sub(s, "allOf"); all && all->is_array())
      for (const auto& b : *all) ValidateValue(b, v, path, depth + 1);
    if (const json* n = Sub(s, "not"); n && n->is_object() && Passes(*n, v, path, depth))
      Invalid(path, v, absl::StrCat(InBody(path), " must not validate the schema (not)"));
    return true;
  }

  bool Passes(const json& s, const json& v, const std::string& path, int depth) {
    std::vector<FieldError> scratch;
    Validator inner(schema_, scratch);
    inner.ValidateValue(s, v, path, depth + 1);
    return scratch.empty();
  }

  void ListUniqueness(const json& s, const json& v, const std::string& path) {
    const json* type = Sub(s, "x-kubernetes-list-type");
    if (!type || !type->is_string()) return;
    if (*type == "set") {
      std::set<std::string> seen;
      for (size_t i = 0; i < v.size(); ++i)
        if (!seen.insert(v[i].dump()).second) Add("FieldValueDuplicate", Index(path, i),
                                                  absl::StrCat("Duplicate value: ", Printed(v[i])));
    } else if (*type == "map") {
      const json* keys = Sub(s, "x-kubernetes-list-map-keys");
      if (!keys || !keys->is_array()) return;
      std::set<std::string> seen;
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_object()) continue;
        json key = json::object();
        for (const auto& k : *keys)
          if (k.is_string() && v[i].contains(k.get<std::string>())) key[k.get<std::string>()] = v[i][k.get<std::string>()];
        if (!seen.insert(key.dump()).second)
          Add("FieldValueDuplicate", Index(path, i), absl::StrCat("Duplicate value: ", key.dump()));
      }
    }
  }

  void Rules(const json& s, const json& v, const json* old, const std::string& path) {
    const json* rules = Sub(s, "x-kubernetes-validations");
    if (!rules || !rules->is_array()) return;
    const json* type = Sub(s, "type");
    const json type_name = type && type->is_string() ? *type : json("");
    for (const auto& r : *rules) {
      if (!r.is_object() || !r.contains("rule") || !r["rule"].is_string()) continue;
      auto it = schema_.rules.find(r["rule"].get<std::string>());
      if (it == schema_.rules.end()) continue;  // outside the supported subset: listed in not_evaluated
      const cel::Program& program = *it->second;
      if (program.UsesOldSelf() && !old) continue;  // transition rules need an old value
      auto ok = program.EvaluateRule(v, old);
      std::string field = path;
      if (r.contains("fieldPath") && r["fieldPath"].is_string())
        field = path + r["fieldPath"].get<std::string>();
      std::string reason = "FieldValueInvalid";
      if (r.contains("reason") && r["reason"].is_string()) reason = r["reason"].get<std::string>();
      if (!ok.ok()) {
        Invalid(field, type_name, absl::StrCat("rule evaluation error: ", ok.status().message()));
        continue;
      }
      if (*ok) continue;
      std::string message = r.contains("message") && r["message"].is_string()
                                ? r["message"].get<std::string>()
                                : absl::StrCat("failed rule: ", r["rule"].get<std::string>());
      if (reason == "FieldValueRequired") Add(reason, field, absl::StrCat("Required value: ", message));
      else if (reason == "FieldValueForbidden") Add(reason, field, absl::StrCat("Forbidden: ", message));
      else if (reason == "FieldValueDuplicate") Add(reason, field, absl::StrCat("Duplicate value: ", message));
      else Add("FieldValueInvalid", field, absl::StrCat("Invalid value: ", Printed(type_name), ": ", message));
    }
  }

  const StructuralSchema& schema_;
  std::vector<FieldError>& errors_;
  Pass pass_;
};

}  // namespace

absl::Status FieldErrorsStatus(const std::vector<FieldError>& errors) {
  if (errors.empty()) return absl::OkStatus();
  std::vector<std::string> parts;
  json causes = json::array();
  for (const auto& e : errors) {
    parts.push_back(e.field.empty() ? e.message : absl::StrCat(e.field, ": ", e.message));
    causes.push_back({{"reason", e.reason}, {"message", e.message}, {"field", e.field}});
  }
  std::string message = parts.size() == 1 ? parts[0] : absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
  absl::Status s = absl::InvalidArgumentError(message);
  s.SetPayload(kFieldCausesPayload, absl::Cord(causes.dump()));
  return s;
}

std::shared_ptr<const StructuralSchema> CompileSchema(const json& open_api_v3_schema) {
  auto s = std::make_shared<StructuralSchema>();
  s->root = open_api_v3_schema;
  CollectRules(s->root, *s, 0);
  return s;
}

std::vector<std::string> PruneAndDefault(const StructuralSchema& schema, json& object) {
  std::vector<std::string> unknown;
  PruneDefaultAt(schema.root, object, "", unknown, 0);
  return unknown;
}

std::vector<FieldError> ValidateAgainstSchema(const StructuralSchema& schema, const json& object, const json* old,
                                              const std::vector<std::string>& replicas_paths) {
  std::vector<FieldError> errors;
  Validator(schema, errors, Validator::Pass::kSchema).Validate(schema.root, object, old, "", 0);
  // The scale subresource's replica counts, named by the CRD's JSON paths (".spec.replicas").
  for (const std::string& path : replicas_paths) {
    const json* v = &object;
    for (absl::string_view part : absl::StrSplit(absl::StripPrefix(path, "."), '.')) {
      if (!v->is_object() || !v->contains(std::string(part))) {
        v = nullptr;
        break;
      }
      v = &(*v)[std::string(part)];
    }
    if (v && v->is_number_integer() && v->get<int64_t>() < 0)
      errors.push_back({"FieldValueInvalid", path, absl::StrCat("Invalid value: ", v->dump(),
                                                                ": should be a non-negative integer")});
  }
  if (std::any_of(errors.begin(), errors.end(), IsBlocking)) {
    errors.push_back({"FieldValueInvalid", "<nil>",
                      "Invalid value: null: some validation rules were not checked because the object was "
                      "invalid; correct the existing errors to complete validation"});
    return errors;
  }
  Validator(schema, errors, Validator::Pass::kRules).Validate(schema.root, object, old, "", 0);
  return errors;
}

}  // namespace cloneset::devcluster
