// events.k8s.io/v1 Event as a second view of the core v1 events, as kube-apiserver serves both groups from one
// storage: an event written through either group is read through both. Pure field mappings.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cloneset::devcluster {

inline constexpr char kEventsGroup[] = "events.k8s.io";

// core/v1 Event -> events.k8s.io/v1 Event (involvedObject -> regarding, message -> note, source ->
// deprecatedSource, firstTimestamp/lastTimestamp/count -> deprecated*, reportingComponent -> reportingController).
nlohmann::json CoreEventToEventsV1(const nlohmann::json& event);
// The reverse, for objects written through events.k8s.io/v1.
nlohmann::json EventsV1ToCoreEvent(const nlohmann::json& event);
// A patch written against the events.k8s.io/v1 shape, renamed to the core shape: top-level keys of a merge or
// strategic merge patch, the first path segment of each JSON patch operation.
nlohmann::json EventsV1PatchToCore(const nlohmann::json& patch);
// A field selector on events.k8s.io/v1 names (regarding.name, reportingController, deprecatedSource) in core
// names (involvedObject.name, reportingComponent, source), as kube-apiserver's field label conversion does.
std::string EventsV1FieldSelectorToCore(const std::string& selector);
// A core v1 list, object or watch event body re-expressed in events.k8s.io/v1 (Status objects pass unchanged).
nlohmann::json CoreResponseToEventsV1(const nlohmann::json& body);

}  // namespace cloneset::devcluster
