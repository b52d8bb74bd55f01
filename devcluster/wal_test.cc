#include "base/testing/fake_clock.h"
#include "devcluster/wal.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

class WalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wal_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  json Cm(const std::string& name) {
    return {{"metadata", {{"name", name}, {"namespace", "default"}}}, {"data", {{"k", name}}}};
  }
  std::filesystem::path dir_;
  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
};

TEST_F(WalTest, RestartServesSameObjectsAndResourceVersions) {
  json a, b;
  int64_t rv = 0;
  {
    Store store(&clock_);
    auto wal = WriteAheadLog::Open(dir_, &store);
    ASSERT_TRUE(wal.ok()) << wal.status();
    a = *store.Create(kConfigMaps, Cm("a"));
    b = *store.Create(kConfigMaps, Cm("b"));
    ASSERT_TRUE(store.Create(kConfigMaps, Cm("gone")).ok());
    ASSERT_TRUE(store.Delete(kConfigMaps, "default", "gone").ok());
    b["data"]["k"] = "changed";
    b = *store.Update(kConfigMaps, b);
    rv = store.CurrentResourceVersion();
    // No final snapshot: a crash right now must lose nothing.
  }
  Store restarted(&clock_);
  auto wal = WriteAheadLog::Open(dir_, &restarted);
  ASSERT_TRUE(wal.ok()) << wal.status();
  EXPECT_EQ(restarted.CurrentResourceVersion(), rv);
  EXPECT_EQ(*restarted.Get(kConfigMaps, "default", "a"), a);
  EXPECT_EQ(*restarted.Get(kConfigMaps, "default", "b"), b);
  EXPECT_EQ(restarted.Get(kConfigMaps, "default", "gone").status().code(), absl::StatusCode::kNotFound);
  auto c = restarted.Create(kConfigMaps, Cm("c"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)["metadata"]["resourceVersion"], std::to_string(rv + 1));
  // A watch from before the restart is too old (410), one from now works.
  WatchOptions o;
  o.resource_version = rv - 1;
  auto w = restarted.Watch(kConfigMaps, o);
  WatchEvent ev;
  ASSERT_TRUE((*w)->Next(&ev, std::chrono::milliseconds(10)));
  EXPECT_EQ(ev.type, EventType::kError);
}

TEST_F(WalTest, SnapshotTruncatesLogAndCrdTypesSurvive) {
  {
    Store store(&clock_);
    auto wal = WriteAheadLog::Open(dir_, &store, WalOptions{.snapshot_every = 1000000, .sync = false});
    ASSERT_TRUE(wal.ok());
    json crd = json::parse(R"({"metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com",
      "names":{"plural":"widgets","kind":"Widget"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true}]}})");
    ASSERT_TRUE(store.Create(kCustomResourceDefinitions, crd).ok());
    ASSERT_TRUE(store.Create("widgets.example.com", {{"metadata", {{"name", "w1"}, {"namespace", "default"}}}}).ok());
    ASSERT_TRUE((*wal)->Snapshot().ok());
    EXPECT_EQ(std::filesystem::file_size(dir_ / "wal.log"), 0u);
    ASSERT_TRUE(store.Create(kConfigMaps, Cm("after")).ok());
  }
  // A torn tail (crash mid-append) is ignored.
  std::ofstream(dir_ / "wal.log", std::ios::app) << "{\"op\":\"put\",\"r\":";
  Store restarted(&clock_);
  auto wal = WriteAheadLog::Open(dir_, &restarted);
  ASSERT_TRUE(wal.ok()) << wal.status();
  EXPECT_TRUE(restarted.FindType("widgets.example.com").has_value());
  EXPECT_TRUE(restarted.Get("widgets.example.com", "default", "w1").ok());
  EXPECT_TRUE(restarted.Get(kConfigMaps, "default", "after").ok());
}

}  // namespace
}  // namespace cloneset::devcluster
