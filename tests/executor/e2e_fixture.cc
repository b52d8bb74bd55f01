#include "e2e_fixture.h"

#include <cctype>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace cloneset::testing {
std::string E2eCluster::Start(const E2eClusterOptions& options) {
  options_ = options;
  if (std::string err = stack_.Start(); !err.empty()) return err;
  for (const std::string& crd : options.crds) {
    auto r = stack_.Kubectl({"apply", "-f", absl::StrCat(SOURCE_DIR, "/charts/cloneset/crds/", crd)});
    if (r.exit_code != 0) return "CRD " + crd + ": " + r.output;
    const std::string resource = crd.substr(0, crd.rfind(".yaml"));  // imagepulljobs.apps.kruise.io
    if (!Poll([&] { return stack_.Kubectl({"get", resource, "-A"}).exit_code == 0; }, absl::Seconds(20))) {
      return "CRD " + crd + " not served";
    }
  }
  ExecutorOptions executor;
  executor.wait_ready = true;
  executor.flags = options.executor_flags;
  return stack_.StartExecutor(kExecutor, executor);
}

std::string E2eCluster::RestartExecutor(const std::string& kubeconfig) {
  stack_.StopExecutor(kExecutor);
  ExecutorOptions executor;
  executor.wait_ready = true;
  executor.flags = options_.executor_flags;
  executor.kubeconfig = kubeconfig;
  return stack_.StartExecutor(kExecutor, executor);
}

PodWatch::PodWatch(const E2eCluster& cluster, const std::string& ns, const std::string& selector) {
  static int counter = 0;  // one file per watch: the log is opened for appending
  path_ = absl::StrCat(cluster.dir(), "/watch-", ns, "-", ++counter, ".json");
  cluster.stack().StartKubectl(
      process_, {"get", "pods", "-w", "--output-watch-events", "-o", "json", "-n", ns, "-l", selector}, path_);
}

PodWatch::~PodWatch() { process_.Stop(absl::Seconds(2)); }

bool PodWatch::WaitStarted(size_t initial, absl::Duration timeout) {
  initial_ = initial;
  return Poll([&] { return ReadJsonValues(path_).size() >= initial; }, timeout);
}

PodWatch::Stats PodWatch::Finish() {
  absl::SleepFor(absl::Milliseconds(300));  // the last events in flight
  process_.Stop(absl::Seconds(2));
  Stats st;
  std::map<std::string, json> pods;  // by uid
  for (const json& e : ReadJsonValues(path_)) {
    const std::string type = e.value("type", "");
    const json& pod = e.contains("object") ? e["object"] : json::object();
    const std::string uid = pod.value("metadata", json::object()).value("uid", "");
    if (uid.empty()) continue;
    ++st.events;
    st.uids_seen.insert(uid);
    if (type == "DELETED") {
      pods.erase(uid);
    } else {
      pods[uid] = pod;
    }
    if (st.events < initial_) continue;  // the initial list arrives one pod per event
    int ready = 0, not_ready = 0, active = 0;
    for (const auto& [_, p] : pods) {
      if (p["metadata"].contains("deletionTimestamp")) continue;
      ++active;
      IsReady(p) ? ++ready : ++not_ready;
    }
    const json& meta = pod["metadata"];
    st.trace += absl::StrCat(type, " ", meta.value("name", ""), " rv=", meta.value("resourceVersion", ""),
                             " image=", pod["spec"]["containers"][0].value("image", ""), " ready=", IsReady(pod),
                             meta.contains("deletionTimestamp") ? " deleting" : "", " -> ready pods ", ready, "\n");
    st.min_ready = std::min(st.min_ready, ready);
    st.max_not_ready = std::max(st.max_not_ready, not_ready);
    st.max_active = std::max(st.max_active, active);
  }
  return st;
}

E2eCluster* E2eTest::cluster_ = nullptr;

void E2eTest::StartCluster(const E2eClusterOptions& options) {
  if (cluster_ != nullptr) return;
  cluster_ = new E2eCluster();
  const std::string err = cluster_->Start(options);
  if (!err.empty()) {
    std::cerr << "cluster start failed: " << err << "\n";
    cluster_->Stop();
    delete cluster_;
    cluster_ = nullptr;
  }
}

void E2eTest::TearDownTestSuite() {
  if (cluster_ == nullptr) return;
  cluster_->Stop();
  delete cluster_;
  cluster_ = nullptr;
}

void E2eTest::SetUp() {
  ASSERT_NE(cluster_, nullptr) << "the cluster did not start";
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  ns_ = "e2e-";
  for (char c : name) ns_ += std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
  if (ns_.size() > 60) ns_.resize(60);
  ASSERT_EQ(cluster_->stack().CreateNamespace(ns_), "");
}

void E2eTest::TearDown() {
  if (HasFailure() && cluster_ != nullptr) {
    std::cerr << "--- pods ---\n" << Kubectl({"get", "pods", "-n", ns_, "-o", "wide", "--show-labels"}).output
              << "--- events ---\n" << Kubectl({"get", "events", "-n", ns_}).output << "--- executor log (tail) ---\n";
    const std::string log = cluster_->ExecutorLog();
    std::cerr << log.substr(log.size() > 8000 ? log.size() - 8000 : 0) << "\n";
  }
  // Leave nothing for the executor to work on in later scenarios.
  if (cluster_ != nullptr) Kubectl({"delete", "clonesets.apps.kruise.io", "--all", "-n", ns_, "--wait=false"});
}

CommandResult E2eTest::Kubectl(std::vector<std::string> args, const std::string& input) {
  return cluster_->stack().Kubectl(std::move(args), input);
}

void E2eTest::MustKubectl(const std::vector<std::string>& args, const std::string& input) {
  auto r = Kubectl(args, input);
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

json E2eTest::GetJson(const std::vector<std::string>& what) {
  std::vector<std::string> args = {"-n", ns_};
  args.insert(args.end(), what.begin(), what.end());
  return cluster_->stack().GetJson(std::move(args));
}

bool E2eTest::Eventually(const std::function<bool()>& f, absl::Duration timeout) { return Poll(f, timeout); }

std::map<std::string, PodInfo> E2eTest::Pods(const std::string& app) {
  std::map<std::string, PodInfo> out;
  json list = GetJson({"pods", "-l", "app=" + app});
  for (const auto& p : list.value("items", json::array())) {
    if (p["metadata"].contains("deletionTimestamp")) continue;
    PodInfo info;
    info.uid = p["metadata"].value("uid", "");
    info.image = p["spec"]["containers"][0].value("image", "");
    info.labels = p["metadata"].value("labels", std::map<std::string, std::string>{});
    info.instance_id = info.labels["apps.kruise.io/cloneset-instance-id"];
    info.revision = info.labels["controller-revision-hash"];
    const json status = p.value("status", json::object());
    info.ip = status.value("podIP", "");
    for (const auto& cs : status.value("containerStatuses", json::array())) info.restart_count += cs.value("restartCount", 0);
    for (const auto& v : p["spec"].value("volumes", json::array())) {
      if (v.contains("persistentVolumeClaim")) info.claims.insert(v["persistentVolumeClaim"].value("claimName", ""));
    }
    info.ready = IsReady(p);
    out[p["metadata"].value("name", "")] = info;
  }
  return out;
}

int E2eTest::Terminating(const std::string& app) {
  int n = 0;
  for (const auto& p : GetJson({"pods", "-l", "app=" + app}).value("items", json::array())) {
    if (p["metadata"].contains("deletionTimestamp")) ++n;
  }
  return n;
}

bool E2eTest::AllReady(const std::string& app, size_t n, const std::string& image) {
  auto pods = Pods(app);
  if (pods.size() != n) return false;
  for (const auto& [name, p] : pods) {
    if (!p.ready || p.image != image) return false;
  }
  return Terminating(app) == 0;
}

std::map<std::string, json> E2eTest::Pvcs() {
  std::map<std::string, json> out;
  for (const auto& p : GetJson({"pvc"}).value("items", json::array())) {
    if (p["metadata"].contains("deletionTimestamp")) continue;
    out[p["metadata"].value("name", "")] = p;
  }
  return out;
}

std::multimap<std::string, std::string> E2eTest::Events() {
  std::multimap<std::string, std::string> out;
  for (const auto& e : GetJson({"events"}).value("items", json::array())) {
    out.emplace(e.value("reason", ""), e.value("message", ""));
  }
  return out;
}

std::string E2eTest::Describe(const std::string& app) {
  return Kubectl({"get", "pods", "-n", ns_, "-l", "app=" + app, "-o", "wide", "--show-labels"}).output +
         Kubectl({"get", "clonesets.apps.kruise.io", "-n", ns_, "-o", "yaml"}).output;
}

std::unique_ptr<PodWatch> E2eTest::Watch(const std::string& app, size_t initial) {
  auto w = std::make_unique<PodWatch>(*cluster_, ns_, "app=" + app);
  EXPECT_TRUE(w->WaitStarted(initial, absl::Seconds(20))) << "the pod watch did not start";
  return w;
}

std::string CloneSetYaml(const std::string& name, int replicas, const std::string& image, const std::string& extra_spec,
                         const std::string& pod_extra) {
  return absl::StrCat("apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: ", name,
                      "\nspec:\n  replicas: ", replicas, "\n  selector:\n    matchLabels:\n      app: ", name,
                      "\n  template:\n    metadata:\n      labels:\n        app: ", name,
                      "\n    spec:\n      containers:\n      - name: main\n        image: ", image, "\n", pod_extra,
                      extra_spec);
}

}  // namespace cloneset::testing
