#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

std::string Seed(const std::string& file) {
  std::ifstream in(std::string(CLONESET_TEST_DATA_DIR) + "/seed000/" + file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(YamlToJson, Seed000StorageClass) {
  auto json = YamlToJson(Seed("storageclass.yaml"));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json,
            R"({"allowVolumeExpansion":true,"apiVersion":"storage.k8s.io/v1","kind":"StorageClass",)"
            R"("metadata":{"name":"fast-ssd"},"parameters":{"fsType":"ext4","iops":"3000","type":"gp3"},)"
            R"("provisioner":"kubernetes.io/aws-ebs"})");
}

TEST(YamlToJson, Seed000ConfigMapBlockScalars) {
  auto json = YamlToJson(Seed("configmap.yaml"));
  ASSERT_TRUE(json.ok()) << json.status();
  const auto j = nlohmann::json::parse(*json);
  EXPECT_EQ(j["metadata"]["name"], "transcoder-config");
  EXPECT_EQ(j["data"]["config.yaml"].get<std::string>().substr(0, 41), "log_level: info\nmax_concurrent_jobs: 2\nou");
  EXPECT_EQ(j["data"]["nginx.conf"].get<std::string>().substr(0, 30), "server {\n    listen 8080;\n    ");
}

TEST(YamlToJson, Seed000Service) {
  auto json = YamlToJson(Seed("service.yaml"));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json,
            R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"video-transcoder-service"},)"
            R"("spec":{"ports":[{"name":"http","port":80,"targetPort":8080}],)"
            R"("selector":{"app":"video-transcoder"},"type":"ClusterIP"}})");
}

struct ScalarCase {
  const char* yaml;
  const char* json;
};

class YamlScalars : public ::testing::TestWithParam<ScalarCase> {};

TEST_P(YamlScalars, Typed) {
  auto json = YamlToJson(std::string("v: ") + GetParam().yaml);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, std::string(R"({"v":)") + GetParam().json + "}");
}

INSTANTIATE_TEST_SUITE_P(Table, YamlScalars,
                         ::testing::Values(ScalarCase{"3", "3"}, ScalarCase{"-7", "-7"}, ScalarCase{"\"3\"", "\"3\""},
                                           ScalarCase{"'0'", "\"0\""}, ScalarCase{"true", "true"},
                                           ScalarCase{"false", "false"}, ScalarCase{"\"true\"", "\"true\""},
                                           ScalarCase{"1.5", "1.5"}, ScalarCase{"20%", "\"20%\""},
                                           ScalarCase{"~", "null"}, ScalarCase{"", "null"},
                                           ScalarCase{"1000m", "\"1000m\""}, ScalarCase{"v1.2.0", "\"v1.2.0\""},
                                           ScalarCase{"[a, 1]", "[\"a\",1]"}, ScalarCase{"{}", "{}"}),
                         [](const ::testing::TestParamInfo<ScalarCase>& info) { return std::to_string(info.index); });

TEST(YamlDocumentsToJson, SkipsEmptyDocuments) {
  auto docs = YamlDocumentsToJson("---\na: 1\n---\n---\nb: x\n");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0], R"({"a":1})");
  EXPECT_EQ((*docs)[1], R"({"b":"x"})");
}

TEST(YamlToJson, Errors) {
  EXPECT_EQ(std::string(YamlToJson("a: [1, 2\n").status().message()).substr(0, 12), "YAML line 2:");
  EXPECT_EQ(std::string(YamlToJson("a: 1\n---\nb: 2\n").status().message()), "expected one YAML document, got 2");
  EXPECT_EQ(std::string(YamlToJson("? [a]\n: 1\n").status().message()), "YAML line 1: non-scalar key");
}

}  // namespace
}  // namespace cloneset::snapshot
