#include "executor/expectations.h"

#include <map>
#include <utility>

#include "gtest/gtest.h"

namespace cloneset::executor {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

struct IsMetCase {
  const char* name;
  Expectation e;
  Observed o;
  bool met;
};

TEST(IsMetTest, Table) {
  const std::vector<IsMetCase> cases = {
      {"present/absent", {ObjectKind::kPod, "p", Want::kPresent, "5"}, {false, false, ""}, false},
      {"present/exists", {ObjectKind::kPod, "p", Want::kPresent, "5"}, {true, false, "5"}, true},
      {"present/terminating", {ObjectKind::kPod, "p", Want::kPresent, ""}, {true, true, "9"}, true},
      {"absent/exists", {ObjectKind::kPod, "p", Want::kAbsent, ""}, {true, false, "3"}, false},
      {"absent/deleting", {ObjectKind::kPod, "p", Want::kAbsent, ""}, {true, true, "4"}, true},
      {"absent/gone", {ObjectKind::kPvc, "c", Want::kAbsent, ""}, {false, false, ""}, true},
      {"version/older", {ObjectKind::kPod, "p", Want::kAtLeastVersion, "10"}, {true, false, "9"}, false},
      {"version/equal", {ObjectKind::kPod, "p", Want::kAtLeastVersion, "10"}, {true, false, "10"}, true},
      {"version/numeric not lexical", {ObjectKind::kPod, "p", Want::kAtLeastVersion, "9"}, {true, false, "10"},
       true},
      {"version/non-numeric cached", {ObjectKind::kPod, "p", Want::kAtLeastVersion, "9"}, {true, false, "x"},
       false},
      {"version/empty expected", {ObjectKind::kCloneSet, "c", Want::kAtLeastVersion, ""}, {true, false, "1"},
       true},
      {"version/object gone", {ObjectKind::kPod, "p", Want::kAtLeastVersion, "10"}, {false, false, ""}, true},
  };
  for (const auto& c : cases) EXPECT_EQ(IsMet(c.e, c.o), c.met) << c.name;
}

// A fake cache: kind/name -> observed.
struct FakeCache {
  std::map<std::pair<ObjectKind, std::string>, Observed> objects;
  Lookup lookup() {
    return [this](ObjectKind k, const std::string& n) {
      auto it = objects.find({k, n});
      return it == objects.end() ? Observed{} : it->second;
    };
  }
};

TEST(ExpectationsTest, NoRecordIsSatisfied) {
  Expectations ex(absl::Minutes(5));
  FakeCache cache;
  auto r = ex.Check("ns/cs", cache.lookup(), kT0);
  EXPECT_EQ(r.state, GateResult::kSatisfied);
  EXPECT_EQ(ex.pending_keys(), 0u);
}

TEST(ExpectationsTest, PendingUntilCacheCatchesUp) {
  Expectations ex(absl::Minutes(5));
  FakeCache cache;
  ex.Expect("ns/cs", {ObjectKind::kPvc, "ws-cs-a", Want::kPresent, "11"}, kT0);
  ex.Expect("ns/cs", {ObjectKind::kPod, "cs-a", Want::kPresent, "12"}, kT0);
  ex.Expect("ns/cs", {ObjectKind::kPod, "cs-b", Want::kAbsent, ""}, kT0 + absl::Seconds(1));
  cache.objects[{ObjectKind::kPod, "cs-b"}] = {true, false, "3"};

  auto r = ex.Check("ns/cs", cache.lookup(), kT0 + absl::Seconds(60));
  EXPECT_EQ(r.state, GateResult::kPending);
  EXPECT_EQ(r.requeue_after, absl::Seconds(240));
  EXPECT_EQ(r.unmet.size(), 3u);

  cache.objects[{ObjectKind::kPvc, "ws-cs-a"}] = {true, false, "11"};
  cache.objects[{ObjectKind::kPod, "cs-a"}] = {true, false, "12"};
  r = ex.Check("ns/cs", cache.lookup(), kT0 + absl::Seconds(61));
  EXPECT_EQ(r.state, GateResult::kPending);
  ASSERT_EQ(r.unmet.size(), 1u);
  EXPECT_EQ(r.unmet[0].name, "cs-b");

  cache.objects[{ObjectKind::kPod, "cs-b"}] = {true, true, "14"};
  r = ex.Check("ns/cs", cache.lookup(), kT0 + absl::Seconds(62));
  EXPECT_EQ(r.state, GateResult::kSatisfied);
  EXPECT_EQ(ex.pending_keys(), 0u);
}

TEST(ExpectationsTest, ExpiresAfterTimeoutAndDropsRecord) {
  Expectations ex(absl::Minutes(5));
  FakeCache cache;
  ex.Expect("ns/cs", {ObjectKind::kPod, "cs-a", Want::kPresent, ""}, kT0);
  auto r = ex.Check("ns/cs", cache.lookup(), kT0 + absl::Minutes(5) - absl::Seconds(1));
  EXPECT_EQ(r.state, GateResult::kPending);
  EXPECT_EQ(r.requeue_after, absl::Seconds(1));
  r = ex.Check("ns/cs", cache.lookup(), kT0 + absl::Minutes(5));
  EXPECT_EQ(r.state, GateResult::kExpired);
  EXPECT_EQ(r.unmet, (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kPresent, ""}}));
  EXPECT_EQ(ex.Check("ns/cs", cache.lookup(), kT0 + absl::Minutes(6)).state, GateResult::kSatisfied);
}

TEST(ExpectationsTest, NewerExpectationOnSameObjectReplacesOlder) {
  Expectations ex(absl::Minutes(5));
  ex.Expect("ns/cs", {ObjectKind::kPod, "cs-a", Want::kPresent, "5"}, kT0);
  ex.Expect("ns/cs", {ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "7"}, kT0 + absl::Seconds(3));
  ex.Expect("ns/cs", {ObjectKind::kPvc, "cs-a", Want::kPresent, "4"}, kT0 + absl::Seconds(3));
  EXPECT_EQ(ex.Get("ns/cs"), (std::vector<Expectation>{{ObjectKind::kPod, "cs-a", Want::kAtLeastVersion, "7"},
                                                       {ObjectKind::kPvc, "cs-a", Want::kPresent, "4"}}));
  FakeCache cache;
  cache.objects[{ObjectKind::kPod, "cs-a"}] = {true, false, "6"};
  cache.objects[{ObjectKind::kPvc, "cs-a"}] = {true, false, "4"};
  // The timeout runs from the first expectation (kT0), not the replacement.
  auto r = ex.Check("ns/cs", cache.lookup(), kT0 + absl::Seconds(10));
  EXPECT_EQ(r.state, GateResult::kPending);
  EXPECT_EQ(r.requeue_after, absl::Seconds(290));
}

TEST(ExpectationsTest, KeysAreIndependentAndForgettable) {
  Expectations ex(absl::Minutes(5));
  FakeCache cache;
  ex.Expect("ns/a", {ObjectKind::kPod, "a-1", Want::kPresent, ""}, kT0);
  ex.Expect("ns/b", {ObjectKind::kPod, "b-1", Want::kPresent, ""}, kT0);
  EXPECT_EQ(ex.pending_keys(), 2u);
  ex.Forget("ns/a");
  EXPECT_EQ(ex.Check("ns/a", cache.lookup(), kT0).state, GateResult::kSatisfied);
  EXPECT_EQ(ex.Check("ns/b", cache.lookup(), kT0).state, GateResult::kPending);
}

}  // namespace
}  // namespace cloneset::executor
