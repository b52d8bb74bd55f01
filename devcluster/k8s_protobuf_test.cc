#include "devcluster/k8s_protobuf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "devcluster/k8s/k8s_objects.pb.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The envelope as client-go writes it: magic, runtime.Unknown with empty contentEncoding/contentType.
std::string Envelope(const std::string& api_version, const std::string& kind, const std::string& raw,
                     const std::string& encoding = "") {
  k8s::Unknown u;
  u.mutable_typemeta()->set_apiversion(api_version);
  u.mutable_typemeta()->set_kind(kind);
  u.set_raw(raw);
  u.set_contentencoding(encoding);
  u.set_contenttype("");
  return std::string("k8s\0", 4) + u.SerializeAsString();
}

// ObjectMeta the way gogo-protobuf writes a Go struct: every non-pointer field, zero or not.
void KubectlMeta(k8s::ObjectMeta* m, const std::string& name) {
  m->set_name(name);
  m->set_generatename("");
  m->set_namespace_("");
  m->set_selflink("");
  m->set_uid("");
  m->set_resourceversion("");
  m->set_generation(0);
  m->mutable_creationtimestamp();
}

struct DecodeCase {
  std::string name;
  std::string body;
  std::string want;  // JSON
};

std::vector<DecodeCase> DecodeCases() {
  std::vector<DecodeCase> cases;
  {
    k8s::Namespace ns;  // kubectl create namespace ns1
    KubectlMeta(ns.mutable_metadata(), "ns1");
    ns.mutable_spec();
    ns.mutable_status()->set_phase("");
    cases.push_back({"Namespace", Envelope("v1", "Namespace", ns.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns1"},"spec":{},"status":{}})"});
  }
  {
    k8s::ConfigMap cm;  // kubectl create configmap cm1 --from-literal=a=b --from-literal=c=
    KubectlMeta(cm.mutable_metadata(), "cm1");
    (*cm.mutable_data())["a"] = "b";
    (*cm.mutable_data())["c"] = "";
    (*cm.mutable_binarydata())["bin"] = std::string("\x00\xff\x10", 3);
    cm.set_immutable(false);  // a Go pointer: an explicit false stays
    (*cm.mutable_metadata()->mutable_labels())["app"] = "web";
    (*cm.mutable_metadata()->mutable_labels())["empty"] = "";
    (*cm.mutable_metadata()->mutable_annotations())["note"] = "h\xc3\xa9";
    cases.push_back({"ConfigMap", Envelope("v1", "ConfigMap", cm.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"ConfigMap",
                         "metadata":{"name":"cm1","labels":{"app":"web","empty":""},"annotations":{"note":"hé"}},
                         "data":{"a":"b","c":""},"binaryData":{"bin":"AP8Q"},"immutable":false})"});
  }
  {
    k8s::Secret s;  // kubectl create secret generic s1 --from-literal=a=b
    KubectlMeta(s.mutable_metadata(), "s1");
    (*s.mutable_data())["a"] = "b";
    (*s.mutable_data())["key"] = "hello world";
    s.set_type("");
    cases.push_back({"SecretAsKubectlSendsIt", Envelope("v1", "Secret", s.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},
                         "data":{"a":"Yg==","key":"aGVsbG8gd29ybGQ="}})"});
    s.set_type("kubernetes.io/basic-auth");
    (*s.mutable_stringdata())["username"] = "admin";
    s.set_immutable(true);
    cases.push_back({"SecretAllFields", Envelope("v1", "Secret", s.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},
                         "data":{"a":"Yg==","key":"aGVsbG8gd29ybGQ="},"type":"kubernetes.io/basic-auth",
                         "stringData":{"username":"admin"},"immutable":true})"});
  }
  {
    k8s::ServiceAccount sa;
    KubectlMeta(sa.mutable_metadata(), "sa1");
    cases.push_back({"ServiceAccountAsKubectlSendsIt", Envelope("v1", "ServiceAccount", sa.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa1"}})"});
    auto* ref = sa.add_secrets();
    ref->set_name("token");
    ref->set_kind("Secret");
    ref->set_namespace_("");
    sa.add_imagepullsecrets()->set_name("registry");
    sa.set_automountserviceaccounttoken(false);
    cases.push_back({"ServiceAccountAllFields", Envelope("v1", "ServiceAccount", sa.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa1"},
                         "secrets":[{"kind":"Secret","name":"token"}],"imagePullSecrets":[{"name":"registry"}],
                         "automountServiceAccountToken":false})"});
  }
  {
    k8s::ConfigMap cm;  // every ObjectMeta field the decoder knows
    auto* m = cm.mutable_metadata();
    KubectlMeta(m, "");
    m->set_generatename("gen-");
    m->set_namespace_("team-a");
    m->set_uid("0b5e1b5c-1111-2222-3333-444455556666");
    m->set_resourceversion("42");
    m->set_generation(3);
    m->mutable_creationtimestamp()->set_seconds(1700000000);
    m->mutable_creationtimestamp()->set_nanos(999);  // JSON keeps whole seconds, like metav1.Time
    m->mutable_deletiontimestamp()->set_seconds(0);  // present: the epoch, not null
    m->set_deletiongraceperiodseconds(0);
    auto* owner = m->add_ownerreferences();
    owner->set_apiversion("apps.kruise.io/v1alpha1");
    owner->set_kind("CloneSet");
    owner->set_name("web");
    owner->set_uid("u1");
    owner->set_controller(true);
    owner->set_blockownerdeletion(false);
    m->add_finalizers("example.com/keep");
    m->add_finalizers("");
    cases.push_back({"ObjectMetaAllFields", Envelope("v1", "ConfigMap", cm.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{
                         "generateName":"gen-","namespace":"team-a","uid":"0b5e1b5c-1111-2222-3333-444455556666",
                         "resourceVersion":"42","generation":3,"creationTimestamp":"2023-11-14T22:13:20Z",
                         "deletionTimestamp":"1970-01-01T00:00:00Z","deletionGracePeriodSeconds":0,
                         "ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"web",
                                             "uid":"u1","controller":true,"blockOwnerDeletion":false}],
                         "finalizers":["example.com/keep",""]}})"});
  }
  {
    k8s::Deployment d;  // kubectl create deployment d1 --image=nginx --port=80 --replicas=0, plus a strategy
    KubectlMeta(d.mutable_metadata(), "d1");
    (*d.mutable_metadata()->mutable_labels())["app"] = "d1";
    auto* spec = d.mutable_spec();
    spec->set_replicas(0);
    (*spec->mutable_selector()->mutable_matchlabels())["app"] = "d1";
    KubectlMeta(spec->mutable_template_()->mutable_metadata(), "");
    (*spec->mutable_template_()->mutable_metadata()->mutable_labels())["app"] = "d1";
    auto* pod = spec->mutable_template_()->mutable_spec();
    auto* c = pod->add_containers();
    c->set_name("nginx");
    c->set_image("nginx");
    c->set_workingdir("");
    auto* port = c->add_ports();
    port->set_name("");
    port->set_hostport(0);
    port->set_containerport(80);
    port->set_protocol("");
    c->mutable_resources();
    (*c->mutable_resources()->mutable_limits())["cpu"].set_value("500m");
    c->set_stdin(false);
    pod->set_restartpolicy("");
    pod->set_hostnetwork(false);
    auto* ru = spec->mutable_strategy()->mutable_rollingupdate();
    ru->mutable_maxsurge()->set_type(1);
    ru->mutable_maxsurge()->set_strval("25%");
    ru->mutable_maxunavailable()->set_type(0);
    ru->mutable_maxunavailable()->set_intval(1);
    spec->set_minreadyseconds(0);
    spec->set_paused(false);
    d.mutable_status()->set_replicas(0);
    cases.push_back({"Deployment", Envelope("apps/v1", "Deployment", d.SerializeAsString()),
                     R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d1","labels":{"app":"d1"}},
                         "spec":{"replicas":0,"selector":{"matchLabels":{"app":"d1"}},
                           "template":{"metadata":{"labels":{"app":"d1"}},
                             "spec":{"containers":[{"name":"nginx","image":"nginx","ports":[{"containerPort":80}],
                                                    "resources":{"limits":{"cpu":"500m"}}}]}},
                           "strategy":{"rollingUpdate":{"maxUnavailable":1,"maxSurge":"25%"}}},
                         "status":{}})"});
  }
  {
    // The exact bytes kubectl 1.33 sent for `create secret generic s1 --from-literal=a=b` (from -v=9).
    const unsigned char kubectl[] = {
        0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0c, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x06, 0x53, 0x65, 0x63, 0x72, 0x65, 0x74,
        0x12, 0x1e, 0x0a, 0x12, 0x0a, 0x02, 0x73, 0x31, 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00,
        0x38, 0x00, 0x42, 0x00, 0x12, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, 0x1a, 0x00, 0x1a, 0x00, 0x22, 0x00};
    cases.push_back({"SecretBytesFromKubectl", std::string(reinterpret_cast<const char*>(kubectl), sizeof kubectl),
                     R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},"data":{"a":"Yg=="}})"});
  }
  {
    k8s::Service svc;  // kubectl create service nodeport svc1 --tcp=80:8080
    KubectlMeta(svc.mutable_metadata(), "svc1");
    auto* spec = svc.mutable_spec();
    auto* port = spec->add_ports();
    port->set_name("80-8080");
    port->set_protocol("TCP");
    port->set_port(80);
    port->mutable_targetport()->set_type(0);
    port->mutable_targetport()->set_intval(8080);
    port->mutable_targetport()->set_strval("");
    port->set_nodeport(0);
    (*spec->mutable_selector())["app"] = "svc1";
    spec->set_clusterip("");
    spec->set_type("NodePort");
    spec->set_healthchecknodeport(0);
    spec->set_internaltrafficpolicy("");  // a Go *string: explicit "" stays
    svc.mutable_status()->mutable_loadbalancer();
    cases.push_back({"Service", Envelope("v1", "Service", svc.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"svc1"},
                         "spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080}],
                                 "selector":{"app":"svc1"},"type":"NodePort","internalTrafficPolicy":""},
                         "status":{"loadBalancer":{}}})"});
  }
  {
    k8s::PodDisruptionBudget pdb;  // kubectl create pdb pdb1 --selector=app=a --min-available=50%
    KubectlMeta(pdb.mutable_metadata(), "pdb1");
    pdb.mutable_spec()->mutable_minavailable()->set_type(1);
    pdb.mutable_spec()->mutable_minavailable()->set_intval(0);
    pdb.mutable_spec()->mutable_minavailable()->set_strval("50%");
    (*pdb.mutable_spec()->mutable_selector()->mutable_matchlabels())["app"] = "a";
    auto* expr = pdb.mutable_spec()->mutable_selector()->add_matchexpressions();
    expr->set_key("tier");
    expr->set_operator_("In");
    expr->add_values("web");
    pdb.mutable_status()->set_observedgeneration(0);
    cases.push_back({"PodDisruptionBudget", Envelope("policy/v1", "PodDisruptionBudget", pdb.SerializeAsString()),
                     R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"pdb1"},
                         "spec":{"minAvailable":"50%","selector":{"matchLabels":{"app":"a"},
                           "matchExpressions":[{"key":"tier","operator":"In","values":["web"]}]}},"status":{}})"});
  }
  {
    k8s::Role role;  // kubectl create role r1 --verb=get --resource=pods --resource-name=x
    KubectlMeta(role.mutable_metadata(), "r1");
    auto* rule = role.add_rules();
    rule->add_verbs("get");
    rule->add_apigroups("");  // the core group: an empty string that must stay in the list
    rule->add_resources("pods");
    rule->add_resourcenames("x");
    cases.push_back({"Role", Envelope("rbac.authorization.k8s.io/v1", "Role", role.SerializeAsString()),
                     R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r1"},
                         "rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"],"resourceNames":["x"]}]})"});
  }
  {
    k8s::RoleBinding rb;  // kubectl create rolebinding rb1 --role=r1 --user=u1 --serviceaccount=default:sa1
    KubectlMeta(rb.mutable_metadata(), "rb1");
    auto* user = rb.add_subjects();
    user->set_kind("User");
    user->set_apigroup("rbac.authorization.k8s.io");
    user->set_name("u1");
    user->set_namespace_("");
    auto* sa = rb.add_subjects();
    sa->set_kind("ServiceAccount");
    sa->set_apigroup("");
    sa->set_name("sa1");
    sa->set_namespace_("default");
    rb.mutable_roleref()->set_apigroup("rbac.authorization.k8s.io");
    rb.mutable_roleref()->set_kind("Role");
    rb.mutable_roleref()->set_name("r1");
    cases.push_back({"RoleBinding", Envelope("rbac.authorization.k8s.io/v1", "RoleBinding", rb.SerializeAsString()),
                     R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb1"},
                         "subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"u1"},
                                     {"kind":"ServiceAccount","name":"sa1","namespace":"default"}],
                         "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r1"}})"});
  }
  {
    k8s::ConfigMap cm;  // unmodelled fields holding zero values carry nothing and are skipped
    KubectlMeta(cm.mutable_metadata(), "cm1");
    cm.GetReflection()->MutableUnknownFields(&cm)->AddVarint(99, 0);
    cm.GetReflection()->MutableUnknownFields(&cm)->AddLengthDelimited(98, "");
    cases.push_back({"ZeroUnknownFieldsSkipped", Envelope("v1", "ConfigMap", cm.SerializeAsString()),
                     R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1"}})"});
  }
  return cases;
}

TEST(K8sProtobufTest, DecodesToKubernetesJson) {
  for (const auto& c : DecodeCases()) {
    SCOPED_TRACE(c.name);
    auto got = DecodeKubernetesProtobuf(c.body);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, json::parse(c.want)) << got->dump();
  }
}

struct ErrorCase {
  std::string name;
  std::string body;
  absl::StatusCode code;
  std::string message;  // substring
};

std::vector<ErrorCase> ErrorCases() {
  std::vector<ErrorCase> cases;
  k8s::ConfigMap cm;
  KubectlMeta(cm.mutable_metadata(), "cm1");
  const std::string good = cm.SerializeAsString();
  cases.push_back({"NoMagic", "{\"kind\":\"ConfigMap\"}", absl::StatusCode::kInvalidArgument,
                   "does not start with the 4-byte \"k8s\\0\" prefix"});
  cases.push_back({"Empty", "", absl::StatusCode::kInvalidArgument, "prefix"});
  std::string truncated = Envelope("v1", "ConfigMap", good);
  truncated.resize(truncated.size() - 3);
  cases.push_back({"TruncatedEnvelope", truncated, absl::StatusCode::kInvalidArgument,
                   "the runtime.Unknown envelope is not a valid protobuf message"});
  cases.push_back({"NoTypeMeta", std::string("k8s\0", 4), absl::StatusCode::kInvalidArgument,
                   "typeMeta.apiVersion and typeMeta.kind are required"});
  cases.push_back({"UnsupportedKind", Envelope("v1", "Pod", good), absl::StatusCode::kUnimplemented,
                   "protobuf bodies are decoded for v1 ConfigMap, v1 Namespace, v1 Secret, v1 ServiceAccount, "
                   "v1 Service, apps/v1 Deployment, policy/v1 PodDisruptionBudget, rbac.authorization.k8s.io/v1 Role, "
                   "rbac.authorization.k8s.io/v1 ClusterRole, rbac.authorization.k8s.io/v1 RoleBinding, "
                   "rbac.authorization.k8s.io/v1 ClusterRoleBinding only, not for v1 Pod; send the object as "
                   "application/json"});
  cases.push_back({"WrongVersion", Envelope("v2", "ConfigMap", good), absl::StatusCode::kUnimplemented,
                   "not for v2 ConfigMap"});
  cases.push_back({"Gzip", Envelope("v1", "ConfigMap", good, "gzip"), absl::StatusCode::kUnimplemented,
                   "contentEncoding \"gzip\" is not supported"});
  cases.push_back({"GarbageRaw", Envelope("v1", "ConfigMap", "\x0a\x7f\x01"), absl::StatusCode::kInvalidArgument,
                   "raw is not a valid v1 ConfigMap message"});
  {
    k8s::ConfigMap bad = cm;
    (*bad.mutable_metadata()->mutable_labels())["a"] = "\xff\xfe";
    cases.push_back({"InvalidUtf8Label", Envelope("v1", "ConfigMap", bad.SerializeAsString()),
                     absl::StatusCode::kInvalidArgument, "metadata.labels[\"a\"]: string is not valid UTF-8"});
  }
  {
    k8s::Secret bad;
    KubectlMeta(bad.mutable_metadata(), "s");
    (*bad.mutable_data())["\xc3"] = "x";
    cases.push_back({"InvalidUtf8MapKey", Envelope("v1", "Secret", bad.SerializeAsString()),
                     absl::StatusCode::kInvalidArgument, "data: map key is not valid UTF-8"});
  }
  {
    k8s::ConfigMap bad = cm;  // managedFields (17) is not modelled
    bad.mutable_metadata()->GetReflection()->MutableUnknownFields(bad.mutable_metadata())->AddLengthDelimited(17, "x");
    cases.push_back({"NonZeroUnknownField", Envelope("v1", "ConfigMap", bad.SerializeAsString()),
                     absl::StatusCode::kUnimplemented,
                     "field number 17 of ObjectMeta at metadata is not decoded by this server"});
  }
  {
    k8s::ConfigMap bad = cm;
    bad.mutable_metadata()->mutable_creationtimestamp()->set_seconds(253402300800);  // year 10000
    cases.push_back({"TimeOutOfRange", Envelope("v1", "ConfigMap", bad.SerializeAsString()),
                     absl::StatusCode::kInvalidArgument, "metadata.creationTimestamp: time 253402300800 s"});
  }
  {
    k8s::Deployment bad;
    KubectlMeta(bad.mutable_metadata(), "d");
    bad.mutable_spec()->mutable_strategy()->mutable_rollingupdate()->mutable_maxsurge()->set_type(2);
    cases.push_back({"BadIntOrString", Envelope("apps/v1", "Deployment", bad.SerializeAsString()),
                     absl::StatusCode::kInvalidArgument,
                     "spec.strategy.rollingUpdate.maxSurge: IntOrString type 2 is neither 0 (int) nor 1 (string)"});
  }
  return cases;
}

TEST(K8sProtobufTest, RejectsBadBodiesNamingWhatFailed) {
  for (const auto& c : ErrorCases()) {
    SCOPED_TRACE(c.name);
    auto got = DecodeKubernetesProtobuf(c.body);
    ASSERT_FALSE(got.ok()) << got->dump();
    EXPECT_EQ(got.status().code(), c.code) << got.status();
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.message));
  }
}

TEST(K8sProtobufTest, ListsTheDecodableKinds) {
  std::vector<std::pair<std::string, std::string>> want = {{"v1", "ConfigMap"},
                                                           {"v1", "Namespace"},
                                                           {"v1", "Secret"},
                                                           {"v1", "ServiceAccount"},
                                                           {"v1", "Service"},
                                                           {"apps/v1", "Deployment"},
                                                           {"policy/v1", "PodDisruptionBudget"},
                                                           {"rbac.authorization.k8s.io/v1", "Role"},
                                                           {"rbac.authorization.k8s.io/v1", "ClusterRole"},
                                                           {"rbac.authorization.k8s.io/v1", "RoleBinding"},
                                                           {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding"}};
  EXPECT_EQ(ProtobufDecodableKinds(), want);
}

}  // namespace
}  // namespace cloneset::devcluster
