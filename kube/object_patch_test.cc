#include "kube/object_patch.h"

#include <gtest/gtest.h>

namespace cloneset::kube {
namespace {

using nlohmann::json;

struct Case {
  std::string name, target, patch, want;
};

TEST(MergePatchTest, Rfc7386) {
  for (const auto& c : std::vector<Case>{
           {"replace", R"({"a":1,"b":2})", R"({"a":3})", R"({"a":3,"b":2})"},
           {"null deletes", R"({"a":1,"b":2})", R"({"a":null})", R"({"b":2})"},
           {"lists replaced", R"({"l":[1,2]})", R"({"l":[3]})", R"({"l":[3]})"},
           {"nested", R"({"m":{"x":1}})", R"({"m":{"y":2}})", R"({"m":{"x":1,"y":2}})"},
           {"label removal", R"({"metadata":{"labels":{"foo":"bar","a":"b"}}})",
            R"({"metadata":{"labels":{"foo":null}}})", R"({"metadata":{"labels":{"a":"b"}}})"}}) {
    EXPECT_EQ(ApplyMergePatch(json::parse(c.target), json::parse(c.patch)), json::parse(c.want)) << c.name;
  }
}

TEST(JsonPatchTest, Rfc6902) {
  json target = json::parse(R"({"spec":{"containers":[{"name":"a","image":"x:1"}]}})");
  auto r = ApplyJsonPatch(target, json::parse(R"([{"op":"replace","path":"/spec/containers/0/image","value":"x:2"},
      {"op":"add","path":"/spec/replicas","value":3},{"op":"test","path":"/spec/replicas","value":3}])"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, json::parse(R"({"spec":{"containers":[{"name":"a","image":"x:2"}],"replicas":3}})"));
  EXPECT_EQ(ApplyJsonPatch(target, json::parse(R"([{"op":"test","path":"/spec/x","value":1}])")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ApplyJsonPatch(target, json::parse(R"({"op":"add"})")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ApplyJsonPatch(target, json::parse(R"([{"path":"/a"}])")).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(StrategicMergePatchTest, WhatKubectlSends) {
  const std::vector<Case> cases = {
      {"pod image by container name",
       R"({"spec":{"containers":[{"name":"main","image":"busybox:1.36"},{"name":"side","image":"s:1"}]}})",
       R"({"spec":{"$setElementOrder/containers":[{"name":"main"},{"name":"side"}],"containers":[{"image":"busybox:1.37","name":"main"}]}})",
       R"({"spec":{"containers":[{"name":"main","image":"busybox:1.37"},{"name":"side","image":"s:1"}]}})"},
      {"service port replaced with $patch delete",
       R"({"spec":{"ports":[{"name":"http","port":80,"targetPort":8080,"protocol":"TCP"}]}})",
       R"({"spec":{"$setElementOrder/ports":[{"port":81}],"ports":[{"name":"http","port":81,"targetPort":8080},{"$patch":"delete","port":80}]}})",
       R"({"spec":{"ports":[{"name":"http","port":81,"targetPort":8080}]}})"},
      {"configmap data", R"({"data":{"A":"1","THREADS":"4"}})", R"({"data":{"THREADS":"8"}})",
       R"({"data":{"A":"1","THREADS":"8"}})"},
      {"env merged by name, null deletes",
       R"({"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"x":1})",
       R"({"env":[{"name":"B","value":"3"},{"name":"C","value":"4"}],"x":null})",
       R"({"env":[{"name":"A","value":"1"},{"name":"B","value":"3"},{"name":"C","value":"4"}]})"},
      {"conditions by type", R"({"conditions":[{"type":"Ready","status":"False"}]})",
       R"({"conditions":[{"type":"Ready","status":"True"}]})", R"({"conditions":[{"type":"Ready","status":"True"}]})"},
      {"finalizers as a set", R"({"finalizers":["a","b"]})", R"({"finalizers":["b","c"]})",
       R"({"finalizers":["a","b","c"]})"},
      {"deleteFromPrimitiveList", R"({"finalizers":["a","b"]})", R"({"$deleteFromPrimitiveList/finalizers":["a"]})",
       R"({"finalizers":["b"]})"},
      {"args replaced", R"({"args":["a","b"]})", R"({"args":["c"]})", R"({"args":["c"]})"},
      {"$patch replace on map", R"({"m":{"a":1,"b":2}})", R"({"m":{"$patch":"replace","c":3}})", R"({"m":{"c":3}})"},
      {"$patch delete on map", R"({"m":{"a":1},"n":1})", R"({"m":{"$patch":"delete"}})", R"({"n":1})"},
      {"$retainKeys", R"({"strategy":{"type":"RollingUpdate","rollingUpdate":{"x":1}}})",
       R"({"strategy":{"$retainKeys":["type"],"type":"Recreate"}})", R"({"strategy":{"type":"Recreate"}})"},
      {"container ports by containerPort",
       R"({"ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":81}]})",
       R"({"ports":[{"containerPort":80,"name":"web"}]})",
       R"({"ports":[{"containerPort":80,"protocol":"TCP","name":"web"},{"containerPort":81}]})"},
      // The chart's kinds: pod templates merge like pods, RBAC and NetworkPolicy lists are atomic.
      {"deployment template container by name",
       R"({"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"planner","image":"p:1","args":["--a"]},{"name":"side","image":"s:1"}]}}}})",
       R"({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"planner"},{"name":"side"}],"containers":[{"image":"p:2","name":"planner"}]}}}})",
       R"({"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"planner","image":"p:2","args":["--a"]},{"name":"side","image":"s:1"}]}}}})"},
      {"clusterrole rules replaced",
       R"({"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]},{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]})",
       R"({"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]})",
       R"({"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]})"},
      {"rolebinding subjects replaced",
       R"({"subjects":[{"kind":"ServiceAccount","name":"a","namespace":"x"},{"kind":"User","name":"u"}]})",
       R"({"subjects":[{"kind":"ServiceAccount","name":"b","namespace":"x"}]})",
       R"({"subjects":[{"kind":"ServiceAccount","name":"b","namespace":"x"}]})"},
      {"serviceaccount secrets by name", R"({"secrets":[{"name":"a"}]})", R"({"secrets":[{"name":"b"}]})",
       R"({"secrets":[{"name":"a"},{"name":"b"}]})"},
      {"networkpolicy ingress replaced with its ports",
       R"({"spec":{"ingress":[{"ports":[{"port":7070,"protocol":"TCP"}]},{"ports":[{"port":9090}]}]}})",
       R"({"spec":{"ingress":[{"ports":[{"port":7071,"protocol":"TCP"}]}]}})",
       R"({"spec":{"ingress":[{"ports":[{"port":7071,"protocol":"TCP"}]}]}})"},
  };
  for (const auto& c : cases) {
    auto r = ApplyStrategicMergePatch(json::parse(c.target), json::parse(c.patch));
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status();
    EXPECT_EQ(*r, json::parse(c.want)) << c.name << ": " << r->dump();
  }
}

// Fields tagged patchStrategy:"replace" in k8s.io/api are replaced for their kind only.
TEST(StrategicMergePatchTest, ReplaceStrategyFollowsTheKind) {
  struct KindCase {
    std::string name, kind, target, patch, want;
  };
  const std::string pdb = R"({"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"a","tier":"web"}}}})";
  for (const auto& c : std::vector<KindCase>{
           {"pdb selector replaced", "PodDisruptionBudget", pdb,
            R"({"spec":{"selector":{"matchLabels":{"app":"b"}}}})",
            R"({"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"b"}}}})"},
           {"pdb selector expressions replace labels", "PodDisruptionBudget", pdb,
            R"({"spec":{"selector":{"matchExpressions":[{"key":"app","operator":"Exists"}],"x":null}}})",
            R"({"spec":{"minAvailable":1,"selector":{"matchExpressions":[{"key":"app","operator":"Exists"}]}}})"},
           {"pdb other fields still merge", "PodDisruptionBudget", pdb, R"({"spec":{"minAvailable":2}})",
            R"({"spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"a","tier":"web"}}}})"},
           {"pdb selector null deletes", "PodDisruptionBudget", pdb, R"({"spec":{"selector":null}})",
            R"({"spec":{"minAvailable":1}})"},
           {"deployment selector merges", "Deployment", pdb, R"({"spec":{"selector":{"matchLabels":{"app":"b"}}}})",
            R"({"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"b","tier":"web"}}}})"},
           {"no kind merges", "", pdb, R"({"spec":{"selector":{"matchLabels":{"app":"b"}}}})",
            R"({"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"b","tier":"web"}}}})"},
       }) {
    auto r = ApplyStrategicMergePatch(json::parse(c.target), json::parse(c.patch), c.kind);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status();
    EXPECT_EQ(*r, json::parse(c.want)) << c.name << ": " << r->dump();
  }
}

TEST(StrategicMergePatchTest, MalformedPatches) {
  for (const char* bad : {R"([1])", R"({"$patch":"explode"})", R"({"$unknown":1})", R"({"$patch":"delete"})",
                          R"({"containers":[1]})", R"({"$retainKeys":"x"})"}) {
    EXPECT_EQ(ApplyStrategicMergePatch(json::parse(R"({"containers":[]})"), json::parse(bad)).status().code(),
              absl::StatusCode::kFailedPrecondition)
        << bad;
  }
}

}  // namespace
}  // namespace cloneset::kube
