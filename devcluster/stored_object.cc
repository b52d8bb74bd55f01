// The store's objects as stored: the compact serialization with its index (labels, selectable fields, owners,
// finalizers), made before or after the resourceVersion is known, and parsed back. Apart from object_meta.cc
// (defaulting, validation, names) because the store's write path and the WAL's replay are its only users.
#include "devcluster/stored_object.h"

#include <simdjson.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "devcluster/object_meta.h"

namespace cloneset::devcluster {

namespace {

nlohmann::json FromSimdjson(simdjson::dom::element e) {
  using nlohmann::json;
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      json o = json::object();
      auto& members = o.get_ref<json::object_t&>();
      // A serialization of ours lists keys in order, so the end is the right hint; the last duplicate wins as in
      // nlohmann's parser.
      for (simdjson::dom::key_value_pair field : simdjson::dom::object(e))
        members.insert_or_assign(members.end(), std::string(field.key), FromSimdjson(field.value));
      return o;
    }
    case simdjson::dom::element_type::ARRAY: {
      json a = json::array();
      auto& items = a.get_ref<json::array_t&>();
      for (simdjson::dom::element item : simdjson::dom::array(e)) items.push_back(FromSimdjson(item));
      return a;
    }
    case simdjson::dom::element_type::INT64: {
      const int64_t i = int64_t(e);
      return i >= 0 ? json(static_cast<uint64_t>(i)) : json(i);
    }
    case simdjson::dom::element_type::UINT64: return json(uint64_t(e));
    case simdjson::dom::element_type::DOUBLE: return json(double(e));
    case simdjson::dom::element_type::STRING: return json(std::string(std::string_view(e)));
    case simdjson::dom::element_type::BOOL: return json(bool(e));
    case simdjson::dom::element_type::NULL_VALUE: return json(nullptr);
  }
  return json();
}

// Past this size a text goes to nlohmann's parser: a simdjson parser keeps buffers as large as the largest text
// it parsed, one per thread, and the store's objects are mostly a few KB.
constexpr size_t kSimdjsonMaxText = 64 * 1024;

}  // namespace

nlohmann::json ParseStoredJson(const std::string& text) {
  if (text.size() <= kSimdjsonMaxText) {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(text).get(root) == simdjson::SUCCESS) return FromSimdjson(root);
  }
  return nlohmann::json::parse(text);
}

nlohmann::json StoredObject::Parse() const { return ParseStoredJson(json); }

namespace {

// The index of `object` (everything but json and resource_version) into `s`.
void IndexInto(const nlohmann::json& object, std::string_view resource, StoredObject* s);

}  // namespace

UnversionedObject MakeUnversionedObject(nlohmann::json& object, std::string_view resource) {
  object["metadata"]["resourceVersion"] = "";
  UnversionedObject u;
  u.object = std::make_shared<StoredObject>();
  std::string& out = u.object->json;
  // object.dump() written member by member (an object's members in key order, separated by commas, no spaces)
  // so that the offset of metadata.resourceVersion's value is known without searching the text for it. One
  // serializer (dump()'s, with its strict handling of invalid UTF-8) appends every value and key to `out`, and
  // writes nothing that outlives a call, so the punctuation between calls goes straight into `out`.
  nlohmann::detail::serializer<nlohmann::json> ser(nlohmann::detail::output_adapter<char, std::string>(out), ' ',
                                                   nlohmann::json::error_handler_t::strict);
  nlohmann::json key = "";  // keys are escaped as strings; one holder, its buffer reused
  auto member = [&](bool& first, const std::string& name) {
    if (!first) out.push_back(',');
    first = false;
    key.get_ref<std::string&>() = name;
    ser.dump(key, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
    out.push_back(':');
  };
  auto value = [&](const nlohmann::json& v) { ser.dump(v, false, false, 0); };
  out.push_back('{');
  bool first = true;
  for (auto it = object.cbegin(); it != object.cend(); ++it) {
    member(first, it.key());
    if (it.key() != "metadata") {
      value(*it);
      continue;
    }
    out.push_back('{');
    bool first_meta = true;
    for (auto m = it->cbegin(); m != it->cend(); ++m) {
      member(first_meta, m.key());
      if (m.key() == "resourceVersion") {
        out += "\"\"";
        u.rv_at = out.size() - 1;
      } else {
        value(*m);
      }
    }
    out.push_back('}');
  }
  out.push_back('}');
  IndexInto(object, resource, u.object.get());
  return u;
}

size_t VersionedSize(const UnversionedObject& u, int64_t rv) {
  return u.object->json.size() + absl::StrCat(rv).size();
}

ObjectPtr SetVersion(UnversionedObject u, int64_t rv) {
  u.object->json.insert(u.rv_at, absl::StrCat(rv));
  u.object->resource_version = rv;
  return std::move(u.object);
}

ObjectPtr MakeStoredObject(const nlohmann::json& object, std::string_view resource) {
  auto s = std::make_shared<StoredObject>();
  s->json = object.dump();
  IndexInto(object, resource, s.get());
  return s;
}

namespace {

void IndexInto(const nlohmann::json& object, std::string_view resource, StoredObject* s) {
  static const nlohmann::json kNoMetadata = nlohmann::json::object();
  // Both branches lvalues: the metadata is not copied.
  const nlohmann::json& meta = object.contains("metadata") ? object["metadata"] : kNoMetadata;
  s->ns = StringAt(meta, {"namespace"});
  s->name = StringAt(meta, {"name"});
  s->uid = StringAt(meta, {"uid"});
  std::string rv = StringAt(meta, {"resourceVersion"});
  s->resource_version = rv.empty() ? 0 : std::strtoll(rv.c_str(), nullptr, 10);
  if (meta.is_object()) {
    if (auto it = meta.find("labels"); it != meta.end() && it->is_object())
      for (const auto& [k, v] : it->items())
        if (v.is_string()) s->labels.emplace_back(k, v.get<std::string>());
    if (auto it = meta.find("ownerReferences"); it != meta.end() && it->is_array())
      for (const auto& ref : *it)
        if (ref.is_object() && ref.contains("uid") && ref["uid"].is_string()) s->owner_uids.push_back(ref["uid"]);
    if (auto it = meta.find("finalizers"); it != meta.end() && it->is_array())
      for (const auto& f : *it)
        if (f.is_string()) s->finalizers.push_back(f);
    s->deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  }
  for (const std::string& f : SupportedFields(resource)) {
    if (f == "metadata.name") s->fields.emplace_back(f, s->name);
    else if (f == "metadata.namespace") s->fields.emplace_back(f, s->ns);
    else if (f == "source") s->fields.emplace_back(f, StringAt(object, {"source", "component"}));
    else {
      std::vector<std::string> parts = absl::StrSplit(f, '.');
      const nlohmann::json* cur = &object;
      for (const auto& p : parts) {
        if (!cur->is_object() || !cur->contains(p)) { cur = nullptr; break; }
        cur = &(*cur)[p];
      }
      std::string v;
      if (cur && cur->is_string()) v = cur->get<std::string>();
      else if (cur && cur->is_boolean()) v = cur->get<bool>() ? "true" : "false";
      else if (cur && !cur->is_null()) v = cur->dump();
      if (f == "spec.unschedulable" && v.empty()) v = "false";
      s->fields.emplace_back(f, v);
    }
  }
}

}  // namespace

}  // namespace cloneset::devcluster
