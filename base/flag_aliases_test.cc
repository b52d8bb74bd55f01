#include "base/flag_aliases.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::base {
namespace {

using ::testing::ElementsAre;

const std::vector<FlagAlias> kAliases = {{"feature-gates", "feature_gates"},
                                         {"cloneset-scaling-exclude-preparing-delete",
                                          "cloneset_scaling_exclude_preparing_delete"}};

struct Case {
  std::string arg;
  std::string want;
};

class RewriteFlagAliasTest : public ::testing::TestWithParam<Case> {};

TEST_P(RewriteFlagAliasTest, Rewrites) { EXPECT_EQ(RewriteFlagAlias(GetParam().arg, kAliases), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Table, RewriteFlagAliasTest,
    ::testing::Values(Case{"--feature-gates=A=true,B=false", "--feature_gates=A=true,B=false"},
                      Case{"-feature-gates=A=true", "-feature_gates=A=true"},
                      Case{"--feature-gates", "--feature_gates"},  // the value follows as the next argument
                      Case{"-feature-gates", "-feature_gates"},
                      Case{"--feature-gates=", "--feature_gates="},
                      Case{"--cloneset-scaling-exclude-preparing-delete", "--cloneset_scaling_exclude_preparing_delete"},
                      Case{"--cloneset-scaling-exclude-preparing-delete=false",
                           "--cloneset_scaling_exclude_preparing_delete=false"},
                      // Ours, other flags, values and names that only start the same are left alone.
                      Case{"--feature_gates=A=true", "--feature_gates=A=true"},
                      Case{"--feature-gates-extra=1", "--feature-gates-extra=1"},
                      Case{"--feature", "--feature"},
                      Case{"feature-gates", "feature-gates"},
                      Case{"--shards=2", "--shards=2"},
                      Case{"-", "-"},
                      Case{"", ""}));

TEST(RewriteFlagAliases, StopsAtDoubleDashAndKeepsTheProgram) {
  // argv[0] is the program, whatever it looks like.
  std::vector<std::string> args = {"--feature-gates", "--feature-gates", "--feature-gates=A=true", "--",
                                   "--feature-gates=B=true"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  EXPECT_THAT(RewriteFlagAliases(static_cast<int>(argv.size()), argv.data(), kAliases),
              ElementsAre("--feature-gates", "--feature_gates", "--feature_gates=A=true", "--",
                          "--feature-gates=B=true"));
}

}  // namespace
}  // namespace cloneset::base
