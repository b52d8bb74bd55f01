#include "kube/watch_stream.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kube/api_status.h"
#include "simdjson.h"

namespace cloneset::kube {
namespace {

namespace od = simdjson::ondemand;

simdjson::ondemand::parser& Parser() {
  thread_local od::parser parser;
  return parser;
}

// Optional string field: missing or null -> empty.
simdjson::error_code ReadString(od::object& obj, std::string_view key, std::string* out) {
  od::value v;
  auto err = obj.find_field_unordered(key).get(v);
  if (err == simdjson::NO_SUCH_FIELD) return simdjson::SUCCESS;
  if (err) return err;
  if (v.is_null()) return simdjson::SUCCESS;
  std::string_view s;
  if (auto e = v.get_string().get(s)) return e;
  out->assign(s);
  return simdjson::SUCCESS;
}

simdjson::error_code ReadMeta(od::object& obj, ObjectMeta* meta) {
  od::object md;
  auto err = obj.find_field_unordered("metadata").get_object().get(md);
  if (err == simdjson::NO_SUCH_FIELD) return simdjson::SUCCESS;
  if (err) return err;
  if (auto e = ReadString(md, "namespace", &meta->namespace_)) return e;
  if (auto e = ReadString(md, "name", &meta->name)) return e;
  if (auto e = ReadString(md, "uid", &meta->uid)) return e;
  return ReadString(md, "resourceVersion", &meta->resource_version);
}

absl::Status JsonError(const char* what, simdjson::error_code e) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", simdjson::error_message(e)));
}

}  // namespace

size_t JsonObjectSplitter::Scan(std::string_view data, size_t from, size_t* start) {
  const char* p = data.data();
  const size_t n = data.size();
  size_t i = from;
  while (i < n) {
    if (depth_ == 0) {
      // Whitespace or junk between objects.
      while (i < n && p[i] != '{') ++i;
      if (i == n) return std::string_view::npos;
      depth_ = 1;
      *start = i++;
      continue;
    }
    if (in_string_) {
      if (escape_) {
        escape_ = false;
        ++i;
        continue;
      }
      while (i < n && p[i] != '"' && p[i] != '\\') ++i;
      if (i == n) return std::string_view::npos;
      if (p[i] == '\\') {
        escape_ = true;
      } else {
        in_string_ = false;
      }
      ++i;
      continue;
    }
    const char c = p[i++];
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if ((c == '}' || c == ']') && --depth_ == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

bool JsonObjectSplitter::Feed(std::string_view data,
                              const std::function<bool(std::string_view)>& on_object) {
  if (!rest_.empty()) {
    // Bytes left unscanned by a stop: they come first.
    std::string joined = std::move(rest_);
    rest_.clear();
    joined.append(data);
    return Feed(joined, on_object);
  }
  size_t pos = 0;
  if (!buf_.empty()) {
    // An object that an earlier read left unfinished (buf_ holds it from its '{', all scanned): only its
    // remainder is copied.
    size_t ignored = 0;
    const size_t end = Scan(data, 0, &ignored);
    if (end == std::string_view::npos) {
      buf_.append(data);
      return true;
    }
    buf_.append(data.substr(0, end));
    const bool go_on = on_object(buf_);
    buf_.clear();
    pos = end;
    if (!go_on) {
      rest_.assign(data.substr(pos));
      return false;
    }
  }
  // The common case: whole objects are handed out as views into `data`, without a copy.
  while (pos < data.size()) {
    size_t start = pos;
    const size_t end = Scan(data, pos, &start);
    if (end == std::string_view::npos) {
      if (depth_ > 0) buf_.assign(data.substr(start));  // unfinished: kept from its '{'
      return true;
    }
    pos = end;
    if (!on_object(data.substr(start, end - start))) {
      rest_.assign(data.substr(pos));
      return false;
    }
  }
  return true;
}

absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view event_json) {
  simdjson::padded_string padded(event_json);
  od::document doc;
  if (auto e = Parser().iterate(padded).get(doc)) return JsonError("watch event", e);
  od::object root;
  if (auto e = doc.get_object().get(root)) return JsonError("watch event", e);
  WatchEvent ev;
  if (auto e = ReadString(root, "type", &ev.type)) return JsonError("watch event type", e);
  od::object obj;
  if (auto e = root.find_field_unordered("object").get_object().get(obj)) {
    return JsonError("watch event object", e);
  }
  // The object's metadata is read from this one parse (not a second parse of the copied object), then the object
  // is rewound for its raw text.
  const bool has_meta = !ev.type.empty() && ev.type != "ERROR";
  if (has_meta) {
    if (auto e = ReadMeta(obj, &ev.meta)) return JsonError("object metadata", e);
    if (auto e = obj.reset().error()) return JsonError("watch event object", e);
  }
  std::string_view raw;
  if (auto e = obj.raw_json().get(raw)) return JsonError("watch event object", e);
  ev.object_json.assign(raw);
  if (ev.type.empty()) return absl::InvalidArgumentError("watch event: field \"type\" is missing");
  if (ev.type == "ERROR") {
    // The object is a Status; map it like an HTTP answer with that code.
    auto parsed = simdjson::padded_string(ev.object_json);
    od::document sdoc;
    od::object status;
    int64_t code = 500;
    if (!Parser().iterate(parsed).get(sdoc) && !sdoc.get_object().get(status)) {
      int64_t c = 0;
      if (!status.find_field_unordered("code").get_int64().get(c)) code = c;
    }
    ev.error = StatusFromHttp(static_cast<int>(code), ev.object_json);
  }
  return ev;
}

absl::StatusOr<ObjectMeta> ReadObjectMeta(std::string_view object_json) {
  simdjson::padded_string padded(object_json);
  od::document doc;
  if (auto e = Parser().iterate(padded).get(doc)) return JsonError("object", e);
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return JsonError("object", e);
  ObjectMeta meta;
  if (auto e = ReadMeta(obj, &meta)) return JsonError("object metadata", e);
  return meta;
}

absl::StatusOr<ListPage> ParseListPage(std::string body) {
  auto storage = std::make_shared<simdjson::padded_string>(body);
  body.clear();
  od::document doc;
  if (auto e = Parser().iterate(*storage).get(doc)) return JsonError("list", e);
  od::object root;
  if (auto e = doc.get_object().get(root)) return JsonError("list", e);
  ListPage page;
  // Fields in document order would be cheaper, but servers differ in order.
  {
    od::object md;
    auto err = root.find_field_unordered("metadata").get_object().get(md);
    if (err && err != simdjson::NO_SUCH_FIELD) return JsonError("list metadata", err);
    if (!err) {
      if (auto e = ReadString(md, "resourceVersion", &page.resource_version)) {
        return JsonError("list metadata.resourceVersion", e);
      }
      if (auto e = ReadString(md, "continue", &page.continue_token)) {
        return JsonError("list metadata.continue", e);
      }
    }
  }
  od::value items_value;
  auto err = root.find_field_unordered("items").get(items_value);
  if (err && err != simdjson::NO_SUCH_FIELD) return JsonError("list items", err);
  if (!err && !items_value.is_null()) {
    od::array items;
    if (auto e = items_value.get_array().get(items)) return JsonError("list items", e);
    for (auto item : items) {
      od::object obj;
      if (auto e = item.get_object().get(obj)) return JsonError("list item", e);
      std::string_view raw;
      if (auto e = obj.raw_json().get(raw)) return JsonError("list item", e);
      page.items.push_back(raw);
    }
  }
  page.storage = std::move(storage);
  return page;
}

}  // namespace cloneset::kube
