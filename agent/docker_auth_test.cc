#include "agent/docker_auth.h"

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {
namespace {

using ::testing::HasSubstr;

std::string Secret(const std::string& field, const nlohmann::json& config) {
  return nlohmann::json({{"metadata", {{"name", "regcred"}}}, {"data", {{field, absl::Base64Escape(config.dump())}}}})
      .dump();
}

TEST(AuthFromSecretTest, DockerConfigJsonMatchesTheImagesRegistry) {
  const std::string secret = Secret(".dockerconfigjson",
                                    {{"auths",
                                      {{"https://index.docker.io/v1/", {{"username", "hub"}, {"password", "p1"}}},
                                       {"127.0.0.1:5000", {{"auth", absl::Base64Escape("alice:s3:cret")}}}}}});
  auto local = AuthFromSecret(secret, "127.0.0.1:5000/test/app:v1");
  ASSERT_TRUE(local.ok()) << local.status();
  ASSERT_TRUE(local->has_value());
  EXPECT_EQ((*local)->username, "alice");
  EXPECT_EQ((*local)->password, "s3:cret");
  EXPECT_EQ((*local)->server_address, "127.0.0.1:5000");
  auto hub = AuthFromSecret(secret, "nginx:1.25");
  ASSERT_TRUE(hub.ok() && hub->has_value());
  EXPECT_EQ((*hub)->username, "hub");
  EXPECT_EQ((*hub)->password, "p1");
  auto other = AuthFromSecret(secret, "quay.io/x/y");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->has_value());
}

TEST(AuthFromSecretTest, LegacyDockercfg) {
  auto a = AuthFromSecret(Secret(".dockercfg", {{"quay.io", {{"username", "u"}, {"password", "p"}}}}), "quay.io/x/y:1");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->username, "u");
}

TEST(AuthFromSecretTest, ErrorsNameSecretAndField) {
  struct Case {
    std::string secret;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"x", "pull secret: not a JSON object"},
           {R"({"metadata":{"name":"s"},"data":{}})", "pull secret s: data[.dockerconfigjson] (or legacy data[.dockercfg]) is missing"},
           {R"({"metadata":{"name":"s"},"data":{".dockerconfigjson":"!!"}})", "pull secret s data[.dockerconfigjson]: not base64"},
           {R"({"metadata":{"name":"s"},"data":{".dockerconfigjson":"bm90IGpzb24="}})",
            "pull secret s data[.dockerconfigjson]: not JSON"}}) {
    auto a = AuthFromSecret(c.secret, "nginx");
    ASSERT_FALSE(a.ok()) << c.secret;
    EXPECT_THAT(a.status().message(), HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace cloneset::agent
