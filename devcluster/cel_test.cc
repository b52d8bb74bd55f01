#include "devcluster/cel.h"

#include <gtest/gtest.h>

namespace cloneset::devcluster::cel {
namespace {

using nlohmann::json;

struct Case {
  std::string rule;
  json self;
  std::optional<json> old_self;
  std::optional<bool> want;  // nullopt: an evaluation error
};

TEST(CelTest, EvaluatesTheChartRulesAndTheSubset) {
  const std::string percent = R"(type(self) == int ? self >= 0 : self.matches('^[0-9]+(\\.[0-9]+)?%$'))";
  const std::string in_place =
      R"(!(has(self.type) && self.type == 'InPlaceOnly' && has(self.maxSurge) && (type(self.maxSurge) == int ? self.maxSurge > 0 : !string(self.maxSurge).matches('^0+(\\.0+)?%$'))))";
  const std::string selector =
      "!has(self.selector) || !has(self.selector.matchLabels) || self.selector.matchLabels.all(k, "
      "has(self.template.metadata) && has(self.template.metadata.labels) && k in self.template.metadata.labels && "
      "self.template.metadata.labels[k] == self.selector.matchLabels[k])";
  const std::string unique = "self.all(x, self.exists_one(y, y.metadata.name == x.metadata.name))";
  const std::string empty_selector =
      "(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && "
      "size(self.matchExpressions) > 0)";
  const std::vector<Case> cases = {
      {percent, 3, {}, true},
      {percent, -1, {}, false},
      {percent, "20%", {}, true},
      {percent, "12.5%", {}, true},
      {percent, "abc", {}, false},
      {in_place, {{"type", "InPlaceOnly"}, {"maxSurge", 1}}, {}, false},
      {in_place, {{"type", "InPlaceOnly"}, {"maxSurge", "0%"}}, {}, true},
      {in_place, {{"type", "InPlaceOnly"}, {"maxSurge", "10%"}}, {}, false},
      {in_place, {{"type", "ReCreate"}, {"maxSurge", 2}}, {}, true},
      {selector, {{"selector", {{"matchLabels", {{"app", "a"}}}}}, {"template", {{"metadata", {{"labels", {{"app", "a"}}}}}}}}, {}, true},
      {selector, {{"selector", {{"matchLabels", {{"app", "a"}}}}}, {"template", {{"metadata", {{"labels", {{"app", "b"}}}}}}}}, {}, false},
      {selector, {{"selector", {{"matchLabels", {{"app", "a"}}}}}, {"template", json::object()}}, {}, false},
      {selector, {{"template", json::object()}}, {}, true},
      {unique, json::array({{{"metadata", {{"name", "a"}}}}, {{"metadata", {{"name", "b"}}}}}), {}, true},
      {unique, json::array({{{"metadata", {{"name", "a"}}}}, {{"metadata", {{"name", "a"}}}}}), {}, false},
      {empty_selector, json::object(), {}, false},
      {empty_selector, {{"matchLabels", {{"a", "b"}}}}, {}, true},
      {empty_selector, {{"matchExpressions", json::array({json::object()})}}, {}, true},
      {"self == oldSelf", {{"a", 1}}, json{{"a", 1}}, true},
      {"self == oldSelf", {{"a", 1}}, json{{"a", 2}}, false},
      {"!has(self.activeDeadlineSeconds)", {{"activeDeadlineSeconds", 5}}, {}, false},
      {"!(has(self.weightPriority) && has(self.orderPriority))", {{"weightPriority", json::array()}}, {}, true},
      {"!has(self.p) || self.p == 2147483647 || self.p > (has(self.m) ? self.m : 0)", {{"p", 5}, {"m", 10}}, {}, false},
      {"!has(self.p) || self.p == 2147483647 || self.p > (has(self.m) ? self.m : 0)", {{"p", 5}}, {}, true},
      // Errors: a missing field, and one absorbed by ||.
      {"self.missing > 0", json::object(), {}, std::nullopt},
      {"self.missing > 0 || true", json::object(), {}, true},
      {"size(self) == 2 && self[1] == 'b' && 'a' in self", json::array({"a", "b"}), {}, true},
      {"self.map(x, x * 2) == [2, 4] && self.filter(x, x > 1).size() == 1", json::array({1, 2}), {}, true},
      {"self.exists(x, x == 2)", json::array({1, 2}), {}, true},
      {"1 / 0 == 1", json::object(), {}, std::nullopt},
      {"'abc'.startsWith('a') && 'abc'.endsWith('c') && 'abc'.contains('b') && int('7') + 1 == 8", json::object(), {}, true},
  };
  for (const auto& c : cases) {
    auto p = Program::Compile(c.rule);
    ASSERT_TRUE(p.ok()) << c.rule << ": " << p.status();
    const json* old = c.old_self ? &*c.old_self : nullptr;
    auto got = (*p)->EvaluateRule(c.self, old);
    if (!c.want) {
      EXPECT_FALSE(got.ok()) << c.rule << " on " << c.self.dump();
      continue;
    }
    ASSERT_TRUE(got.ok()) << c.rule << " on " << c.self.dump() << ": " << got.status();
    EXPECT_EQ(*got, *c.want) << c.rule << " on " << c.self.dump();
  }
}

TEST(CelTest, RulesOutsideTheSubsetDoNotCompile) {
  for (const std::string rule : {"self.x.quantity()", "{'a': 1} == self", "self + 1u", "duration('1s') > 0",
                                 "(((((", "self.all(self, true)", "'unterminated"}) {
    auto p = Program::Compile(rule);
    EXPECT_FALSE(p.ok()) << rule;
  }
}

TEST(CelTest, TransitionRulesAreMarked) {
  EXPECT_TRUE((*Program::Compile("self == oldSelf"))->UsesOldSelf());
  EXPECT_FALSE((*Program::Compile("self == 1"))->UsesOldSelf());
}

TEST(CelTest, EvaluationIsBounded) {
  json big = json::array();
  for (int i = 0; i < 5000; ++i) big.push_back(i);
  auto p = Program::Compile("self.all(x, self.exists_one(y, y == x))");
  ASSERT_TRUE(p.ok());
  auto got = (*p)->EvaluateRule(big, nullptr);  // 25M steps: over the budget
  ASSERT_FALSE(got.ok());
  EXPECT_NE(std::string(got.status().message()).find("cost limit"), std::string::npos);
}

}  // namespace
}  // namespace cloneset::devcluster::cel
