#include "devcluster/crd_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/testing/fake_clock.h"

namespace cloneset::devcluster {
namespace {

namespace fs = std::filesystem;

class CrdDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("crd_dir_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  int Get(const std::string& path) {
    ApiRequest r;
    r.method = "GET";
    r.path = path;
    r.headers["accept"] = "application/json";
    r.headers["authorization"] = "Bearer secret";
    return api_.Handle(r).status;
  }

  fs::path dir_;
  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
  ApiServer api_{&store_, ApiServerOptions{.token = "secret", .server_address = "127.0.0.1:1"}};
};

// The chart's CRD directories (crds/, and files/crds/ of the CloneSet CRD the chart templates): every CRD is served
// afterwards, and applying again (a restart over a kept --data-dir) succeeds with the same names.
TEST_F(CrdDirTest, TheChartsCrdsAreServedAndReapplied) {
  const fs::path cloneset_crds = fs::path(CLONESET_CHART_CRD).parent_path();
  const fs::path chart_crds = cloneset_crds.parent_path().parent_path() / "crds";
  auto applied = ApplyCrdDir(api_, "secret", chart_crds.string());
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(*applied, (std::vector<std::string>{"imagepulljobs.apps.kruise.io", "nodeimages.apps.kruise.io"}));
  auto cloneset = ApplyCrdDir(api_, "secret", cloneset_crds.string());
  ASSERT_TRUE(cloneset.ok()) << cloneset.status();
  EXPECT_EQ(*cloneset, (std::vector<std::string>{"clonesets.apps.kruise.io"}));
  EXPECT_EQ(Get("/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets"), 200);
  EXPECT_EQ(Get("/apis/apps.kruise.io/v1beta1/namespaces/default/clonesets"), 200);
  EXPECT_EQ(Get("/apis/apps.kruise.io/v1alpha1/nodeimages"), 200);
  auto again = ApplyCrdDir(api_, "secret", chart_crds.string());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *applied);
}

TEST_F(CrdDirTest, OtherFilesAreIgnoredAndAnEmptyDirectoryAppliesNothing) {
  Write("README.md", "not a manifest");
  auto applied = ApplyCrdDir(api_, "secret", dir_.string());
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_TRUE(applied->empty());
}

TEST_F(CrdDirTest, ErrorsNameTheFileAndTheProblem) {
  auto missing = ApplyCrdDir(api_, "secret", (dir_ / "absent").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("is not a directory"), std::string::npos) << missing.status();

  Write("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
  auto wrong_kind = ApplyCrdDir(api_, "secret", dir_.string());
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_NE(wrong_kind.status().message().find("a.yaml: kind is \"ConfigMap\""), std::string::npos) << wrong_kind.status();

  Write("a.yaml", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {}\n");
  auto no_name = ApplyCrdDir(api_, "secret", dir_.string());
  ASSERT_FALSE(no_name.ok());
  EXPECT_NE(no_name.status().message().find("a.yaml: metadata.name is missing"), std::string::npos) << no_name.status();

  // A token the cluster does not accept: the server's answer is the error.
  Write("a.yaml", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: xs.example.com\n");
  auto refused = ApplyCrdDir(api_, "wrong", dir_.string());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("HTTP 401"), std::string::npos) << refused.status();

  // An invalid CRD (no spec): the API's validation message is passed on, with the file.
  auto invalid = ApplyCrdDir(api_, "secret", dir_.string());
  ASSERT_FALSE(invalid.ok());
  EXPECT_NE(invalid.status().message().find("a.yaml (xs.example.com) failed with HTTP 4"), std::string::npos)
      << invalid.status();
}

}  // namespace
}  // namespace cloneset::devcluster
