#include "planner/instance_ids.h"

#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace cloneset::planner {
namespace {

constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";

TEST(FreshInstanceIds, DistinctFiveLetterIdsAvoidingTakenOnes) {
  const std::vector<std::string> taken_list = FreshInstanceIds(7, 50, [](std::string_view) { return false; });
  ASSERT_EQ(taken_list.size(), 50u);
  const absl::flat_hash_set<std::string> taken(taken_list.begin(), taken_list.begin() + 25);
  // The same seed draws the same ids: the first 25 are now taken, so they are skipped.
  const std::vector<std::string> ids =
      FreshInstanceIds(7, 100, [&](std::string_view id) { return taken.contains(std::string(id)); });
  ASSERT_EQ(ids.size(), 100u);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 100u);
  for (const std::string& id : ids) {
    EXPECT_EQ(id.size(), 5u);
    EXPECT_EQ(id.find_first_not_of(kAlphabet), std::string::npos) << id;
    EXPECT_FALSE(taken.contains(std::string(id))) << id;
  }
  EXPECT_EQ(ids[0], taken_list[25]);
  EXPECT_EQ(FreshInstanceIds(7, 100, [&](std::string_view id) { return taken.contains(std::string(id)); }), ids);
}

// A nearly full id space: redrawing collisions would take ever longer (and forever once the space is full), so the
// generator walks the space instead and always ends. Ids of 2 letters (729) make the walk of a full space quick;
// the generator is the same for 5.
TEST(FreshInstanceIds, CrowdedSpaceEndsWithTheFreeIds) {
  struct Case {
    std::string name;
    absl::flat_hash_set<std::string> free;
    int64_t asked;
    size_t want;
  };
  for (const Case& c : {Case{"one_free", {"z9"}, 1, 1}, Case{"two_free_three_asked", {"bb", "k2"}, 3, 2},
                        Case{"none_free", {}, 5, 0}, Case{"more_asked_than_exist", {"cc"}, 1000, 1}}) {
    SCOPED_TRACE(c.name);
    int64_t looked = 0;
    const std::vector<std::string> ids = FreshInstanceIds(
        42, c.asked,
        [&](std::string_view id) {
          ++looked;
          return !c.free.contains(std::string(id));
        },
        nullptr, /*length=*/2);
    ASSERT_EQ(ids.size(), c.want);
    for (const std::string& id : ids) EXPECT_TRUE(c.free.contains(id)) << id;
    // The bounded redraws plus one walk of the 729 ids at most.
    EXPECT_LE(looked, std::min<int64_t>(c.asked, 1 << 16) + 64 + 1 + 729);
  }
}

// The full-size space with 26 of every 27 ids taken: more collisions than the redraws allow, so the walk finds
// the rest (one free id in every 27 it looks at).
TEST(FreshInstanceIds, FullSizeCrowdedSpace) {
  int64_t looked = 0;
  const std::vector<std::string> ids = FreshInstanceIds(42, 20, [&](std::string_view id) {
    ++looked;
    return id[4] != 'z';
  });
  ASSERT_EQ(ids.size(), 20u);
  for (const std::string& id : ids) EXPECT_EQ(id[4], 'z') << id;
  EXPECT_LE(looked, 20 + 64 + 1 + 27 * 20);
}

TEST(FreshInstanceIds, CancelStopsTheWalk) {
  int asked = 0;
  const CancelCheck cancelled = [&] { return ++asked >= 2; };
  const std::vector<std::string> ids =
      FreshInstanceIds(42, 3, [](std::string_view) { return true; }, &cancelled);
  EXPECT_TRUE(ids.empty());
  EXPECT_EQ(asked, 2);  // the walk asks once per 65 536 ids looked at: it stopped at the second question
}

TEST(FreshInstanceIds, NothingAsked) {
  EXPECT_TRUE(FreshInstanceIds(1, 0, [](std::string_view) { return false; }).empty());
  EXPECT_TRUE(FreshInstanceIds(1, -3, [](std::string_view) { return false; }).empty());
}

}  // namespace
}  // namespace cloneset::planner
