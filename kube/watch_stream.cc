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

bool JsonObjectSplitter::Feed(std::string_view data,
                              const std::function<bool(std::string_view)>& on_object) {
  buf_.append(data);
  // An unfinished object from an earlier call always starts at buf_[0].
  size_t start = 0;
  size_t consumed = 0;  // bytes of buf_ that are done with
  bool go_on = true;
  size_t i = scanned_;
  for (; i < buf_.size() && go_on; ++i) {
    const char c = buf_[i];
    if (depth_ == 0) {
      if (c == '{') {
        depth_ = 1;
        start = i;
      } else {
        consumed = i + 1;  // whitespace or junk between objects
      }
      continue;
    }
    if (in_string_) {
      if (escape_) {
        escape_ = false;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if ((c == '}' || c == ']') && --depth_ == 0) {
      go_on = on_object(std::string_view(buf_).substr(start, i + 1 - start));
      consumed = i + 1;
    }
  }
  if (depth_ > 0) consumed = std::min(consumed, start);
  buf_.erase(0, consumed);
  scanned_ = i - consumed;
  return go_on;
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
    return ev;
  }
  auto meta = ReadObjectMeta(ev.object_json);
  if (!meta.ok()) return meta.status();
  ev.meta = *std::move(meta);
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
