#include "devcluster/nodes/quantity.h"

#include <gtest/gtest.h>

namespace cloneset::devcluster::nodes {
namespace {

TEST(Quantity, MilliTable) {
  struct Case {
    nlohmann::json in;
    int64_t want;
  };
  for (const Case& c : std::vector<Case>{{"250m", 250}, {"1", 1000}, {"1.5", 1500}, {"0.1", 100}, {2, 2000},
                                         {"1k", 1000000}, {"100u", 1}, {"1e3", 1000000}}) {
    auto v = ParseMilliQuantity(c.in, "cpu");
    ASSERT_TRUE(v.ok()) << c.in << ": " << v.status();
    EXPECT_EQ(*v, c.want) << c.in;
  }
}

TEST(Quantity, BytesTable) {
  struct Case {
    std::string in;
    int64_t want;
  };
  for (const Case& c : std::vector<Case>{{"512Mi", 536870912}, {"1Gi", 1073741824}, {"1G", 1000000000},
                                         {"128974848", 128974848}, {"129M", 129000000}, {"1Ki", 1024}}) {
    auto v = ParseQuantity(c.in, "memory");
    ASSERT_TRUE(v.ok()) << c.in;
    EXPECT_EQ(*v, c.want) << c.in;
  }
}

TEST(Quantity, ErrorsNameTheField) {
  for (const nlohmann::json& bad : {nlohmann::json("abc"), nlohmann::json("1Qi"), nlohmann::json(true),
                                    nlohmann::json(""), nlohmann::json("1e99")}) {
    auto v = ParseQuantity(bad, "spec.containers[0].resources.requests.memory");
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.status().message().find("spec.containers[0].resources.requests.memory"), std::string::npos);
  }
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
