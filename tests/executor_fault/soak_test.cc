// The soak: for $CLONESET_SOAK_SECONDS (default 90), random operations from one seed on four CloneSets (in place
// and ReCreate, with and without volumeClaimTemplates): scale up and down, image changes, partition moves, pods
// deleted by hand, the executor and the planner SIGKILLed and restarted, and on the real control plane
// kube-apiserver and etcd restarted in place (./run restart --cluster real). The embedded cluster of the stack keeps
// no state across a restart (no --data-dir), so it gets no API server restart.
//
// On every pod event the InvariantWatch invariants hold, with the bounds of the spec in force: while a change is on
// its way (from just before it is written until the executor reports the new generation observed) the union of the
// old spec's and the new one's; a scale-up or a pod deleted by hand disarms the Ready floor until every pod is Ready
// again. The watch is checked after every operation. When the operations stop, every CloneSet converges within a
// bound: status caught up, every pod Ready, at least replicas - partition pods on the newest image (all without a
// partition), exactly the pods' claims.
//
// The seed is $CLONESET_FAULT_SEED, else the clock; it is printed at the start and with every failure, together
// with the index of the operation. The same seed on the same backend gives the same sequence of operations (the
// kinds, targets, values and pauses); which pod "the k-th pod by name" is, and how far the controller got between
// two operations, depend on timing.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "fault_stack.h"
#include "gtest/gtest.h"

namespace cloneset::testing {
namespace {

// SIGTERM or SIGINT (bench/real_soak.sh stopping a run): no further operation; the test fails and its stack stops
// everything it started, as at a normal end. A process killed outright would leave its executor and planner behind.
std::atomic<bool> g_stop_requested{false};
extern "C" void RequestStop(int) { g_stop_requested = true; }

const std::vector<std::string> kShortLeases = {"--lease_duration=3s", "--renew_deadline=2s", "--retry_period=500ms"};

uint64_t Seed() {
  uint64_t seed = 0;
  const char* env = std::getenv("CLONESET_FAULT_SEED");
  if (env == nullptr || !absl::SimpleAtoi(env, &seed)) seed = static_cast<uint64_t>(absl::ToUnixMicros(absl::Now()));
  std::cerr << "soak seed: CLONESET_FAULT_SEED=" << seed << std::endl;
  ::testing::Test::RecordProperty("fault_seed", std::to_string(seed));
  return seed;
}

absl::Duration SoakDuration() {
  int seconds = 90;
  if (const char* env = std::getenv("CLONESET_SOAK_SECONDS"); env != nullptr && *env != '\0') {
    if (!absl::SimpleAtoi(env, &seconds) || seconds < 1) {
      ADD_FAILURE() << "CLONESET_SOAK_SECONDS must be a positive number of seconds, got '" << env << "'";
      seconds = 90;
    }
  }
  return absl::Seconds(seconds);
}

std::string Image(int version) { return absl::StrCat("registry.local/app:v", version); }

enum class Op { kScale, kImage, kPartition, kDeletePod, kKillExecutor, kKillPlanner, kRestartApiServer, kRestartEtcd };
const char* Name(Op op) {
  switch (op) {
    case Op::kScale: return "scale";
    case Op::kImage: return "image";
    case Op::kPartition: return "partition";
    case Op::kDeletePod: return "delete-pod";
    case Op::kKillExecutor: return "kill-executor";
    case Op::kKillPlanner: return "kill-planner";
    case Op::kRestartApiServer: return "restart-kube-apiserver";
    case Op::kRestartEtcd: return "restart-etcd";
  }
  return "?";
}

// One CloneSet of the soak and the image version its spec names.
struct Target {
  Workload w;
  int version = 1;
};

class Soak {
 public:
  Soak(uint64_t seed, FaultStack& stack, std::vector<Target> targets)
      : seed_(seed), stack_(stack), targets_(std::move(targets)) {}

  std::string Replay(int index) const {
    const char* backend = std::getenv("CLONESET_E2E_BACKEND");
    return absl::StrCat("soak seed ", seed_, ", operation ", index, "; replay with CLONESET_FAULT_SEED=", seed_,
                        " CLONESET_E2E_BACKEND=", backend != nullptr && *backend != '\0' ? backend : "embedded");
  }

  std::vector<Workload> Workloads() const {
    std::vector<Workload> ws;
    for (const auto& t : targets_) ws.push_back(t.w);
    return ws;
  }

  // kubectl with retries: right after an API server or etcd restart a request can still fail once or twice.
  CommandResult Kubectl(const std::vector<std::string>& args, const std::string& input = "") const {
    CommandResult r;
    Poll([&] {
      r = stack_.Kubectl(args, input);
      return r.exit_code == 0;
    }, absl::Seconds(30), absl::Milliseconds(500));
    return r;
  }

  // Writes target t's spec and waits until the executor reports its generation observed. Empty on success.
  std::string Apply(const Target& t) const {
    const CommandResult r = Kubectl({"apply", "-f", "-"}, WorkloadYaml(t.w, Image(t.version)));
    if (r.exit_code != 0) return "kubectl apply: " + r.output;
    int64_t generation = -1, observed = -1;
    const bool caught_up = Poll([&] {
      const json cs = stack_.GetJson({"clonesets.apps.kruise.io", "app", "-n", t.w.ns});
      if (!cs.contains("metadata")) return false;
      if (generation < 0) generation = cs["metadata"].value("generation", int64_t{0});
      observed = cs.value("status", json::object()).value("observedGeneration", int64_t{-1});
      return observed >= generation;
    }, ObserveTimeout(), absl::Milliseconds(250));
    if (!caught_up) {
      return absl::StrCat(t.w.ns, ": generation ", generation, " not observed within ",
                          absl::FormatDuration(ObserveTimeout()), " (observedGeneration ", observed, ")");
    }
    return "";
  }

  absl::Duration ObserveTimeout() const { return stack_.real() ? absl::Seconds(120) : absl::Seconds(60); }

  // The bounds of every CloneSet as its spec says now.
  std::map<std::string, PodBounds> Steady() const {
    std::map<std::string, PodBounds> out;
    for (const auto& t : targets_) out[t.w.ns] = BoundsOf(t.w);
    return out;
  }

  void Run(InvariantWatch& watch, absl::Duration duration) {
    std::mt19937_64 rng(seed_);
    std::vector<Op> ops = {Op::kScale, Op::kImage, Op::kPartition, Op::kDeletePod, Op::kKillExecutor, Op::kKillPlanner};
    std::vector<double> weights = {3, 4, 2, 2, 2, 1};
    if (stack_.real()) {
      ops.insert(ops.end(), {Op::kRestartApiServer, Op::kRestartEtcd});
      weights.insert(weights.end(), {1, 1});
    }
    std::discrete_distribution<size_t> pick_op(weights.begin(), weights.end());
    const absl::Time end = absl::Now() + duration;
    for (int i = 1; absl::Now() < end; ++i) {
      if (g_stop_requested) {
        ADD_FAILURE() << Replay(i) << ": stopped by a signal before this operation";
        return;
      }
      // Every draw every time, whatever the operation, so that the sequence depends on the seed alone.
      const Op op = ops[pick_op(rng)];
      Target& t = targets_[std::uniform_int_distribution<size_t>(0, targets_.size() - 1)(rng)];
      const int replicas = std::uniform_int_distribution<int>(1, 6)(rng);
      const int partition_draw = std::uniform_int_distribution<int>(0, 6)(rng);
      const int pod_index = std::uniform_int_distribution<int>(0, 5)(rng);
      const bool kill = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
      const absl::Duration down = absl::Milliseconds(std::uniform_int_distribution<int>(0, 1000)(rng));
      const absl::Duration pause = absl::Milliseconds(std::uniform_int_distribution<int>(100, 2000)(rng));

      std::string what = absl::StrCat("op ", i, " ", Name(op));
      Target before = t;
      switch (op) {
        case Op::kScale:
          t.w.replicas = replicas;
          absl::StrAppend(&what, " ", t.w.ns, " ", before.w.replicas, "->", replicas);
          break;
        case Op::kImage: ++t.version; absl::StrAppend(&what, " ", t.w.ns, " ", Image(t.version)); break;
        case Op::kPartition:
          t.w.partition = partition_draw % (t.w.replicas + 1);
          absl::StrAppend(&what, " ", t.w.ns, " ", before.w.partition, "->", t.w.partition);
          break;
        case Op::kDeletePod: absl::StrAppend(&what, " ", t.w.ns, " pod #", pod_index); break;
        case Op::kKillExecutor:
        case Op::kKillPlanner:
          absl::StrAppend(&what, ", down ", absl::FormatDuration(down));
          break;
        case Op::kRestartApiServer:
        case Op::kRestartEtcd:
          absl::StrAppend(&what, kill ? " (SIGKILL)" : " (SIGTERM)");
          break;
      }
      std::cerr << what << std::endl;
      SCOPED_TRACE(Replay(i) + ": " + what);
      ASSERT_EQ(watch.Supervise(), "");
      // Until the executor observed the change: both specs' bounds; a scale-up or a pod deleted by hand disarms the
      // Ready floor until every pod is Ready again.
      std::map<std::string, PodBounds> bounds = Steady();
      PodBounds& b = bounds[t.w.ns];
      const PodBounds from = BoundsOf(before.w), to = BoundsOf(t.w);
      b = {std::max(from.max_active, to.max_active), std::min(from.min_ready, to.min_ready), to.arm_at,
           op == Op::kDeletePod || to.arm_at > from.arm_at};
      ASSERT_EQ(watch.Mark(what, bounds), "");
      switch (op) {
        case Op::kScale: case Op::kImage: case Op::kPartition:
          ASSERT_EQ(Apply(t), "");
          ASSERT_EQ(watch.Mark(what + " (observed)", {{t.w.ns, to}}), "");
          break;
        case Op::kDeletePod: {
          const json pods = stack_.GetJson({"pods", "-n", t.w.ns});
          std::vector<std::string> names;
          for (const auto& p : pods.value("items", json::array())) {
            if (!p["metadata"].contains("deletionTimestamp")) names.push_back(p["metadata"].value("name", ""));
          }
          std::sort(names.begin(), names.end());
          if (names.empty()) break;
          const std::string name = names[pod_index % names.size()];
          std::cerr << "  deleting " << t.w.ns << "/" << name << std::endl;
          ASSERT_EQ(Kubectl({"delete", "pod", name, "-n", t.w.ns, "--wait=false", "--ignore-not-found"}).exit_code, 0);
          break;
        }
        case Op::kKillExecutor:
          stack_.KillExecutor("solo");
          absl::SleepFor(down);
          ASSERT_NO_FATAL_FAILURE(stack_.StartExecutor("solo", kShortLeases));
          break;
        case Op::kKillPlanner:
          stack_.StopPlanner();
          absl::SleepFor(down);
          ASSERT_NO_FATAL_FAILURE(stack_.StartPlanner());
          break;
        case Op::kRestartApiServer:
          ASSERT_NO_FATAL_FAILURE(stack_.RestartControlPlane("kube-apiserver", kill));
          break;
        case Op::kRestartEtcd:
          ASSERT_NO_FATAL_FAILURE(stack_.RestartControlPlane("etcd", kill));
          break;
      }
      ++counts_[Name(op)];
      ++done_;
      ASSERT_EQ(watch.Supervise(), "");
      const auto violations = watch.Violations();
      ASSERT_TRUE(violations.empty()) << violations.size() << " violations, first: " << violations.front() << "\n"
                                      << stack_.ExecutorLogs();
      if (i % 20 == 0) {  // the marker pods have done their work once the watch printed them
        (void)stack_.Kubectl({"delete", "pods", "-n", "default", "-l", "invariant-watch-marker=true", "--wait=false"});
      }
      absl::SleepFor(pause);
    }
  }

  int done() const { return done_; }
  std::string Counts() const {
    std::string out;
    for (const auto& [name, n] : counts_) absl::StrAppend(&out, out.empty() ? "" : " ", name, "=", n);
    return out;
  }
  const std::vector<Target>& targets() const { return targets_; }

 private:
  uint64_t seed_;
  FaultStack& stack_;
  std::vector<Target> targets_;
  std::map<std::string, int> counts_;
  int done_ = 0;
};

TEST(Soak, RandomOperations) {
  const uint64_t seed = Seed();
  const absl::Duration duration = SoakDuration();
  struct sigaction action = {};
  action.sa_handler = RequestStop;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  FaultStack stack;
  ASSERT_EQ(stack.Start(), "");
  std::vector<Target> targets = {
      {{"soak-inplace-claims", 4, 1, "InPlaceIfPossible", true}},
      {{"soak-recreate-claims", 4, 2, "ReCreate", false}},
      {{"soak-inplace", 3, 1, "InPlaceIfPossible", true, 0, false}},
      {{"soak-recreate", 3, 1, "ReCreate", true, 0, false}},
  };
  Soak soak(seed, stack, targets);
  SCOPED_TRACE(soak.Replay(0));
  InvariantWatch watch(stack, soak.Workloads());
  ASSERT_EQ(watch.WaitEstablished(absl::Seconds(60)), "");  // before the first pod exists
  ASSERT_NO_FATAL_FAILURE(stack.StartExecutor("solo", kShortLeases));
  for (const auto& t : targets) {
    ASSERT_NO_FATAL_FAILURE(stack.CreateNamespace(t.w.ns));
    ASSERT_EQ(soak.Apply(t), "");
  }
  const absl::Duration settle_bound = stack.real() ? absl::Seconds(180) : absl::Seconds(90);
  for (const auto& t : targets) {
    ASSERT_EQ(WaitSettled(stack, {t.w}, Image(t.version), settle_bound), "") << soak.Replay(0);
  }

  const auto before = watch.Violations();
  ASSERT_TRUE(before.empty()) << soak.Replay(0) << ": " << before.size() << " violations before the first operation, "
                              << "first: " << before.front();

  const absl::Time start = absl::Now();
  soak.Run(watch, duration);
  const absl::Duration ran = absl::Now() - start;
  std::cerr << "soak: " << soak.done() << " operations in " << ran << ": " << soak.Counts() << std::endl;
  ::testing::Test::RecordProperty("soak_operations", std::to_string(soak.done()));
  if (::testing::Test::HasFailure()) return;

  // Converged within the bound once the operations stop.
  const absl::Time settling = absl::Now();
  for (const auto& t : soak.targets()) {
    const std::string why = WaitSettled(stack, {t.w}, Image(t.version), settle_bound);
    ASSERT_EQ(why, "") << soak.Replay(soak.done()) << ": did not converge after the last operation\n"
                       << stack.Kubectl({"get", "pods,pvc", "-n", t.w.ns, "-o", "wide", "--show-labels"}).output
                       << stack.ExecutorLogs();
  }
  std::cerr << "soak: converged " << absl::Now() - settling << " after the last operation" << std::endl;
  size_t events = 0;
  const auto violations = watch.Finish(&events);
  std::cerr << "soak: " << watch.Summary() << std::endl;
  EXPECT_GT(events, 0u) << "the pod watch saw nothing";
  EXPECT_TRUE(violations.empty()) << soak.Replay(soak.done()) << ": " << violations.size()
                                  << " violations, first ones:\n"
                                  << absl::StrJoin(violations.begin(),
                                                   violations.begin() + std::min<size_t>(violations.size(), 10), "\n");
}

}  // namespace
}  // namespace cloneset::testing
