#include "agent/readiness_gate.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "snapshot/snapshot.h"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;
const absl::Time kNow = absl::FromUnixSeconds(1767225600 + 42);  // 42 s after the update started

// A pod mid in-place update: c1 changed from nginx:1.24 (imageID old-id) to nginx:1.25.
Json Pod() {
  Json state = {{"revision", "web-2"},
                {"updateTimestamp", "2026-01-01T00:00:00Z"},
                {"lastContainerStatuses", {{"c1", {{"imageID", "old-id"}}}}},
                {"updateImages", true}};
  return {{"metadata",
           {{"namespace", "ns"}, {"name", "web-0"}, {"uid", "u"}, {"resourceVersion", "17"},
            {"annotations", {{"apps.kruise.io/inplace-update-state", state.dump()}}}}},
          {"spec",
           {{"readinessGates", {{{"conditionType", "InPlaceUpdateReady"}}}},
            {"containers", {{{"name", "c1"}, {"image", "nginx:1.25"}}, {{"name", "side"}, {"image", "busybox"}}}}}},
          {"status",
           {{"conditions", {{{"type", "InPlaceUpdateReady"}, {"status", "False"}, {"reason", "StartInPlaceUpdate"}}}},
            {"containerStatuses",
             {{{"name", "c1"}, {"image", "nginx:1.25"}, {"imageID", "new-id"}, {"ready", true}},
              {{"name", "side"}, {"image", "busybox:latest"}, {"imageID", "bb"}, {"ready", true}}}}}}};
}

Json With(Json pod, const std::string& pointer, Json value) {
  pod[Json::json_pointer(pointer)] = std::move(value);
  return pod;
}
Json StateWith(const std::string& key, Json value) {
  Json pod = Pod();
  Json state = Json::parse(pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"].get<std::string>());
  state[key] = std::move(value);
  pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"] = state.dump();
  return pod;
}

TEST(DecideReadinessTest, Table) {
  struct Case {
    std::string name;
    Json pod;
    bool report;
    std::string why;
  };
  Json same_id = With(Pod(), "/status/containerStatuses/0/imageID", "old-id");
  for (const Case& c : std::vector<Case>{
           {"complete: new image id, ready", Pod(), true, ""},
           {"same image id, status image equals spec: complete (kruise#635)", same_id, true, ""},
           {"same image id, old image still running", With(same_id, "/status/containerStatuses/0/image", "nginx:1.24"),
            false, "container c1 still runs the old image"},
           {"not ready yet", With(Pod(), "/status/containerStatuses/0/ready", false), false, "container c1 not ready"},
           {"container status missing", With(Pod(), "/status/containerStatuses", Json::array()), false,
            "container c1 has no status"},
           {"already True", With(Pod(), "/status/conditions/0", {{"type", "InPlaceUpdateReady"}, {"status", "True"}}),
            false, "already reported"},
           {"no gate", With(Pod(), "/spec/readinessGates", Json::array()), false, "no InPlaceUpdateReady readiness gate"},
           {"no state", With(Pod(), "/metadata/annotations", Json::object()), false, "no in-place update state"},
           {"grace pending", With(Pod(), "/metadata/annotations/apps.kruise.io~1inplace-update-grace", "{}"), false,
            "grace period pending"},
           {"next batch pending", StateWith("nextContainerImages", {{"side", "busybox:2"}}), false,
            "later container batch pending"},
           // The planner's rule for an env-from-metadata update: a new containerID; without one recorded, the
           // image ID.
           {"env from metadata, no container id recorded", StateWith("updateEnvFromMetadata", true), true, ""},
           {"env from metadata, not restarted",
            With(With(StateWith("updateEnvFromMetadata", true), "/metadata/annotations/apps.kruise.io~1inplace-update-state",
                      Json({{"revision", "web-2"},
                            {"updateTimestamp", "2026-01-01T00:00:00Z"},
                            {"updateEnvFromMetadata", true},
                            {"lastContainerStatuses", {{"c1", {{"imageID", "new-id"}, {"containerID", "cid-1"}}}}}})
                          .dump()),
                 "/status/containerStatuses/0/containerID", "cid-1"),
            false, "container c1 has not restarted"},
           {"unparsable state", With(Pod(), "/metadata/annotations/apps.kruise.io~1inplace-update-state", "{oops"),
            false, "annotation apps.kruise.io/inplace-update-state: not a JSON object"},
           {"terminating", With(Pod(), "/metadata/deletionTimestamp", "2026-01-01T00:00:01Z"), false, "terminating"},
           // The next update turned the condition False; its state patch has not arrived: the state on the pod is the
           // previous, finished one (a real kubelet's pod showed this for ~10 ms and the report broke maxUnavailable).
           {"False since after the state was written",
            With(Pod(), "/status/conditions/0/lastTransitionTime", "2026-01-01T00:00:13Z"), false,
            "update started after the state: its state is not written yet"},
           {"False since the state was written (same plan)",
            With(Pod(), "/status/conditions/0/lastTransitionTime", "2026-01-01T00:00:00Z"), true, ""},
           // The planner's completion rule (kruise/inplace_completion.h); before the agent shared it, it appended
           // ":latest" only to images without a ':' and compared the strings as written, so it waited forever on
           // these pods while the planner counted them updated.
           {"same image id, registry port is not a tag",
            With(With(With(same_id, "/spec/containers/0/image", "registry:5000/app"), "/status/containerStatuses/0/image",
                      "registry:5000/app:latest"),
                 "/status/containerStatuses/0/imageID", "old-id"),
            true, ""},
           {"same image id, same reference spelled in full",
            With(same_id, "/status/containerStatuses/0/image", "docker.io/library/nginx:1.25"), true, ""},
           {"same image id, restarted (new containerID)",
            With(With(StateWith("lastContainerStatuses", {{"c1", {{"imageID", "old-id"}, {"containerID", "cid-old"}}}}),
                      "/status/containerStatuses/0",
                      {{"name", "c1"}, {"image", "nginx:1.24"}, {"imageID", "old-id"}, {"containerID", "cid-new"},
                       {"ready", true}}),
                 "/spec/containers/0/image", "nginx:1.25"),
            true, ""},
           // A resize with the image (updateResources): also the planner's resize rule (common/resources.h).
           {"resized: status resources are the spec's",
            With(With(StateWith("updateResources", true), "/spec/containers/0/resources",
                      {{"limits", {{"cpu", "500m"}}}}),
                 "/status/containerStatuses/0/resources", {{"limits", {{"cpu", "0.5"}}}}),
            true, ""},
           {"resize not carried out yet",
            With(With(StateWith("updateResources", true), "/spec/containers/0/resources",
                      {{"limits", {{"cpu", "500m"}}}}),
                 "/status/containerStatuses/0/resources", {{"limits", {{"cpu", "200m"}}}}),
            false, "container c1 does not report its new resources yet"},
           {"resize infeasible",
            With(With(With(StateWith("updateResources", true), "/spec/containers/0/resources",
                           {{"limits", {{"cpu", "500m"}}}}),
                      "/status/containerStatuses/0/resources", {{"limits", {{"cpu", "500m"}}}}),
                 "/status/conditions/1",
                 {{"type", "PodResizePending"}, {"status", "True"}, {"reason", "Infeasible"}, {"message", "too big"}}),
            false, "resize Infeasible: too big"},
           {"next batch resizes", StateWith("nextContainerResources", {{"side", {{"limits", {{"cpu", "1"}}}}}}), false,
            "later container batch pending"},
           {"same image id, same containerID, old image",
            With(StateWith("lastContainerStatuses", {{"c1", {{"imageID", "old-id"}, {"containerID", "cid-old"}}}}),
                 "/status/containerStatuses/0",
                 {{"name", "c1"}, {"image", "nginx:1.24"}, {"imageID", "old-id"}, {"containerID", "cid-old"},
                  {"ready", true}}),
            false, "container c1 still runs the old image"},
       }) {
    SCOPED_TRACE(c.name);
    auto view = snapshot::PodFromJson(c.pod.dump());
    ASSERT_TRUE(view.ok()) << view.status();
    ReadinessDecision d = DecideReadiness(*view, kNow);
    EXPECT_EQ(d.report, c.report);
    EXPECT_EQ(d.why, c.why);
    if (d.report) {
      EXPECT_EQ(d.update_duration, absl::Seconds(42));
    }
  }
}

TEST(ReadinessPatchTest, GuardedByResourceVersionAndClearsTheStartReason) {
  auto view = snapshot::PodFromJson(Pod().dump());
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(ReadinessPatch(*view, kNow),
            R"({"metadata":{"resourceVersion":"17"},"status":{"conditions":[{"lastTransitionTime":"2026-01-01T00:00:42Z",)"
            R"("message":null,"reason":null,"status":"True","type":"InPlaceUpdateReady"}]}})");
}

TEST(DecodePodTest, RejectsNonObjects) { EXPECT_FALSE(snapshot::PodFromJson("[1]").ok()); }

}  // namespace
}  // namespace cloneset::agent
