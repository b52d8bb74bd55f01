#include "devcluster/events_v1.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cloneset::devcluster {

using nlohmann::json;

namespace {

// (core name, events.k8s.io name) of the fields that differ; the rest (metadata, reason, type, action, related,
// eventTime, series, reportingInstance) has the same name in both.
const std::vector<std::pair<std::string, std::string>>& Renames() {
  static const auto* renames = new std::vector<std::pair<std::string, std::string>>{
      {"involvedObject", "regarding"},
      {"message", "note"},
      {"source", "deprecatedSource"},
      {"firstTimestamp", "deprecatedFirstTimestamp"},
      {"lastTimestamp", "deprecatedLastTimestamp"},
      {"count", "deprecatedCount"},
      {"reportingComponent", "reportingController"},
  };
  return *renames;
}

std::string Rename(const std::string& key, bool to_v1) {
  for (const auto& [core, v1] : Renames()) {
    if (to_v1 && key == core) return v1;
    if (!to_v1 && key == v1) return core;
  }
  return key;
}

json Convert(const json& event, bool to_v1) {
  if (!event.is_object()) return event;
  json out = json::object();
  for (const auto& [k, v] : event.items()) out[Rename(k, to_v1)] = v;
  out["apiVersion"] = to_v1 ? absl::StrCat(kEventsGroup, "/v1") : "v1";
  out["kind"] = "Event";
  return out;
}

}  // namespace

json CoreEventToEventsV1(const json& event) { return Convert(event, true); }
json EventsV1ToCoreEvent(const json& event) { return Convert(event, false); }

json EventsV1PatchToCore(const json& patch) {
  if (patch.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : patch.items()) out[Rename(k, false)] = v;
    return out;
  }
  if (!patch.is_array()) return patch;
  json out = patch;
  for (auto& op : out) {
    for (const char* field : {"path", "from"}) {
      if (!op.is_object() || !op.contains(field) || !op[field].is_string()) continue;
      std::string p = op[field];
      if (p.size() < 2 || p[0] != '/') continue;
      size_t end = p.find('/', 1);
      std::string first = p.substr(1, end == std::string::npos ? std::string::npos : end - 1);
      op[field] = absl::StrCat("/", Rename(first, false), end == std::string::npos ? "" : p.substr(end));
    }
  }
  return out;
}

std::string EventsV1FieldSelectorToCore(const std::string& selector) {
  std::vector<std::string> out;
  for (const std::string& term : std::vector<std::string>(absl::StrSplit(selector, ','))) {
    size_t end = term.find_first_of("!=");
    std::string key = term.substr(0, end);
    std::string rest = end == std::string::npos ? "" : term.substr(end);
    std::string core = key;
    if (absl::StartsWith(key, "regarding.")) core = absl::StrCat("involvedObject.", key.substr(10));
    else if (key == "reportingController") core = "reportingComponent";
    else if (key == "deprecatedSource") core = "source";
    out.push_back(absl::StrCat(core, rest));
  }
  return absl::StrJoin(out, ",");
}

json CoreResponseToEventsV1(const json& body) {
  if (!body.is_object()) return body;
  const std::string kind = body.value("kind", "");
  if (kind == "Event") return CoreEventToEventsV1(body);
  if (kind == "EventList") {
    json out = body;
    out["apiVersion"] = absl::StrCat(kEventsGroup, "/v1");
    if (out.contains("items") && out["items"].is_array())
      for (auto& item : out["items"]) item = CoreEventToEventsV1(item);
    return out;
  }
  return body;
}

}  // namespace cloneset::devcluster
