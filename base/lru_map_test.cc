#include "base/lru_map.h"

#include <string>

#include "gtest/gtest.h"

namespace cloneset::base {
namespace {

TEST(LruMap, FindMakesAnEntryTheMostRecent) {
  LruMap<std::string, int> lru(2);
  lru.Insert("a", 1);
  lru.Insert("b", 2);
  ASSERT_NE(lru.Find("a"), nullptr);  // "b" is now the least recent
  lru.Insert("c", 3);
  EXPECT_EQ(lru.size(), 2u);
  EXPECT_EQ(lru.Find("b"), nullptr);
  ASSERT_NE(lru.Find("a"), nullptr);
  EXPECT_EQ(*lru.Find("a"), 1);
  EXPECT_EQ(*lru.Find("c"), 3);
}

TEST(LruMap, InsertReplacesAndRefreshes) {
  LruMap<std::string, int> lru(2);
  lru.Insert("a", 1);
  lru.Insert("b", 2);
  lru.Insert("a", 10);  // replaced, and now the most recent
  lru.Insert("c", 3);
  EXPECT_EQ(lru.size(), 2u);
  EXPECT_EQ(lru.Find("b"), nullptr);
  ASSERT_NE(lru.Find("a"), nullptr);
  EXPECT_EQ(*lru.Find("a"), 10);
}

TEST(LruMap, ValuesStayPutWhileOthersComeAndGo) {
  LruMap<int, std::string> lru(3);
  const std::string* kept = &lru.Insert(1, "one");
  lru.Insert(2, "two");
  lru.Find(1);
  lru.Insert(3, "three");
  lru.Erase(2);
  lru.Insert(4, "four");
  // The same object, not an equal copy: a pointer from Find or Insert survives other entries' reordering.
  EXPECT_EQ(lru.Find(1), kept);
  EXPECT_EQ(*kept, "one");
  EXPECT_EQ(lru.size(), 3u);
}

TEST(LruMap, CapacityZeroKeepsTheLastEntry) {
  LruMap<int, int> lru(0);
  EXPECT_EQ(lru.capacity(), 1u);
  lru.Insert(1, 1);
  lru.Insert(2, 2);
  EXPECT_EQ(lru.size(), 1u);
  EXPECT_EQ(lru.Find(1), nullptr);
  EXPECT_NE(lru.Find(2), nullptr);
}

TEST(LruMap, EraseOfAnAbsentKeyIsANoOp) {
  LruMap<int, int> lru(2);
  lru.Insert(1, 1);
  lru.Erase(7);
  EXPECT_EQ(lru.size(), 1u);
}

}  // namespace
}  // namespace cloneset::base
