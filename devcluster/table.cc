#include "devcluster/table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/time_format.h"
#include "devcluster/object_meta.h"
#include "devcluster/table_cells.h"
#include "devcluster/table_workloads.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

using namespace table_cells;  // NOLINT: Col, Str, Age, OrNone, the cells every printer is made of

std::vector<json> BuiltinCells(const std::string& id, const json& o, base::Clock::TimePoint now) {
  if (auto cells = WorkloadTableCells(id, o, now)) return std::move(*cells);
  const std::string name = Str(o, ".metadata.name");
  if (id == "pods") {
    int ready = 0, total = 0, restarts = 0;
    std::string reason = Str(o, ".status.reason");
    if (const json* specs = LookupPath(o, ".spec.containers"); specs && specs->is_array()) total = specs->size();
    if (const json* st = LookupPath(o, ".status.containerStatuses"); st && st->is_array()) {
      for (const auto& cs : *st) {
        if (cs.value("ready", false)) ++ready;
        restarts += cs.value("restartCount", 0);
        if (const json* w = LookupPath(cs, ".state.waiting.reason"); w && w->is_string() && !w->get<std::string>().empty())
          reason = *w;
        else if (const json* t = LookupPath(cs, ".state.terminated.reason"); t && t->is_string() && reason.empty())
          reason = *t;
      }
    }
    std::string status = reason.empty() ? Str(o, ".status.phase") : reason;
    if (LookupPath(o, ".metadata.deletionTimestamp")) status = "Terminating";
    std::string gates = "<none>";
    if (const json* g = LookupPath(o, ".spec.readinessGates"); g && g->is_array() && !g->empty()) {
      int ok = 0;
      for (const auto& gate : *g) {
        std::string type = gate.value("conditionType", "");
        if (const json* conds = LookupPath(o, ".status.conditions"); conds && conds->is_array())
          for (const auto& c : *conds)
            if (c.value("type", "") == type && c.value("status", "") == "True") ++ok;
      }
      gates = absl::StrCat(ok, "/", g->size());
    }
    return {name, absl::StrCat(ready, "/", total), status, restarts, Age(o, now),
            OrNone(Str(o, ".status.podIP")), OrNone(Str(o, ".spec.nodeName")),
            OrNone(Str(o, ".status.nominatedNodeName")), gates};
  }
  if (id == "nodes") {
    std::string ready = "Unknown";
    if (const json* conds = LookupPath(o, ".status.conditions"); conds && conds->is_array())
      for (const auto& c : *conds)
        if (c.value("type", "") == "Ready") ready = c.value("status", "") == "True" ? "Ready" : "NotReady";
    if (LookupPath(o, ".spec.unschedulable") && Str(o, ".spec.unschedulable") == "true") ready += ",SchedulingDisabled";
    std::vector<std::string> roles;
    if (const json* l = LookupPath(o, ".metadata.labels"); l && l->is_object())
      for (const auto& [k, v] : l->items())
        if (absl::StartsWith(k, "node-role.kubernetes.io/")) roles.push_back(k.substr(24));
    return {name, ready, roles.empty() ? "<none>" : absl::StrJoin(roles, ","), Age(o, now),
            Str(o, ".status.nodeInfo.kubeletVersion")};
  }
  if (id == "namespaces") return {name, Str(o, ".status.phase"), Age(o, now)};
  if (id == "persistentvolumeclaims") {
    std::string modes;
    if (const json* m = LookupPath(o, ".spec.accessModes"); m && m->is_array()) {
      std::vector<std::string> short_modes;
      for (const auto& x : *m) {
        std::string s = x.is_string() ? x.get<std::string>() : "";
        short_modes.push_back(s == "ReadWriteOnce" ? "RWO" : s == "ReadOnlyMany" ? "ROX" : s == "ReadWriteMany" ? "RWX" : s == "ReadWriteOncePod" ? "RWOP" : s);
      }
      modes = absl::StrJoin(short_modes, ",");
    }
    return {name, Str(o, ".status.phase"), Str(o, ".spec.volumeName"), Str(o, ".status.capacity.storage"), modes,
            Str(o, ".spec.storageClassName"), "<unset>", Age(o, now)};
  }
  if (id == "persistentvolumes") {
    std::string claim = Str(o, ".spec.claimRef.name").empty()
                            ? ""
                            : absl::StrCat(Str(o, ".spec.claimRef.namespace"), "/", Str(o, ".spec.claimRef.name"));
    return {name, Str(o, ".spec.capacity.storage"), "RWO", Str(o, ".spec.persistentVolumeReclaimPolicy"),
            Str(o, ".status.phase"), claim, Str(o, ".spec.storageClassName"), Str(o, ".status.reason"), Age(o, now)};
  }
  if (id == "services") {
    std::vector<std::string> ports;
    if (const json* p = LookupPath(o, ".spec.ports"); p && p->is_array())
      for (const auto& port : *p)
        ports.push_back(absl::StrCat(port.value("port", 0), "/", port.value("protocol", "TCP")));
    std::vector<std::string> sel;
    if (const json* s = LookupPath(o, ".spec.selector"); s && s->is_object())
      for (const auto& [k, v] : s->items()) sel.push_back(absl::StrCat(k, "=", v.is_string() ? v.get<std::string>() : v.dump()));
    return {name, Str(o, ".spec.type"), OrNone(Str(o, ".spec.clusterIP")), "<none>",
            ports.empty() ? "<none>" : absl::StrJoin(ports, ","), Age(o, now), sel.empty() ? "<none>" : absl::StrJoin(sel, ",")};
  }
  if (id == "configmaps" || id == "secrets") {
    size_t n = 0;
    for (const char* f : {".data", ".binaryData", ".stringData"})
      if (const json* d = LookupPath(o, f); d && d->is_object()) n += d->size();
    if (id == "configmaps") return {name, static_cast<int64_t>(n), Age(o, now)};
    return {name, Str(o, ".type"), static_cast<int64_t>(n), Age(o, now)};
  }
  if (id == "events") {
    std::string last = Str(o, ".lastTimestamp").empty() ? ".eventTime" : ".lastTimestamp";
    std::string obj = absl::StrCat(absl::AsciiStrToLower(Str(o, ".involvedObject.kind")), "/", Str(o, ".involvedObject.name"));
    return {Age(o, now, last), Str(o, ".type"), Str(o, ".reason"), obj, Str(o, ".involvedObject.fieldPath"),
            Str(o, ".source.component"), Str(o, ".message"), Age(o, now, ".firstTimestamp"),
            LookupPath(o, ".count") ? *LookupPath(o, ".count") : json(1), name};
  }
  if (id == "storageclasses.storage.k8s.io") {
    return {name, Str(o, ".provisioner"), Str(o, ".reclaimPolicy").empty() ? "Delete" : Str(o, ".reclaimPolicy"),
            Str(o, ".volumeBindingMode").empty() ? "Immediate" : Str(o, ".volumeBindingMode"),
            Str(o, ".allowVolumeExpansion") == "true", Age(o, now)};
  }
  if (id == "controllerrevisions.apps") {
    std::string controller;
    if (const json* refs = LookupPath(o, ".metadata.ownerReferences"); refs && refs->is_array())
      for (const auto& r : *refs)
        if (r.value("controller", false))
          controller = absl::StrCat(absl::AsciiStrToLower(r.value("kind", "")), ".", r.value("apiVersion", ""), "/", r.value("name", ""));
    return {name, OrNone(controller), LookupPath(o, ".revision") ? *LookupPath(o, ".revision") : json(0), Age(o, now)};
  }
  if (id == "leases.coordination.k8s.io") return {name, Str(o, ".spec.holderIdentity"), Age(o, now)};
  if (id == "customresourcedefinitions.apiextensions.k8s.io") return {name, Str(o, ".metadata.creationTimestamp")};
  return {name, Age(o, now)};
}

}  // namespace

json EvaluateJsonPath(const json& object, const std::string& path) {
  std::string p = path;
  if (!p.empty() && p.front() == '{' && p.back() == '}') p = p.substr(1, p.size() - 2);
  if (!p.empty() && p[0] == '.') p = p.substr(1);
  std::vector<const json*> cur = {&object};
  for (absl::string_view part : absl::StrSplit(p, '.', absl::SkipEmpty())) {
    std::string field(part.data(), part.size());
    std::string index;
    if (size_t b = field.find('['); b != std::string::npos && field.back() == ']') {
      index = field.substr(b + 1, field.size() - b - 2);
      field = field.substr(0, b);
    }
    std::vector<const json*> next;
    for (const json* c : cur) {
      const json* v = c;
      if (!field.empty()) {
        if (!c->is_object() || !c->contains(field)) continue;
        v = &(*c)[field];
      }
      if (index.empty()) {
        next.push_back(v);
      } else if (v->is_array()) {
        if (index == "*") {
          for (const auto& x : *v) next.push_back(&x);
        } else {
          int i = std::atoi(index.c_str());
          if (i < 0) i += v->size();
          if (i >= 0 && static_cast<size_t>(i) < v->size()) next.push_back(&(*v)[i]);
        }
      }
    }
    cur = std::move(next);
  }
  if (cur.empty()) return nullptr;
  if (cur.size() == 1) return *cur[0];
  std::vector<std::string> parts;
  for (const json* c : cur) parts.push_back(c->is_string() ? c->get<std::string>() : c->dump());
  return absl::StrJoin(parts, ",");
}

json TableColumns(const ResourceType& type) {
  const std::string id = type.Id();
  json cols = json::array();
  if (type.custom) {
    cols.push_back(Col("Name", "string", 0, "name"));
    bool has_age = false;
    for (const auto& c : type.printer_columns) {
      cols.push_back(Col(c.name, c.type, c.priority));
      has_age |= c.type == "date";
    }
    if (!has_age && type.printer_columns.empty()) cols.push_back(Col("Age", "string"));
    return cols;
  }
  if (auto workload = WorkloadTableColumns(id)) return std::move(*workload);
  if (id == "pods") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Ready", "string"), Col("Status", "string"),
                   Col("Restarts", "string"), Col("Age", "string"), Col("IP", "string", 1), Col("Node", "string", 1),
                   Col("Nominated Node", "string", 1), Col("Readiness Gates", "string", 1)})
      cols.push_back(c);
  } else if (id == "nodes") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Status", "string"), Col("Roles", "string"),
                   Col("Age", "string"), Col("Version", "string")})
      cols.push_back(c);
  } else if (id == "namespaces") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Status", "string"), Col("Age", "string")}) cols.push_back(c);
  } else if (id == "persistentvolumeclaims") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Status", "string"), Col("Volume", "string"),
                   Col("Capacity", "string"), Col("Access Modes", "string"), Col("StorageClass", "string"),
                   Col("VolumeAttributesClass", "string"), Col("Age", "string")})
      cols.push_back(c);
  } else if (id == "persistentvolumes") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Capacity", "string"), Col("Access Modes", "string"),
                   Col("Reclaim Policy", "string"), Col("Status", "string"), Col("Claim", "string"),
                   Col("StorageClass", "string"), Col("Reason", "string"), Col("Age", "string")})
      cols.push_back(c);
  } else if (id == "services") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Type", "string"), Col("Cluster-IP", "string"),
                   Col("External-IP", "string"), Col("Port(s)", "string"), Col("Age", "string"),
                   Col("Selector", "string", 1)})
      cols.push_back(c);
  } else if (id == "configmaps") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Data", "integer"), Col("Age", "string")}) cols.push_back(c);
  } else if (id == "secrets") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Type", "string"), Col("Data", "integer"), Col("Age", "string")})
      cols.push_back(c);
  } else if (id == "events") {
    for (auto c : {Col("Last Seen", "string"), Col("Type", "string"), Col("Reason", "string"), Col("Object", "string"),
                   Col("Subobject", "string", 1), Col("Source", "string", 1), Col("Message", "string"),
                   Col("First Seen", "string", 1), Col("Count", "string", 1), Col("Name", "string", 1, "name")})
      cols.push_back(c);
  } else if (id == "storageclasses.storage.k8s.io") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Provisioner", "string"), Col("ReclaimPolicy", "string"),
                   Col("VolumeBindingMode", "string"), Col("AllowVolumeExpansion", "boolean"), Col("Age", "string")})
      cols.push_back(c);
  } else if (id == "controllerrevisions.apps") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Controller", "string"), Col("Revision", "integer"),
                   Col("Age", "string")})
      cols.push_back(c);
  } else if (id == "leases.coordination.k8s.io") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Holder", "string"), Col("Age", "string")}) cols.push_back(c);
  } else if (id == "customresourcedefinitions.apiextensions.k8s.io") {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Created At", "date")}) cols.push_back(c);
  } else {
    for (auto c : {Col("Name", "string", 0, "name"), Col("Age", "string")}) cols.push_back(c);
  }
  return cols;
}

json TableRow(const ResourceType& type, const json& object, base::Clock::TimePoint now, bool include_object) {
  json cells = json::array();
  if (type.custom) {
    cells.push_back(Str(object, ".metadata.name"));
    for (const auto& c : type.printer_columns) {
      json v = EvaluateJsonPath(object, c.json_path);
      if (c.type == "date" && v.is_string()) {
        if (absl::StatusOr<absl::Time> t = base::ParseTime(v.get<std::string>()); t.ok()) {
          v = HumanDuration(std::chrono::duration_cast<std::chrono::seconds>(now - absl::ToChronoTime(*t)));
        }
      }
      cells.push_back(v);
    }
    if (type.printer_columns.empty()) cells.push_back(Age(object, now));
  } else {
    for (auto& c : BuiltinCells(type.Id(), object, now)) cells.push_back(std::move(c));
  }
  json row = {{"cells", cells}};
  if (include_object) {
    row["object"] = object;
  } else {
    json meta = object.contains("metadata") ? object["metadata"] : json::object();
    if (meta.is_object()) meta.erase("managedFields");
    row["object"] = {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}};
  }
  return row;
}

json BuildTable(const ResourceType& type, const std::vector<json>& objects, base::Clock::TimePoint now,
                const std::string& resource_version, const std::string& continue_token, bool include_object,
                bool include_columns) {
  json table = {{"kind", "Table"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", json::object()}};
  if (!resource_version.empty()) table["metadata"]["resourceVersion"] = resource_version;
  if (!continue_token.empty()) table["metadata"]["continue"] = continue_token;
  table["columnDefinitions"] = include_columns ? TableColumns(type) : json::array();
  json rows = json::array();
  for (const auto& o : objects) rows.push_back(TableRow(type, o, now, include_object));
  table["rows"] = std::move(rows);
  return table;
}

}  // namespace cloneset::devcluster
