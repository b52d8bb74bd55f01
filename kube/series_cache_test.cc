#include "kube/series_cache.h"

#include <array>

#include "gtest/gtest.h"

namespace cloneset::kube {
namespace {

// A key's value is made once and then cached; an erased key is made again.
TEST(SeriesCacheTest, MadeOnceCachedAndMadeAgainAfterErase) {
  SeriesCache<int*> cache;
  std::array<int, 3> series{};
  int made = 0;
  auto make = [&](int i) {
    return [&, i] {
      ++made;
      return &series[i];
    };
  };
  EXPECT_EQ(cache.Get("a", make(0)), &series[0]);
  EXPECT_EQ(cache.Get("a", make(1)), &series[0]);
  EXPECT_EQ(cache.Get("b", make(1)), &series[1]);
  EXPECT_EQ(made, 2);
  cache.Erase("a");
  cache.Erase("never cached");
  EXPECT_EQ(cache.Get("a", make(2)), &series[2]);
  EXPECT_EQ(cache.Get("b", make(0)), &series[1]);
  EXPECT_EQ(made, 3);
}

}  // namespace
}  // namespace cloneset::kube
