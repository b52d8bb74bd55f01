#include "agent/env_restart.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "snapshot/snapshot.h"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;

// A pod whose label `tier` changed in place: container `app` reads it through env fieldRef and has not restarted
// yet (its containerID is the recorded one); `side` reads nothing.
Json Pod() {
  Json state = {{"revision", "web-2"},
                {"updateTimestamp", "2026-01-01T00:00:00Z"},
                {"lastContainerStatuses", {{"app", {{"imageID", "img-a"}, {"containerID", "containerd://c-app-1"}}}}},
                {"updateEnvFromMetadata", true}};
  return {{"metadata",
           {{"namespace", "ns"}, {"name", "web-0"}, {"uid", "u"}, {"resourceVersion", "17"},
            {"labels", {{"tier", "gold"}}},
            {"annotations", {{"apps.kruise.io/inplace-update-state", state.dump()}}}}},
          {"spec",
           {{"readinessGates", {{{"conditionType", "InPlaceUpdateReady"}}}},
            {"containers", {{{"name", "app"}, {"image", "reg/app:v1"}}, {{"name", "side"}, {"image", "busybox"}}}}}},
          {"status",
           {{"containerStatuses",
             {{{"name", "app"}, {"image", "reg/app:v1"}, {"imageID", "img-a"}, {"containerID", "containerd://c-app-1"},
               {"ready", true}},
              {{"name", "side"}, {"image", "busybox:latest"}, {"imageID", "bb"}, {"containerID", "containerd://c-side"},
               {"ready", true}}}}}}};
}

Json With(Json pod, const std::string& pointer, Json value) {
  pod[Json::json_pointer(pointer)] = std::move(value);
  return pod;
}
Json StateWith(Json pod, const std::string& key, Json value) {
  Json state = Json::parse(pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"].get<std::string>());
  if (value.is_null()) {
    state.erase(key);
  } else {
    state[key] = std::move(value);
  }
  pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"] = state.dump();
  return pod;
}

TEST(DecideEnvRestartsTest, Table) {
  struct Case {
    std::string name;
    Json pod;
    std::vector<std::string> restarted;  // container=id
    std::string why;
  };
  const Json two = StateWith(
      With(Pod(), "/status/containerStatuses/1/containerID", "containerd://c-side"), "lastContainerStatuses",
      {{"app", {{"imageID", "img-a"}, {"containerID", "containerd://c-app-1"}}},
       {"side", {{"imageID", "bb"}, {"containerID", "containerd://c-side"}}}});
  for (const Case& c : std::vector<Case>{
           {"recorded container still running: restart it", Pod(), {"app=c-app-1"}, ""},
           {"already restarted (new containerID)",
            With(Pod(), "/status/containerStatuses/0/containerID", "containerd://c-app-2"), {},
            "every recorded container restarted or is left to the kubelet"},
           {"both recorded containers restart", two, {"app=c-app-1", "side=c-side"}, ""},
           {"image changed too: the kubelet restarts it", With(Pod(), "/spec/containers/0/image", "reg/app:v2"), {},
            "every recorded container restarted or is left to the kubelet"},
           {"same image in the runtime's spelling: still ours",
            With(Pod(), "/status/containerStatuses/0/image", "docker.io/reg/app:v1"), {"app=c-app-1"}, ""},
           {"no env-from-metadata update", StateWith(Pod(), "updateEnvFromMetadata", nullptr), {},
            "no env-from-metadata update"},
           {"env flag false", StateWith(Pod(), "updateEnvFromMetadata", false), {}, "no env-from-metadata update"},
           {"upstream's state records no containerID",
            StateWith(Pod(), "lastContainerStatuses", {{"app", {{"imageID", "img-a"}}}}), {},
            "every recorded container restarted or is left to the kubelet"},
           {"grace period pending", With(Pod(), "/metadata/annotations/apps.kruise.io~1inplace-update-grace", "{}"),
            {}, "grace period pending"},
           {"terminating", With(Pod(), "/metadata/deletionTimestamp", "2026-01-01T00:01:00Z"), {}, "terminating"},
           {"no state", With(Pod(), "/metadata/annotations", Json::object()), {}, "no in-place update state"},
           {"unparsable state", With(Pod(), "/metadata/annotations/apps.kruise.io~1inplace-update-state", "{"), {},
            "unparsable in-place update state"},
           {"no status yet", With(Pod(), "/status/containerStatuses", Json::array()), {},
            "every recorded container restarted or is left to the kubelet"},
           {"lastContainerStatuses null", StateWith(Pod(), "lastContainerStatuses", Json()), {},
            "no container recorded"},
       }) {
    SCOPED_TRACE(c.name);
    auto pod = snapshot::PodFromJson(c.pod.dump());
    ASSERT_TRUE(pod.ok()) << pod.status();
    const EnvRestartDecision d = DecideEnvRestarts(*pod);
    std::vector<std::string> got;
    for (const ContainerRestart& r : d.restarts) got.push_back(r.container + "=" + r.container_id);
    EXPECT_THAT(got, ::testing::ElementsAreArray(c.restarted));
    EXPECT_EQ(d.why, c.why);
  }
}

TEST(RuntimeContainerIdTest, StripsTheScheme) {
  EXPECT_EQ(RuntimeContainerId("containerd://abc"), "abc");
  EXPECT_EQ(RuntimeContainerId("cri-o://x"), "x");
  EXPECT_EQ(RuntimeContainerId("abc"), "abc");
  EXPECT_EQ(RuntimeContainerId(""), "");
}

}  // namespace
}  // namespace cloneset::agent
