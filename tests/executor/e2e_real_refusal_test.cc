// Refusals that last which only kube-apiserver makes (the embedded cluster has no PodSecurity admission, no
// ValidatingAdmissionPolicy and no RBAC): pods refused because the namespace enforces PodSecurity `restricted`,
// because a ValidatingAdmissionPolicy denies them, and because the executor's ClusterRole lost `create` on pods.
// Each costs a bounded number of requests while it lasts, is reported once on the CloneSet (ApplyFailed and
// FailedScale with kube-apiserver's words, one FailedCreate and one ApplyFailed event) and the CloneSet recovers
// within the back-off once the cause is gone (docs/reliability.md, "Refusals that last").
//
// Registered for the real control plane only (cloneset_e2e_real_only, tests/support/CMakeLists.txt): run on the
// embedded backend the suite fails at once saying so.
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "refusal_fixture.h"

namespace cloneset::testing {
namespace {

class RealRefusalTest : public RefusalFixture {
 protected:
  void SetUp() override {
    RefusalFixture::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(cluster_->stack().real())
        << "this suite needs kube-apiserver (CLONESET_E2E_BACKEND=real): the embedded cluster has no PodSecurity, "
           "ValidatingAdmissionPolicy or RBAC; ctest registers it only as real.executor_e2e_real_refusal_test";
  }

  void TearDown() override {
    RefusalFixture::TearDown();
    if (restricted_executor_) {
      EXPECT_EQ(cluster_->RestartExecutor(""), "") << "the executor back with the chart's identity";
    }
    // Cluster-wide objects a test made; the namespace takes the rest with it.
    for (const std::vector<std::string>& what : cleanup_) {
      std::vector<std::string> args = {"delete", "--ignore-not-found", "--wait=false"};
      args.insert(args.end(), what.begin(), what.end());
      Kubectl(args);
    }
  }

  // A pod like the CloneSet's (container main, `image`) created with --dry-run=server until kube-apiserver refuses
  // it with `words`: admission reads namespaces, policies and bindings from caches, so a change takes effect a
  // moment after it was written, and a pod the CloneSet made before would not meet the refusal.
  bool WaitUntilAdmissionRefuses(const std::string& image, const std::string& words) {
    const std::string pod = absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata:\n  name: probe\nspec:\n  containers:\n",
                                         "  - name: main\n    image: ", image, "\n");
    std::string last;
    const bool refused = Eventually([&] {
      const CommandResult r = Kubectl({"create", "--dry-run=server", "-n", ns_, "-f", "-"}, pod);
      last = r.output;
      return r.exit_code != 0 && r.output.find(words) != std::string::npos;
    }, absl::Seconds(30));
    if (!refused) std::cerr << "the probe pod was not refused with \"" << words << "\": " << last << "\n";
    return refused;
  }

  // The part every case shares once the cause is in place: the CloneSet `app` of `replicas` pods meets the refusal,
  // reports it once with `words` in the message of ApplyFailed (reason `condition_reason`) and FailedScale, costs
  // no more than the bound over 20 s (refused creates counted under `cause`), and recovers after `remove_cause`.
  void ExpectRefusalThenRecovery(const Window& baseline, const std::string& app, int replicas,
                                 const std::string& image, const std::string& condition_reason,
                                 const std::string& cause, const std::string& words,
                                 const std::function<void()>& remove_cause) {
    ASSERT_TRUE(Eventually([&] {
      const json* c = Condition(CloneSet(app), "ApplyFailed");
      return c != nullptr && c->value("message", "").find(words) != std::string::npos;
    })) << Describe(app);
    EXPECT_EQ(Pods(app).size(), 0u);
    const json cs = CloneSet(app);
    const json* applied = Condition(cs, "ApplyFailed");
    ASSERT_NE(applied, nullptr);
    std::cerr << "ApplyFailed: " << applied->dump() << "\n";
    EXPECT_EQ(applied->value("reason", ""), condition_reason) << applied->dump();
    const json* failed_scale = Condition(cs, "FailedScale");
    ASSERT_NE(failed_scale, nullptr) << cs.dump();
    EXPECT_EQ(failed_scale->value("reason", ""), "FailedCreate");
    EXPECT_NE(failed_scale->value("message", "").find(words), std::string::npos) << failed_scale->dump();

    WaitForCappedBackoff();
    ExpectBounded(baseline, Measure(cause, absl::Seconds(20)));
    EXPECT_EQ(EventsWithReason("FailedCreate"), 1) << Kubectl({"get", "events", "-n", ns_}).output;
    EXPECT_EQ(EventsWithReason("ApplyFailed"), 1) << Kubectl({"get", "events", "-n", ns_}).output;

    remove_cause();
    if (HasFatalFailure()) return;
    const absl::Time fixed = absl::Now();
    ASSERT_TRUE(Eventually([&] { return AllReady(app, replicas, image); }, absl::Seconds(30))) << Describe(app);
    std::cerr << "recovered in " << absl::FormatDuration(absl::Now() - fixed) << "\n";
    EXPECT_TRUE(Eventually([&] {
      const json now = CloneSet(app);
      return Condition(now, "ApplyFailed") == nullptr && Condition(now, "FailedScale") == nullptr;
    }, absl::Seconds(20))) << CloneSet(app).dump();
  }

  std::vector<std::vector<std::string>> cleanup_;  // what TearDown deletes: kubectl delete <args>
  bool restricted_executor_ = false;               // the executor runs with a copied, restricted identity
};

// The namespace enforces PodSecurity `restricted` and the template sets no securityContext (so neither
// runAsNonRoot, nor allowPrivilegeEscalation=false, nor dropped capabilities): kube-apiserver refuses every pod with 403 `violates PodSecurity "restricted:latest": ...`. Relaxing the namespace
// to `baseline` (which the template meets) lets the pods in within the back-off.
TEST_F(RealRefusalTest, PodSecurityRestricted) {
  const std::string kWords = "violates PodSecurity \"restricted:latest\"";
  MustKubectl({"label", "namespace", ns_, "pod-security.kubernetes.io/enforce=restricted"});
  ASSERT_TRUE(WaitUntilAdmissionRefuses("img:v1", kWords));
  const Window baseline = Measure("", absl::Seconds(10));
  Apply(CloneSetYaml("restricted", 2, "img:v1"));
  ExpectRefusalThenRecovery(baseline, "restricted", 2, "img:v1", "Forbidden", "PodSecurity", kWords, [&] {
    MustKubectl({"label", "--overwrite", "namespace", ns_, "pod-security.kubernetes.io/enforce=baseline"});
  });
}

// A ValidatingAdmissionPolicy (no webhook) bound to the test namespace only denies pods whose image comes from
// registry.invalid: kube-apiserver refuses them with `ValidatingAdmissionPolicy '<policy>' with binding '<binding>'
// denied request: <message>`. Deleting the binding lets the pods in within the back-off.
TEST_F(RealRefusalTest, ValidatingAdmissionPolicyDenies) {
  const std::string policy = ns_ + "-deny-registry";
  const std::string image = "registry.invalid/app:v1";
  Apply(absl::StrCat(R"yaml(apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: )yaml", policy, R"yaml(
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  validations:
  - expression: "object.spec.containers.all(c, !c.image.startsWith('registry.invalid/'))"
    message: images of registry.invalid are not allowed here
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: )yaml", policy, R"yaml(
spec:
  policyName: )yaml", policy, R"yaml(
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: )yaml", ns_, "\n"));
  cleanup_ = {{"validatingadmissionpolicybinding", policy}, {"validatingadmissionpolicy", policy}};
  const std::string kWords = absl::StrCat("ValidatingAdmissionPolicy '", policy, "' with binding '", policy,
                                          "' denied request: images of registry.invalid are not allowed here");
  ASSERT_TRUE(WaitUntilAdmissionRefuses(image, kWords));
  const Window baseline = Measure("", absl::Seconds(10));
  Apply(CloneSetYaml("policed", 2, image));
  ExpectRefusalThenRecovery(baseline, "policed", 2, image, "Invalid", "AdmissionDenied", kWords, [&] {
    MustKubectl({"delete", "validatingadmissionpolicybinding", policy});
  });
}

// The executor runs as a copy of the chart's executor identity (ServiceAccount `executor` of the test namespace,
// bound to a copy of the chart's ClusterRole and to its lease Role) whose ClusterRole lacks `create` on pods:
// kube-apiserver refuses every pod with 403 `... cannot create resource "pods" ...`. Putting `create` back into
// the copied ClusterRole lets the pods in within the back-off.
TEST_F(RealRefusalTest, RbacCreatePodsRemoved) {
  const Stack& stack = cluster_->stack();
  // Who the chart's executor is, and its roles.
  const CommandResult whoami = Kubectl({"--kubeconfig", stack.executor_kubeconfig(), "auth", "whoami", "-o", "json"});
  ASSERT_EQ(whoami.exit_code, 0) << whoami.output;
  const json who = json::parse(whoami.output, nullptr, false);
  ASSERT_TRUE(who.is_object()) << whoami.output;
  const std::string user = who.value("status", json::object()).value("userInfo", json::object()).value("username", "");
  const std::string sa_prefix = "system:serviceaccount:";
  ASSERT_EQ(user.rfind(sa_prefix, 0), 0u) << "the executor is not a ServiceAccount: " << whoami.output;
  const std::string sa_namespace = user.substr(sa_prefix.size(), user.find(':', sa_prefix.size()) - sa_prefix.size());
  const std::string sa_name = user.substr(user.rfind(':') + 1);
  const auto binds = [&](const json& binding) {
    for (const auto& s : binding.value("subjects", json::array())) {
      if (s.value("kind", "") == "ServiceAccount" && s.value("name", "") == sa_name &&
          s.value("namespace", "") == sa_namespace) {
        return true;
      }
    }
    return false;
  };
  std::vector<std::string> cluster_roles, lease_roles;
  for (const auto& b : stack.GetJson({"clusterrolebindings"}).value("items", json::array())) {
    if (binds(b)) cluster_roles.push_back(b["roleRef"].value("name", ""));
  }
  for (const auto& b : stack.GetJson({"rolebindings", "-n", sa_namespace}).value("items", json::array())) {
    if (binds(b) && b["roleRef"].value("kind", "") == "Role") lease_roles.push_back(b["roleRef"].value("name", ""));
  }
  ASSERT_EQ(cluster_roles.size(), 1u) << "the chart binds its executor to one ClusterRole";
  ASSERT_FALSE(lease_roles.empty()) << "the chart's lease Role in " << sa_namespace;
  const json chart_rules = stack.GetJson({"clusterrole", cluster_roles[0]}).value("rules", json::array());

  // The copy: the same rules but `create` on pods.
  json restricted_rules = chart_rules;
  int removed = 0;
  for (auto& rule : restricted_rules) {
    const auto has = [&](const char* field, const std::string& v) {
      for (const auto& x : rule.value(field, json::array())) {
        if (x == v) return true;
      }
      return false;
    };
    if (!has("apiGroups", "") || !has("resources", "pods")) continue;
    ASSERT_EQ(rule["resources"].size(), 1u) << "pods share a rule with other resources: " << rule.dump();
    json verbs = json::array();
    for (const auto& v : rule["verbs"]) {
      if (v == "create") {
        ++removed;
      } else {
        verbs.push_back(v);
      }
    }
    rule["verbs"] = verbs;
  }
  ASSERT_EQ(removed, 1) << "the chart's ClusterRole creates pods in one rule: " << chart_rules.dump();
  const std::string name = ns_ + "-executor";
  const std::string subject = absl::StrCat("system:serviceaccount:", ns_, ":executor");
  const json sa_subject = {{"kind", "ServiceAccount"}, {"name", "executor"}, {"namespace", ns_}};
  const auto cluster_role = [&](const json& rules) {
    return json{{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", "ClusterRole"},
                {"metadata", {{"name", name}}}, {"rules", rules}};
  };
  json items = json::array({
      {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "executor"}, {"namespace", ns_}}}},
      cluster_role(restricted_rules),
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "ClusterRoleBinding"},
       {"metadata", {{"name", name}}},
       {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", name}}},
       {"subjects", json::array({sa_subject})}},
  });
  cleanup_ = {{"clusterrolebinding", name}, {"clusterrole", name}};
  for (size_t i = 0; i < lease_roles.size(); ++i) {
    const std::string binding = absl::StrCat(name, "-", i);
    items.push_back({{"apiVersion", "rbac.authorization.k8s.io/v1"},
                     {"kind", "RoleBinding"},
                     {"metadata", {{"name", binding}, {"namespace", sa_namespace}}},
                     {"roleRef",
                      {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", lease_roles[i]}}},
                     {"subjects", json::array({sa_subject})}});
    cleanup_.push_back({"rolebinding", binding, "-n", sa_namespace});
  }
  MustKubectl({"apply", "-f", "-"}, json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump());
  // `kubectl auth can-i` exits 0 for yes and 1 for no (its output may carry client-side notes on stderr).
  CommandResult can_create, can_list;
  ASSERT_TRUE(Eventually([&] {
    can_create = Kubectl({"auth", "can-i", "create", "pods", "-n", ns_, "--as", subject});
    can_list = Kubectl({"auth", "can-i", "list", "pods", "-n", ns_, "--as", subject});
    return can_create.exit_code == 1 && can_list.exit_code == 0;
  }, absl::Seconds(30))) << "the copied identity may list but not create pods: create: " << can_create.output
                         << " list: " << can_list.output;

  // Its kubeconfig: the chart executor's with a token of the copy.
  const CommandResult token = Kubectl({"create", "token", "executor", "-n", ns_, "--duration=1h"});
  ASSERT_EQ(token.exit_code, 0) << token.output;
  const CommandResult view =
      Kubectl({"--kubeconfig", stack.executor_kubeconfig(), "config", "view", "--raw", "--flatten", "-o", "json"});
  ASSERT_EQ(view.exit_code, 0) << view.output;
  json kubeconfig = json::parse(view.output, nullptr, false);
  ASSERT_TRUE(kubeconfig.is_object() && !kubeconfig.value("users", json::array()).empty()) << view.output;
  for (auto& u : kubeconfig["users"]) {
    u["user"] = {{"token", std::string(absl::StripAsciiWhitespace(token.output))}};
  }
  const std::string path = absl::StrCat(cluster_->dir(), "/kubeconfig-", name);
  std::ofstream(path) << kubeconfig.dump();
  restricted_executor_ = true;
  ASSERT_EQ(cluster_->RestartExecutor(path), "");

  const Window baseline = Measure("", absl::Seconds(10));
  Apply(CloneSetYaml("unpermitted", 2, "img:v1"));
  const std::string kWords = absl::StrCat("User \"", subject, "\" cannot create resource \"pods\" in API group \"\" "
                                          "in the namespace \"", ns_, "\"");
  ExpectRefusalThenRecovery(baseline, "unpermitted", 2, "img:v1", "Forbidden", "Forbidden", kWords, [&] {
    MustKubectl({"apply", "-f", "-"}, cluster_role(chart_rules).dump());
  });
}

}  // namespace
}  // namespace cloneset::testing
