// A claim's storage request changed through the API, as kube-apiserver 1.34 answers it: grown in place when the
// claim is Bound and its StorageClass allows volume expansion; otherwise refused with its words (403 Forbidden from
// the resize admission plugin, 422 Invalid from validation).
#include "devcluster/pvc_resize.h"

#include <gtest/gtest.h>

#include <string>

#include "base/testing/fake_clock.h"
#include "devcluster/api_server.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

constexpr char kClaims[] = "/api/v1/namespaces/default/persistentvolumeclaims";

class PvcResizeTest : public ::testing::Test {
 protected:
  ApiResponse Call(const std::string& method, const std::string& path, const json& body,
                   const std::string& content_type = "application/merge-patch+json") {
    ApiRequest r;
    r.method = method;
    r.path = path;
    r.body = body.dump();
    r.headers["content-type"] = content_type;
    r.headers["accept"] = "application/json";
    return api_.Handle(r);
  }
  void Class(const std::string& name, std::optional<bool> allow) {
    json sc = {{"apiVersion", "storage.k8s.io/v1"}, {"kind", "StorageClass"}, {"metadata", {{"name", name}}},
               {"provisioner", "example.com/csi"}};
    if (allow.has_value()) sc["allowVolumeExpansion"] = *allow;
    ASSERT_EQ(Call("POST", "/apis/storage.k8s.io/v1/storageclasses", sc, "application/json").status, 201);
  }
  // A claim "data" of `cls` asking for 10Gi; Bound with 10Gi capacity when `bound`.
  void Claim(const std::string& cls, bool bound) {
    json pvc = {{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", "data"}}},
                {"spec",
                 {{"accessModes", json::array({"ReadWriteOnce"})},
                  {"storageClassName", cls},
                  {"resources", {{"requests", {{"storage", "10Gi"}}}}}}}};
    ASSERT_EQ(Call("POST", kClaims, pvc, "application/json").status, 201);
    if (!bound) return;
    json status = {{"status", {{"phase", "Bound"}, {"capacity", {{"storage", "10Gi"}}}}}};
    ASSERT_EQ(Call("PATCH", std::string(kClaims) + "/data/status", status).status, 200);
  }
  ApiResponse Request(const std::string& storage) {
    return Call("PATCH", std::string(kClaims) + "/data",
                {{"spec", {{"resources", {{"requests", {{"storage", storage}}}}}}}});
  }

  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
  ApiServer api_{&store_, ApiServerOptions{.token = "", .server_address = "127.0.0.1:1"}};
};

struct Case {
  std::string name;
  std::optional<bool> allow;  // the class's allowVolumeExpansion; nullopt: absent
  bool class_exists = true;
  bool bound = true;
  std::string storage;  // the new request
  int status;
  std::string reason;
  std::string message;
};

class PvcResizeCases : public PvcResizeTest, public ::testing::WithParamInterface<Case> {};

TEST_P(PvcResizeCases, Answer) {
  const Case& c = GetParam();
  if (c.class_exists) Class("fast", c.allow);
  Claim("fast", c.bound);
  const ApiResponse r = Request(c.storage);
  ASSERT_EQ(r.status, c.status) << r.body;
  const json body = json::parse(r.body);
  if (c.status == 200) {
    EXPECT_EQ(body["spec"]["resources"]["requests"]["storage"], c.storage);
    return;
  }
  EXPECT_EQ(body["reason"], c.reason);
  EXPECT_EQ(body["message"], c.message);
}

const char kForbiddenResize[] =
    "persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the "
    "storageclass that provisions the pvc must support resize";

INSTANTIATE_TEST_SUITE_P(
    Cases, PvcResizeCases,
    ::testing::Values(
        Case{"grow_allowed", true, true, true, "20Gi", 200, "", ""},
        Case{"same_value_other_spelling", false, true, true, "10240Mi", 200, "", ""},
        Case{"grow_class_says_no", false, true, true, "20Gi", 403, "Forbidden", kForbiddenResize},
        Case{"grow_class_silent", std::nullopt, true, true, "20Gi", 403, "Forbidden", kForbiddenResize},
        Case{"grow_class_missing", std::nullopt, false, true, "20Gi", 403, "Forbidden", kForbiddenResize},
        Case{"grow_unbound", true, true, false, "20Gi", 422, "Invalid",
             "PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after creation except "
             "resources.requests and volumeAttributesClassName for bound claims"},
        Case{"shrink_to_capacity", true, true, true, "5Gi", 422, "Invalid",
             "PersistentVolumeClaim \"data\" is invalid: spec.resources.requests.storage: Forbidden: field can not be "
             "less than status.capacity"}),
    [](const auto& info) { return info.param.name; });

// A request raised and not yet met (capacity still 10Gi) may come back down to above the capacity: the recovery
// from a failed expansion that Kubernetes 1.34 allows.
TEST_F(PvcResizeTest, ARaisedRequestMayComeBackDownAboveTheCapacity) {
  Class("fast", true);
  Claim("fast", true);
  ASSERT_EQ(Request("30Gi").status, 200);
  EXPECT_EQ(Request("20Gi").status, 200);
  EXPECT_EQ(Request("10Gi").status, 422);
}

}  // namespace
}  // namespace cloneset::devcluster
