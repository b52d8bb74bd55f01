#include "devcluster/faults.h"

#include <map>

#include "gtest/gtest.h"

namespace cloneset::devcluster {
namespace {

std::map<WriteFault, int> Count(FaultInjector& f, std::string_view method, std::string_view ua, int n) {
  std::map<WriteFault, int> out;
  for (int i = 0; i < n; ++i) ++out[f.ForRequest(method, ua)];
  return out;
}

TEST(FaultInjectorTest, OffByDefault) {
  FaultInjector f({});
  EXPECT_FALSE(f.enabled());
  EXPECT_EQ(Count(f, "PATCH", "cloneset-executor", 1000)[WriteFault::kNone], 1000);
  EXPECT_EQ(f.WatchDropAfter("cloneset-executor"), std::nullopt);
}

TEST(FaultInjectorTest, OnlyWritesOfTheChosenClient) {
  FaultInjector f({.conflict_rate = 0.5, .error_rate = 0.5, .user_agent = "cloneset-executor"});
  EXPECT_TRUE(f.enabled());
  struct Case { const char* method; const char* ua; bool faulted; };
  for (const Case& c : {Case{"GET", "cloneset-executor", false}, Case{"POST", "kubectl", false},
                        Case{"POST", "cloneset-executor", true}, Case{"PUT", "cloneset-executor", true},
                        Case{"PATCH", "cloneset-executor", true}, Case{"DELETE", "cloneset-executor", true}}) {
    auto counts = Count(f, c.method, c.ua, 200);
    EXPECT_EQ(counts[WriteFault::kNone], c.faulted ? 0 : 200) << c.method << " " << c.ua;
  }
}

TEST(FaultInjectorTest, RatesAndSplitFollowTheSeed) {
  FaultInjector a({.conflict_rate = 0.1, .error_rate = 0.2, .user_agent = "", .seed = 7});
  FaultInjector b({.conflict_rate = 0.1, .error_rate = 0.2, .user_agent = "", .seed = 7});
  auto ca = Count(a, "PATCH", "anyone", 20000);
  EXPECT_EQ(ca, Count(b, "PATCH", "anyone", 20000));  // same seed, same faults
  EXPECT_NEAR(ca[WriteFault::kConflict], 2000, 200);
  EXPECT_NEAR(ca[WriteFault::kErrorBeforeCommit], 2000, 200);
  EXPECT_NEAR(ca[WriteFault::kErrorAfterCommit], 2000, 200);
  EXPECT_NEAR(ca[WriteFault::kNone], 14000, 300);
}

TEST(FaultInjectorTest, WatchDropWithinHalfToFullInterval) {
  FaultInjector f({.watch_drop_after = std::chrono::milliseconds(4000), .user_agent = "cloneset-executor"});
  EXPECT_TRUE(f.enabled());
  EXPECT_EQ(f.WatchDropAfter("kubectl"), std::nullopt);
  for (int i = 0; i < 500; ++i) {
    auto d = f.WatchDropAfter("cloneset-executor");
    ASSERT_TRUE(d.has_value());
    EXPECT_GE(d->count(), 2000);
    EXPECT_LE(d->count(), 4000);
  }
}

}  // namespace
}  // namespace cloneset::devcluster
