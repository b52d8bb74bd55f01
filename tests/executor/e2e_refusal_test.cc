// A refusal that lasts, end to end: pods the API server will not create (a ResourceQuota on pods exhausted, a
// namespace being terminated) cost a bounded number of API requests while the refusal lasts, are reported once on
// the CloneSet (conditions ApplyFailed and FailedScale, one FailedCreate and one ApplyFailed Warning event), and
// the CloneSet recovers within the back-off once the cause is gone. The suite's executor runs with a 2 s back-off
// cap (--retry_backoff_max) so that recovery is quick; the bound below follows from it (docs/reliability.md).
#include <string>

#include "refusal_fixture.h"

namespace cloneset::testing {
namespace {

using RefusalTest = RefusalFixture;

// A quota of 2 pods and a CloneSet of 3: the third pod is refused with kube-apiserver's words, retried with back-off,
// reported once; raising the quota lets it in within the back-off and clears the conditions.
TEST_F(RefusalTest, QuotaExhausted) {
  Apply("apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: pods-cap\nspec:\n  hard:\n    pods: \"2\"\n");
  if (cluster_->stack().real()) {
    // kube-apiserver refuses pods ("status unknown for quota") until the quota controller has filled in the
    // quota's status: wait for it, so that the refusal the CloneSet meets is the one this test is about.
    ASSERT_TRUE(Eventually([&] {
      return GetJson({"resourcequota", "pods-cap"}).value("status", json::object()).contains("hard");
    })) << GetJson({"resourcequota", "pods-cap"}).dump();
  }
  const Window baseline = Measure("", absl::Seconds(10));
  Apply(CloneSetYaml("capped", 3, "img:v1"));
  ASSERT_TRUE(Eventually([&] {
    const json* c = Condition(CloneSet("capped"), "ApplyFailed");
    return c != nullptr && c->value("reason", "") == "Forbidden";
  })) << Describe("capped");
  EXPECT_EQ(Pods("capped").size(), 2u);
  const json cs = CloneSet("capped");
  const json* applied = Condition(cs, "ApplyFailed");
  ASSERT_NE(applied, nullptr);
  EXPECT_NE(applied->value("message", "").find("exceeded quota: pods-cap, requested: pods=1, used: pods=2, "
                                               "limited: pods=2"),
            std::string::npos)
      << applied->dump();
  const json* failed_scale = Condition(cs, "FailedScale");
  ASSERT_NE(failed_scale, nullptr) << cs.dump();
  EXPECT_EQ(failed_scale->value("reason", ""), "FailedCreate");

  WaitForCappedBackoff();
  ExpectBounded(baseline, Measure("QuotaExceeded", absl::Seconds(20)));
  EXPECT_EQ(EventsWithReason("FailedCreate"), 1) << Kubectl({"get", "events", "-n", ns_}).output;
  EXPECT_EQ(EventsWithReason("ApplyFailed"), 1) << Kubectl({"get", "events", "-n", ns_}).output;

  // The cause goes: the third pod comes within the back-off (2 s, and the pod's start), the conditions go.
  MustKubectl({"patch", "-n", ns_, "resourcequota/pods-cap", "--type=merge", "-p", R"({"spec":{"hard":{"pods":"3"}}})"});
  const absl::Time fixed = absl::Now();
  ASSERT_TRUE(Eventually([&] { return AllReady("capped", 3, "img:v1"); }, absl::Seconds(30))) << Describe("capped");
  std::cerr << "recovered in " << absl::FormatDuration(absl::Now() - fixed) << "\n";
  EXPECT_TRUE(Eventually([&] {
    const json now = CloneSet("capped");
    return Condition(now, "ApplyFailed") == nullptr && Condition(now, "FailedScale") == nullptr;
  }, absl::Seconds(20))) << CloneSet("capped").dump();
}

// The namespace is being deleted (a finalizer holds it, and with it the CloneSet): a pod that goes is not
// replaced, its replacement is refused as kube-apiserver refuses it, with a bounded number of requests.
TEST_F(RefusalTest, NamespaceTerminating) {
  MustKubectl({"patch", "namespace", ns_, "--type=merge", "-p", R"({"metadata":{"finalizers":["example.com/hold"]}})"});
  Apply(CloneSetYaml("doomed", 2, "img:v1"));
  ASSERT_TRUE(Eventually([&] { return AllReady("doomed", 2, "img:v1"); })) << Describe("doomed");
  const Window baseline = Measure("", absl::Seconds(10));
  MustKubectl({"delete", "namespace", ns_, "--wait=false"});
  const std::string victim = Pods("doomed").begin()->first;
  MustKubectl({"delete", "pod", "-n", ns_, victim, "--wait=false"});
  ASSERT_TRUE(Eventually([&] {
    const json* c = Condition(CloneSet("doomed"), "ApplyFailed");
    return c != nullptr && c->value("message", "").find("because it is being terminated") != std::string::npos;
  })) << Describe("doomed");
  EXPECT_EQ(Pods("doomed").size(), 1u);
  // (Events cannot be recorded in a terminating namespace either: the executor's are refused too.)
  WaitForCappedBackoff();
  ExpectBounded(baseline, Measure("NamespaceTerminating", absl::Seconds(20)));
  // Let the namespace go.
  MustKubectl({"patch", "namespace", ns_, "--type=merge", "-p", R"({"metadata":{"finalizers":null}})"});
}

}  // namespace
}  // namespace cloneset::testing
