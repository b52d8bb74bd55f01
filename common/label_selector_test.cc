#include "common/label_selector.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace cloneset::common {
namespace {

using Labels = std::map<std::string, std::string>;

pb::LabelSelector Proto(const Labels& match_labels, const std::vector<std::vector<std::string>>& expressions = {}) {
  pb::LabelSelector s;
  for (const auto& [k, v] : match_labels) (*s.mutable_match_labels())[k] = v;
  for (const std::vector<std::string>& e : expressions) {
    pb::LabelSelectorRequirement* r = s.add_match_expressions();
    r->set_key(e[0]);
    r->set_operator_(e[1]);
    for (size_t i = 2; i < e.size(); ++i) r->add_values(e[i]);
  }
  return s;
}

// The string form, as kube-apiserver's ?labelSelector= takes it.
TEST(LabelSelectorTest, ParseAndMatch) {
  const Labels app{{"app", "web"}, {"tier", "fe"}};
  struct Case {
    std::string selector;
    Labels labels;
    bool match;
  };
  for (const Case& c : std::vector<Case>{
           {"", app, true},
           {"  ", app, true},
           {"app=web", app, true},
           {"app==web", app, true},
           {"app = web", app, true},
           {"app=db", app, false},
           {"app!=db", app, true},
           {"app!=web", app, false},
           {"missing!=x", app, true},
           {"missing=", app, false},
           {"app in (db, web)", app, true},
           {"app in (db)", app, false},
           {"missing in (db)", app, false},
           {"app notin (db)", app, true},
           {"app notin (web,db)", app, false},
           {"missing notin (web)", app, true},
           {"tier", app, true},
           {"missing", app, false},
           {"!missing", app, true},
           {"!tier", app, false},
           {"app=web,tier=fe", app, true},
           {"app=web,tier=be", app, false},
           {"app=web,app=db", app, false},
           {"apps.kruise.io/cloneset-instance-id", {{"apps.kruise.io/cloneset-instance-id", "abc"}}, true},
       }) {
    absl::StatusOr<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector << ": " << s.status();
    EXPECT_EQ(s->Matches(c.labels), c.match) << c.selector;
    const std::vector<std::pair<std::string, std::string>> pairs(c.labels.begin(), c.labels.end());
    EXPECT_EQ(s->Matches(pairs), c.match) << c.selector;
  }
}

TEST(LabelSelectorTest, ParseErrors) {
  struct Case {
    std::string selector;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"app in (a", "missing ')'"},
           {"app=(x", "missing ')'"},
           {"a b in (x)", "expected '<key> in (...)'"},
           {"a within (x)", "unknown operator \"within\""},
           {"=x", "invalid label key \"\""},
           {"app=web,", "empty term"},
           {"bad key=x", "invalid label key \"bad key\""},
           {"app in (a b)", "invalid label value \"a b\""},
           {"app=" + std::string(64, 'v'), "invalid label value"},
       }) {
    absl::StatusOr<LabelSelector> s = LabelSelector::Parse(c.selector);
    ASSERT_FALSE(s.ok()) << c.selector;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << c.selector;
    EXPECT_NE(s.status().message().find(c.error), std::string::npos) << c.selector << ": " << s.status();
  }
}

// The message form: matchLabels AND matchExpressions.
TEST(LabelSelectorTest, ProtoMatch) {
  const Labels labels{{"app", "x"}, {"zone", "a"}};
  struct Case {
    pb::LabelSelector selector;
    bool match;
  };
  for (const Case& c : std::vector<Case>{
           {Proto({}), true},
           {Proto({{"app", "x"}}), true},
           {Proto({{"app", "y"}}), false},
           {Proto({{"app", "x"}, {"zone", "b"}}), false},
           {Proto({}, {{"zone", "In", "a", "b"}}), true},
           {Proto({}, {{"zone", "NotIn", "a"}}), false},
           {Proto({}, {{"tier", "NotIn", "a"}}), true},
           {Proto({}, {{"tier", "In", "a"}}), false},
           {Proto({}, {{"app", "Exists"}}), true},
           {Proto({}, {{"app", "DoesNotExist"}}), false},
           {Proto({}, {{"tier", "DoesNotExist"}}), true},
           {Proto({{"app", "x"}}, {{"zone", "In", "b"}}), false},
       }) {
    absl::StatusOr<LabelSelector> s = LabelSelector::FromProto(c.selector, "spec.selector");
    ASSERT_TRUE(s.ok()) << c.selector.ShortDebugString() << ": " << s.status();
    EXPECT_EQ(s->Matches(labels), c.match) << c.selector.ShortDebugString();
    google::protobuf::Map<std::string, std::string> map(labels.begin(), labels.end());
    EXPECT_EQ(s->Matches(map), c.match) << c.selector.ShortDebugString();
  }
}

TEST(LabelSelectorTest, ProtoErrorsNameTheField) {
  struct Case {
    pb::LabelSelector selector;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {Proto({{"", "x"}}), "spec.selector.matchLabels: keys must not be empty"},
           {Proto({}, {{"", "Exists"}}), "spec.selector.matchExpressions[0].key: must not be empty"},
           {Proto({}, {{"a", "Exists"}, {"b", "Bogus"}}),
            "spec.selector.matchExpressions[1].operator: \"Bogus\" is not one of In, NotIn, Exists, DoesNotExist"},
           {Proto({}, {{"a", "Gt", "1"}}),
            "spec.selector.matchExpressions[0].operator: \"Gt\" is not one of In, NotIn, Exists, DoesNotExist"},
           {Proto({}, {{"a", "In"}}),
            "spec.selector.matchExpressions[0].values: must be non-empty when operator is In or NotIn"},
           {Proto({}, {{"a", "NotIn"}}),
            "spec.selector.matchExpressions[0].values: must be non-empty when operator is In or NotIn"},
           {Proto({}, {{"a", "Exists", "x"}}),
            "spec.selector.matchExpressions[0].values: must be empty when operator is Exists or DoesNotExist"},
           {Proto({}, {{"a", "DoesNotExist", "x"}}),
            "spec.selector.matchExpressions[0].values: must be empty when operator is Exists or DoesNotExist"},
       }) {
    absl::StatusOr<LabelSelector> s = LabelSelector::FromProto(c.selector, "spec.selector");
    ASSERT_FALSE(s.ok()) << c.error;
    EXPECT_EQ(s.status(), absl::InvalidArgumentError(c.error));
  }
}

TEST(LabelSelectorTest, JsonDecodeAndErrors) {
  struct Case {
    std::string json;
    std::string error;  // empty: valid
    Labels labels;
    bool match = false;
  };
  for (const Case& c : std::vector<Case>{
           {R"({})", "", {{"a", "b"}}, true},
           {R"({"matchLabels":null,"matchExpressions":null})", "", {{"a", "b"}}, true},
           {R"({"matchLabels":{"a":"b"}})", "", {{"a", "b"}}, true},
           {R"({"matchExpressions":[{"key":"a","operator":"NotIn","values":["b"]}]})", "", {{"a", "b"}}, false},
           {R"({"matchExpressions":[{"key":"a","operator":"Exists","values":null}]})", "", {{"a", "b"}}, true},
           {R"([])", "sel: expected object, got array"},
           {R"({"matchLabels":[]})", "sel.matchLabels: expected object, got array"},
           {R"({"matchLabels":{"a":1}})", "sel.matchLabels.a: expected string, got number"},
           {R"({"matchExpressions":{}})", "sel.matchExpressions: expected array, got object"},
           {R"({"matchExpressions":[1]})", "sel.matchExpressions[0]: expected object, got number"},
           {R"({"matchExpressions":[{"key":1}]})", "sel.matchExpressions[0].key: expected string, got number"},
           {R"({"matchExpressions":[{"key":"a","operator":true}]})",
            "sel.matchExpressions[0].operator: expected string, got boolean"},
           {R"({"matchExpressions":[{"values":"a"}]})", "sel.matchExpressions[0].values: expected array, got string"},
           {R"({"matchExpressions":[{"key":"a","operator":"In","values":[2]}]})",
            "sel.matchExpressions[0].values[0]: expected string, got number"},
           {R"({"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]})",
            "sel.matchExpressions[0].operator: \"Gt\" is not one of In, NotIn, Exists, DoesNotExist"},
           {R"({"matchExpressions":[{"key":"a","operator":"In","values":[]}]})",
            "sel.matchExpressions[0].values: must be non-empty when operator is In or NotIn"},
       }) {
    absl::StatusOr<LabelSelector> s = LabelSelector::FromJson(nlohmann::json::parse(c.json), "sel");
    if (!c.error.empty()) {
      EXPECT_EQ(s.status(), absl::InvalidArgumentError(c.error)) << c.json;
      continue;
    }
    ASSERT_TRUE(s.ok()) << c.json << ": " << s.status();
    EXPECT_EQ(s->Matches(c.labels), c.match) << c.json;
  }
}

// labels.Selector.String(): sorted by key, set values sorted and deduplicated.
TEST(LabelSelectorTest, String) {
  struct Case {
    pb::LabelSelector selector;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {Proto({}), ""},
           {Proto({{"b", "2"}, {"a", "1"}}), "a=1,b=2"},
           {Proto({{"z", "1"}}, {{"tier", "In", "b", "a", "b"}, {"a", "Exists"}, {"m", "DoesNotExist"}}),
            "a,!m,tier in (a,b),z=1"},
           {Proto({{"k", "v"}}, {{"k", "NotIn", "y", "x"}}), "k=v,k notin (x,y)"},
           {Proto({{"app", "x"}}, {{"zone", "In", "b", "a"}, {"env", "NotIn", "prod"}, {"canary", "Exists"},
                                   {"legacy", "DoesNotExist"}}),
            "app=x,canary,env notin (prod),!legacy,zone in (a,b)"},
       }) {
    absl::StatusOr<LabelSelector> s = LabelSelector::FromProto(c.selector, "s");
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->String(), c.want);
    // The string form parses back to a selector printing the same.
    absl::StatusOr<LabelSelector> again = LabelSelector::Parse(c.want);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->String(), c.want);
  }
  absl::StatusOr<LabelSelector> parsed = LabelSelector::Parse("b!=1,a==2");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->String(), "a=2,b!=1");
}

TEST(LabelSelectorTest, ToJsonAndProto) {
  absl::StatusOr<LabelSelector> s = LabelSelector::Parse("b=2,a=1,k notin (y,x),e,!d,n!=v");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->ToJson().dump(),
            R"({"matchLabels":{"a":"1","b":"2"},"matchExpressions":[{"key":"k","operator":"NotIn","values":["y","x"]},)"
            R"({"key":"e","operator":"Exists"},{"key":"d","operator":"DoesNotExist"},)"
            R"({"key":"n","operator":"NotIn","values":["v"]}]})");
  absl::StatusOr<LabelSelector> back = LabelSelector::FromProto(s->ToProto(), "s");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToJson(), s->ToJson());
  EXPECT_EQ(LabelSelector().ToJson().dump(), "{}");
}

TEST(LabelSelectorTest, AddChecksTheRequirement) {
  LabelSelector s = LabelSelector::ForLabels(Proto({{"app", "x"}}).match_labels());
  EXPECT_EQ(s.Add({"rev", LabelOperator::kNotIn, {}}, "extra"),
            absl::InvalidArgumentError("extra.values: must be non-empty when operator is In or NotIn"));
  EXPECT_EQ(s.Add({"", LabelOperator::kExists, {}}, "extra"), absl::InvalidArgumentError("extra.key: must not be empty"));
  ASSERT_TRUE(s.Add({"rev", LabelOperator::kNotIn, {"r1"}}, "extra").ok());
  EXPECT_EQ(s.String(), "app=x,rev notin (r1)");
  EXPECT_TRUE(s.Matches(Labels{{"app", "x"}, {"rev", "r2"}}));
  EXPECT_FALSE(s.Matches(Labels{{"app", "x"}, {"rev", "r1"}}));
}

}  // namespace
}  // namespace cloneset::common
