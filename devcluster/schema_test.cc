#include "devcluster/schema.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "devcluster/codec.h"
#include "devcluster/resources.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

// The CloneSet CRD the Helm chart installs, as served in `version`: the schema the embedded cluster must enforce as
// a real one does.
ResourceType ChartCloneSetType(const std::string& version = "v1alpha1") {
  std::ifstream in(CLONESET_CHART_CRD);
  std::stringstream text;
  text << in.rdbuf();
  auto crd = ParseYaml(text.str());
  EXPECT_TRUE(crd.ok()) << crd.status();
  auto type = ResourceTypeFromCrd(*crd);
  EXPECT_TRUE(type.ok()) << type.status();
  std::optional<ResourceType> served = type->InVersion(version);
  EXPECT_TRUE(served) << version;
  return *served;
}

json ValidCloneSet() {
  return json::parse(R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","metadata":{"name":"x","namespace":"default"},
    "spec":{"replicas":2,"selector":{"matchLabels":{"app":"x"}},
      "template":{"metadata":{"labels":{"app":"x"}},"spec":{"containers":[{"name":"main","image":"nginx:1"}]}}}})");
}

TEST(SchemaTest, EveryChartRuleIsEvaluated) {
  for (const char* version : {"v1alpha1", "v1beta1"}) {
    ResourceType t = ChartCloneSetType(version);
    ASSERT_TRUE(t.schema) << version;
    EXPECT_TRUE(t.schema->not_evaluated.empty()) << version << ": " << t.schema->not_evaluated.begin()->first;
    EXPECT_GE(t.schema->rules.size(), 10u) << version;
  }
}

TEST(SchemaTest, DefaultsAndPrunesLikeTheApiServer) {
  ResourceType t = ChartCloneSetType();
  json cs = ValidCloneSet();
  cs["spec"].erase("replicas");
  cs["spec"]["replicaz"] = 3;
  cs["spec"]["template"]["spec"]["hostNetwork"] = true;  // preserved: the template keeps unknown fields
  cs["status"] = {{"replicas", 1}, {"bogus", 1}};
  cs["metadata"]["lables"] = {{"a", "b"}};           // not an ObjectMeta field
  cs["spec"]["minReadySeconds"] = nullptr;            // null where the schema does not allow it: dropped
  std::vector<std::string> unknown = PruneAndDefault(*t.schema, cs);
  EXPECT_EQ(unknown, (std::vector<std::string>{"metadata.lables", "spec.replicaz", "status.bogus"}));
  EXPECT_FALSE(cs["spec"].contains("minReadySeconds"));
  EXPECT_EQ(cs["metadata"]["name"], "x");
  EXPECT_EQ(cs["spec"]["replicas"], 1);
  EXPECT_EQ(cs["spec"]["revisionHistoryLimit"], 10);
  EXPECT_EQ(cs["spec"]["scaleStrategy"], json::object());
  EXPECT_EQ(cs["spec"]["updateStrategy"],
            json({{"type", "ReCreate"}, {"partition", 0}, {"maxUnavailable", "20%"}, {"maxSurge", 0}}));
  EXPECT_TRUE(cs["spec"]["template"]["spec"]["hostNetwork"]);
  EXPECT_TRUE(ValidateAgainstSchema(*t.schema, cs, nullptr).empty());
}

bool IsBlockingReason(const std::string& r) {
  return r == "FieldValueTypeInvalid" || r == "FieldValueNotSupported" || r == "FieldValueRequired";
}

TEST(SchemaTest, RejectsWhatTheCrdForbids) {
  ResourceType t = ChartCloneSetType();
  struct Case {
    std::string name;
    std::function<void(json&)> edit;
    std::string field, reason, message;
    size_t count = 1;  // the first error is checked; a blocking one is followed by the "rules not checked" note
  };
  const std::vector<Case> cases = {
      {"negative replicas", [](json& o) { o["spec"]["replicas"] = -1; }, "spec.replicas", "FieldValueInvalid",
       "Invalid value: -1: spec.replicas in body should be greater than or equal to 0"},
      {"replicas of the wrong type", [](json& o) { o["spec"]["replicas"] = "three"; }, "spec.replicas",
       "FieldValueTypeInvalid", R"(Invalid value: "string": spec.replicas in body must be of type integer: "string")",
       2},
      {"partition not a number or percentage", [](json& o) { o["spec"]["updateStrategy"]["partition"] = "abc"; },
       "spec.updateStrategy.partition", "FieldValueInvalid",
       R"(Invalid value: "abc": spec.updateStrategy.partition in body should match '^[0-9]+(\.[0-9]+)?%$')", 2},
      {"unknown strategy type", [](json& o) { o["spec"]["updateStrategy"]["type"] = "Rolling"; },
       "spec.updateStrategy.type", "FieldValueNotSupported",
       R"(Unsupported value: "Rolling": supported values: "ReCreate", "InPlaceIfPossible", "InPlaceOnly", "OnDelete")", 2},
      {"template required", [](json& o) { o["spec"].erase("template"); }, "spec.template", "FieldValueRequired",
       "Required value", 2},
      {"container name pattern", [](json& o) { o["spec"]["template"]["spec"]["containers"][0]["name"] = "Main_1"; },
       "spec.template.spec.containers[0].name", "FieldValueInvalid",
       R"(Invalid value: "Main_1": spec.template.spec.containers[0].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')"},
      {"weight above maximum",
       [](json& o) {
         o["spec"]["updateStrategy"]["priorityStrategy"] = {
             {"weightPriority", {{{"weight", 101}, {"matchSelector", {{"matchLabels", {{"a", "b"}}}}}}}}};
       },
       "spec.updateStrategy.priorityStrategy.weightPriority[0].weight", "FieldValueInvalid",
       "Invalid value: 101: spec.updateStrategy.priorityStrategy.weightPriority[0].weight in body should be less "
       "than or equal to 100"},
      {"selector does not match the template (CEL)",
       [](json& o) { o["spec"]["template"]["metadata"]["labels"]["app"] = "y"; }, "spec", "FieldValueInvalid",
       R"(Invalid value: "object": `selector` does not match template `labels`)"},
      {"maxSurge with InPlaceOnly (CEL)",
       [](json& o) { o["spec"]["updateStrategy"] = {{"type", "InPlaceOnly"}, {"maxSurge", 1}}; },
       "spec.updateStrategy", "FieldValueInvalid",
       R"(Invalid value: "object": can not use maxSurge with strategy type InPlaceOnly)"},
      {"duplicate claim templates (CEL)",
       [](json& o) {
         o["spec"]["volumeClaimTemplates"] = {{{"metadata", {{"name", "data"}}}}, {{"metadata", {{"name", "data"}}}}};
       },
       "spec.volumeClaimTemplates", "FieldValueInvalid",
       R"(Invalid value: "array": volumeClaimTemplates names must be unique)"},
      {"activeDeadlineSeconds (CEL)",
       [](json& o) { o["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 5; }, "spec.template.spec",
       "FieldValueInvalid", R"(Invalid value: "object": activeDeadlineSeconds in cloneset template must be nil)"},
      {"condition time not a date-time",
       [](json& o) { o["status"] = {{"conditions", {{{"type", "Progressing"}, {"status", "True"},
                                                     {"lastUpdateTime", "yesterday"}}}}}; },
       "status.conditions[0].lastUpdateTime", "FieldValueTypeInvalid",
       R"(Invalid value: "yesterday": status.conditions[0].lastUpdateTime in body must be of type date-time: "yesterday")",
       2},
      {"duplicate podsToDelete (list-type set)",
       [](json& o) { o["spec"]["scaleStrategy"]["podsToDelete"] = {"a", "a"}; },
       "spec.scaleStrategy.podsToDelete[1]", "FieldValueDuplicate", R"(Duplicate value: "a")"},
  };
  for (const auto& c : cases) {
    json cs = ValidCloneSet();
    c.edit(cs);
    PruneAndDefault(*t.schema, cs);
    std::vector<FieldError> errors = ValidateAgainstSchema(*t.schema, cs, nullptr);
    ASSERT_EQ(errors.size(), c.count) << c.name << ": " << (errors.empty() ? "" : errors[0].message + " / " + errors.back().message);
    EXPECT_EQ(errors[0].field, c.field) << c.name;
    EXPECT_EQ(errors[0].reason, c.reason) << c.name;
    EXPECT_EQ(errors[0].message, c.message) << c.name;
    if (c.count == 2 && IsBlockingReason(c.reason)) {
      EXPECT_EQ(errors[1].field, "<nil>") << c.name;
    }
  }
}

TEST(SchemaTest, TransitionRulesAndRatcheting) {
  ResourceType t = ChartCloneSetType();
  json old = ValidCloneSet();
  PruneAndDefault(*t.schema, old);
  json changed = old;
  changed["spec"]["selector"]["matchLabels"]["tier"] = "web";
  changed["spec"]["template"]["metadata"]["labels"]["tier"] = "web";
  std::vector<FieldError> errors = ValidateAgainstSchema(*t.schema, changed, &old);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].field, "spec.selector");
  EXPECT_EQ(errors[0].message, R"(Invalid value: "object": selector is immutable)");
  // The same change on a create is fine: there is no old selector.
  EXPECT_TRUE(ValidateAgainstSchema(*t.schema, changed, nullptr).empty());
  // An invalid value stored before is not re-validated while it is unchanged (validation ratcheting).
  json stored = old;
  stored["spec"]["minReadySeconds"] = -5;
  json update = stored;
  update["spec"]["replicas"] = 4;
  EXPECT_TRUE(ValidateAgainstSchema(*t.schema, update, &stored).empty());
  EXPECT_EQ(ValidateAgainstSchema(*t.schema, update, nullptr).size(), 1u);
}

TEST(SchemaTest, SeveralErrorsBecomeOneStatusWithCauses) {
  absl::Status s = FieldErrorsStatus({{"FieldValueRequired", "spec.a", "Required value"},
                                      {"FieldValueInvalid", "spec.b", "Invalid value: 1: bad"}});
  EXPECT_EQ(s.message(), "[spec.a: Required value, spec.b: Invalid value: 1: bad]");
  auto payload = s.GetPayload(kFieldCausesPayload);
  ASSERT_TRUE(payload);
  EXPECT_EQ(json::parse(std::string(*payload)).size(), 2u);
}

}  // namespace
}  // namespace cloneset::devcluster
