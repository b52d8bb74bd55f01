#include "devcluster/faults.h"

#include <algorithm>
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

TEST(FaultInjectorTest, DelayWithinZeroToMaxForTheChosenClientOnly) {
  FaultInjector off({});
  EXPECT_EQ(off.DelayFor("cloneset-executor"), std::nullopt);
  FaultInjector f({.max_delay = std::chrono::milliseconds(300), .user_agent = "cloneset-executor"});
  EXPECT_TRUE(f.enabled());
  EXPECT_EQ(f.DelayFor("kubectl"), std::nullopt);
  int64_t lo = 1000, hi = -1;
  for (int i = 0; i < 500; ++i) {
    auto d = f.DelayFor("cloneset-executor");
    ASSERT_TRUE(d.has_value());
    lo = std::min<int64_t>(lo, d->count());
    hi = std::max<int64_t>(hi, d->count());
  }
  EXPECT_GE(lo, 0);
  EXPECT_LT(lo, 30);  // the whole range is drawn from
  EXPECT_GT(hi, 270);
  EXPECT_LE(hi, 300);
}

TEST(FaultInjectorTest, StatusOfEachWriteFault) {
  struct Case { WriteFault f; int code; const char* reason; const char* says; };
  for (const Case& c : {Case{WriteFault::kConflict, 409, "Conflict", "the object has been modified"},
                        Case{WriteFault::kErrorBeforeCommit, 500, "InternalError", "before commit"},
                        Case{WriteFault::kErrorAfterCommit, 500, "InternalError", "after commit"}}) {
    const FaultStatus s = FaultStatusOf(c.f);
    EXPECT_EQ(s.code, c.code) << WriteFaultName(c.f);
    EXPECT_EQ(s.reason, c.reason) << WriteFaultName(c.f);
    EXPECT_NE(s.message.find(c.says), std::string::npos) << s.message;
  }
}

TEST(UserAgentLabelTest, ProductToken) {
  struct Case { const char* ua; const char* label; };
  for (const Case& c : {Case{"kubectl/v1.33.4 (linux/amd64) kubernetes/abc", "kubectl"},
                        Case{"cloneset-executor/0.1 (exec-0)", "cloneset-executor"}, Case{"", "unknown"},
                        Case{"curl", "curl"}}) {
    EXPECT_EQ(UserAgentLabel(c.ua), c.label) << c.ua;
  }
  EXPECT_EQ(UserAgentLabel(std::string(100, 'a')).size(), 64u);
}

}  // namespace
}  // namespace cloneset::devcluster
