#include "planner/int_or_percent.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cloneset::planner {
namespace {

pb::IntOrString Int(int32_t v) {
  pb::IntOrString x;
  x.set_int_value(v);
  return x;
}
pb::IntOrString Str(const std::string& v) {
  pb::IntOrString x;
  x.set_str_value(v);
  return x;
}

struct PartitionCase {
  std::string name;
  pb::IntOrString value;
  int32_t replicas;
  int32_t want;
};

class PartitionTest : public ::testing::TestWithParam<PartitionCase> {};

TEST_P(PartitionTest, Resolves) {
  const PartitionCase& c = GetParam();
  absl::StatusOr<int32_t> got = ResolvePartition(c.value, c.replicas, "spec.updateStrategy.partition");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, c.want);
}

// Every example of semantics §0.4 (R-partition), plus the exact-decimal and clamping edges.
INSTANTIATE_TEST_SUITE_P(
    Semantics04, PartitionTest,
    ::testing::Values(PartitionCase{"unset", pb::IntOrString(), 5, 0},
                      PartitionCase{"p99_of_5", Str("99%"), 5, 4},
                      PartitionCase{"p100_of_5", Str("100%"), 5, 5},
                      PartitionCase{"p1_of_5", Str("1%"), 5, 1},
                      PartitionCase{"p50_of_5", Str("50%"), 5, 3},
                      PartitionCase{"int10_clamped_to_5", Int(10), 5, 5},
                      PartitionCase{"p90_of_4_at_least_one_updated", Str("90%"), 4, 3},
                      PartitionCase{"p99_of_1", Str("99%"), 1, 1},
                      PartitionCase{"int3_of_5", Int(3), 5, 3},
                      PartitionCase{"int0", Int(0), 5, 0},
                      PartitionCase{"p0", Str("0%"), 5, 0},
                      PartitionCase{"p12_5_of_8_exact", Str("12.5%"), 8, 1},
                      PartitionCase{"p12_5_of_9_ceil", Str("12.5%"), 9, 2},
                      PartitionCase{"p100_0_is_not_exactly_100", Str("100.0%"), 5, 4},
                      PartitionCase{"p150_clamped", Str("150%"), 5, 5},
                      PartitionCase{"p50_of_0", Str("50%"), 0, 0},
                      PartitionCase{"int_of_0_replicas", Int(3), 0, 0},
                      PartitionCase{"p7_of_100_no_float_artefact", Str("7%"), 100, 7},
                      PartitionCase{"p0_1_of_10", Str("0.1%"), 10, 1}),
    [](const auto& info) { return info.param.name; });

struct ScaledCase {
  std::string name;
  pb::IntOrString value;
  int32_t total;
  bool round_up;
  int32_t unset_value;
  int32_t want;
};

class ScaledTest : public ::testing::TestWithParam<ScaledCase> {};

TEST_P(ScaledTest, Resolves) {
  const ScaledCase& c = GetParam();
  absl::StatusOr<int32_t> got = ResolveScaled(c.value, c.total, c.round_up, c.unset_value, "f");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Rounding, ScaledTest,
    ::testing::Values(ScaledCase{"p20_of_4_up", Str("20%"), 4, true, 0, 1},
                      ScaledCase{"p20_of_4_down", Str("20%"), 4, false, 0, 0},
                      ScaledCase{"p20_of_10_up", Str("20%"), 10, true, 0, 2},
                      ScaledCase{"p20_of_10_down", Str("20%"), 10, false, 0, 2},
                      ScaledCase{"p25_of_10_up", Str("25%"), 10, true, 0, 3},
                      ScaledCase{"p25_of_10_down", Str("25%"), 10, false, 0, 2},
                      // Upstream silently makes "12.5%" zero; we compute it (docs/compatibility.md).
                      ScaledCase{"p12_5_of_8_up", Str("12.5%"), 8, true, 0, 1},
                      ScaledCase{"p12_5_of_10_up", Str("12.5%"), 10, true, 0, 2},
                      ScaledCase{"p12_5_of_10_down", Str("12.5%"), 10, false, 0, 1},
                      ScaledCase{"int_passes_through", Int(7), 3, true, 0, 7},
                      ScaledCase{"unset_gives_default", pb::IntOrString(), 10, true, INT32_MAX, INT32_MAX},
                      ScaledCase{"p200_of_3_up", Str("200%"), 3, true, 0, 6},
                      ScaledCase{"p100_of_0", Str("100%"), 0, true, 0, 0},
                      ScaledCase{"p10_of_198_down", Str("10%"), 198, false, 0, 19},
                      ScaledCase{"p10_of_198_up", Str("10%"), 198, true, 0, 20},
                      ScaledCase{"huge_percent_saturates", Str("999999999%"), INT32_MAX, true, 0, INT32_MAX}),
    [](const auto& info) { return info.param.name; });

struct BadCase {
  std::string name;
  pb::IntOrString value;
  std::string message_part;
};

class BadValueTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadValueTest, RejectedByBothResolversNamingTheField) {
  const BadCase& c = GetParam();
  absl::StatusOr<int32_t> partition = ResolvePartition(c.value, 10, "spec.updateStrategy.partition");
  ASSERT_FALSE(partition.ok());
  EXPECT_EQ(partition.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(partition.status().message(), "spec.updateStrategy.partition: "))
      << partition.status();
  EXPECT_TRUE(absl::StrContains(partition.status().message(), c.message_part)) << partition.status();
  absl::StatusOr<int32_t> scaled = ResolveScaled(c.value, 10, true, 0, "spec.updateStrategy.maxSurge");
  ASSERT_FALSE(scaled.ok());
  EXPECT_TRUE(absl::StartsWith(scaled.status().message(), "spec.updateStrategy.maxSurge: ")) << scaled.status();
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadValueTest,
    ::testing::Values(BadCase{"two_dots", Str("12.5.%"), "more than one decimal point"},
                      BadCase{"bare_number", Str("5"), "must end in %"},
                      BadCase{"empty", Str(""), "empty string"},
                      BadCase{"only_percent", Str("%"), "no digits"},
                      BadCase{"letters", Str("abc%"), "not a number"},
                      BadCase{"negative_string", Str("-5%"), "must not be negative"},
                      BadCase{"negative_int", Int(-1), "must not be negative"},
                      BadCase{"trailing_dot", Str("5.%"), "no digits after"},
                      BadCase{"leading_dot", Str(".5%"), "no digits before"},
                      BadCase{"space", Str(" 5%"), "not a number"},
                      BadCase{"exponent", Str("1e2%"), "not a number"},
                      BadCase{"too_long", Str("12345678901%"), "too large"},
                      BadCase{"too_precise", Str("1.1234567891%"), "too many decimal places"}),
    [](const auto& info) { return info.param.name; });

TEST(HasValueTest, DistinguishesUnsetFromZero) {
  EXPECT_FALSE(HasValue(pb::IntOrString()));
  EXPECT_TRUE(HasValue(Int(0)));
  EXPECT_TRUE(HasValue(Str("0%")));
}

}  // namespace
}  // namespace cloneset::planner
