#include "devcluster/nodes/images.h"

#include <gtest/gtest.h>

#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace cloneset::devcluster::nodes {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(Images, NormalizeTable) {
  struct Case {
    std::string in, want;
  };
  for (const Case& c : std::vector<Case>{
           {"nginx", "docker.io/library/nginx:latest"},
           {"nginx:1.25", "docker.io/library/nginx:1.25"},
           {"bitnami/redis", "docker.io/bitnami/redis:latest"},
           {"127.0.0.1:5000/test/app:v1", "127.0.0.1:5000/test/app:v1"},
           {"localhost/app", "localhost/app:latest"},
           {"registry.k8s.io/pause@sha256:abc", "registry.k8s.io/pause@sha256:abc"},
           {"quay.io:443/x/y", "quay.io:443/x/y:latest"},
       }) {
    EXPECT_EQ(NormalizeImage(c.in), c.want) << c.in;
  }
}

// The simulated runtime normalizes as the planner and the agent compare (common/image_ref.h): before it shared
// that rule, "docker.io/nginx" was its own image here, with an ID of its own.
TEST(Images, SpellingsOfOneImageShareAnId) {
  EXPECT_EQ(ImageIdFor("docker.io/nginx"), ImageIdFor("nginx"));
  EXPECT_EQ(ImageIdFor("index.docker.io/library/nginx:1.25"), ImageIdFor("nginx:1.25"));
}

TEST(Images, IdIsDeterministicAndDiffersPerImage) {
  EXPECT_EQ(ImageIdFor("nginx"), ImageIdFor("docker.io/library/nginx:latest"));
  EXPECT_NE(ImageIdFor("nginx:1.25"), ImageIdFor("nginx:1.26"));
  EXPECT_EQ(ImageIdFor("nginx").size(), 7u + 64u);
  // sha256("docker.io/library/nginx:latest")
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Images, ParsePullTimeRules) {
  auto rules = ParsePullTimeRules("nginx.*=2s, .*big.*=1m30s", "image-pull-time");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 2u);
  EXPECT_EQ(rules->at(0).duration, seconds(2));
  EXPECT_EQ(rules->at(1).duration, seconds(90));
  ImagePolicy policy;
  policy.pull_times = *rules;
  policy.default_pull_time = milliseconds(100);
  EXPECT_EQ(policy.PullTimeFor("nginx:1"), seconds(2));
  EXPECT_EQ(policy.PullTimeFor("docker.io/library/nginx:1"), seconds(2));
  EXPECT_EQ(policy.PullTimeFor("repo/big-model:v3"), seconds(90));
  EXPECT_EQ(policy.PullTimeFor("busybox"), milliseconds(100));

  for (const char* bad : {"nginx", "nginx=fast", "([=2s", "=2s", "a=-1s"}) {
    auto r = ParsePullTimeRules(bad, "image-pull-time");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("--image-pull-time"), std::string::npos) << r.status();
  }
}

TEST(Images, PullsCompleteLazilyAndTrackConcurrency) {
  prometheus::Registry registry;
  CriMetrics metrics(&registry);
  ImagePolicy policy;
  policy.default_pull_time = seconds(2);
  policy.fail_pulls = std::regex(".*broken.*");
  policy.fail_pattern = ".*broken.*";
  ImageStore store("devcluster-node-0", &policy, &metrics);
  TimePoint t0{seconds(1000)};

  ImageView a = store.EnsurePull("a:1", t0);
  EXPECT_FALSE(a.present);
  EXPECT_EQ(a.ready_at, t0 + seconds(2));
  ImageView b = store.EnsurePull("b:1", t0 + seconds(1));
  EXPECT_EQ(b.ready_at, t0 + seconds(3));
  // Joining a running pull does not start a second one.
  EXPECT_EQ(store.EnsurePull("a:1", t0 + seconds(1)).ready_at, t0 + seconds(2));
  EXPECT_EQ(store.InFlight(), 2);
  EXPECT_EQ(store.MaxInFlight(), 2);
  EXPECT_FALSE(store.Status("a:1", t0 + seconds(1))->present);
  EXPECT_EQ(store.Settle(t0 + seconds(2)), t0 + seconds(3));
  EXPECT_TRUE(store.Status("a:1", t0 + seconds(2))->present);
  EXPECT_EQ(store.InFlight(), 1);
  EXPECT_EQ(store.Settle(t0 + seconds(3)), std::nullopt);
  EXPECT_EQ(store.PullsTotal("success"), 2u);

  ImageView bad = store.EnsurePull("repo/broken:1", t0);
  EXPECT_EQ(bad.error.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.PullsTotal("failure"), 1u);

  ImageView present = store.EnsurePull("a:1", t0 + seconds(10));
  EXPECT_TRUE(present.present);
  EXPECT_EQ(store.List(t0 + seconds(10)).size(), 2u);
  EXPECT_TRUE(store.Remove("a:1", t0 + seconds(10)));
  EXPECT_FALSE(store.Remove("a:1", t0 + seconds(10)));
  EXPECT_FALSE(store.Status("a:1", t0 + seconds(10)).has_value());

  // Cancelling abandons the pull.
  store.EnsurePull("c:1", t0 + seconds(20));
  auto gen = store.Status("c:1", t0 + seconds(20))->pull_generation;
  store.CancelPull("c:1", gen, t0 + seconds(21));
  EXPECT_FALSE(store.Status("c:1", t0 + seconds(21)).has_value());
  EXPECT_EQ(store.PullsTotal("cancelled"), 1u);
  EXPECT_EQ(store.InFlight(), 0);

  std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
  EXPECT_NE(text.find("devcluster_cri_pulls_total{node=\"devcluster-node-0\",result=\"success\"} 2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("devcluster_cri_pulls_in_flight_max{node=\"devcluster-node-0\"} 2"), std::string::npos);
  EXPECT_NE(text.find("devcluster_cri_pulls_in_flight{node=\"devcluster-node-0\"} 0"), std::string::npos);
}

TEST(Images, ZeroPullTimeIsImmediatelyPresent) {
  ImagePolicy policy;
  ImageStore store("n", &policy, nullptr);
  TimePoint t0{seconds(5)};
  EXPECT_TRUE(store.EnsurePull("x", t0).present);
  EXPECT_EQ(store.InFlight(), 0);
  EXPECT_EQ(store.MaxInFlight(), 1);
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
