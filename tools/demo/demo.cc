#include "tools/demo/demo.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <functional>
#include <iostream>
#include <regex>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "kube/config.h"
#include "nlohmann/json.hpp"
#include "planner/context.h"
#include "planner/predicates.h"

namespace cloneset::demo {

using clonesetctl::FetchCloneSet;
using clonesetctl::RenderStatus;

std::map<std::string, PodFacts> FactsOf(const LiveCloneSet& live) {
  std::map<std::string, PodFacts> facts;
  for (const pb::Pod& pod : live.pods) {
    if (!planner::IsActive(pod)) continue;
    PodFacts f;
    f.uid = pod.metadata().uid();
    f.node = pod.node_name();
    f.revision = std::string(planner::Label(pod.metadata(), planner::kRevisionLabel));
    if (!pod.containers().empty()) f.image = pod.containers(0).image();
    for (const pb::ContainerStatus& c : pod.container_statuses()) f.restarts += c.restart_count();
    f.ready = planner::IsK8sReady(pod);
    for (const pb::PersistentVolumeClaim& pvc : live.pvcs) {
      if (planner::InstanceId(pvc) == planner::InstanceId(pod)) f.claim = pvc.metadata().name();
    }
    facts[pod.metadata().name()] = f;
  }
  return facts;
}

double WritesFrom(const std::string& text, const std::vector<std::string>& agents) {
  static const std::regex kLine(R"(^apiserver_request_total\{([^}]*)\}\s+([0-9.eE+]+))");
  static const std::regex kVerb(R"re(verb="(create|update|patch|delete|POST|PUT|PATCH|DELETE)")re");
  static const std::regex kAgent(R"re(user_agent="([^"]*)")re");
  double total = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    std::smatch m, agent;
    if (!std::regex_search(line, m, kLine)) continue;
    const std::string labels = m[1];
    if (!std::regex_search(labels, kVerb) || !std::regex_search(labels, agent, kAgent)) continue;
    // Lease renewals and Events are not writes for pods.
    if (labels.find(R"(resource="leases")") != std::string::npos ||
        labels.find(R"(resource="events")") != std::string::npos) {
      continue;
    }
    for (const std::string& a : agents) {
      if (agent[1].str().rfind(a, 0) == 0) {
        double v = 0;
        if (absl::SimpleAtod(m[2].str(), &v)) total += v;
        break;
      }
    }
  }
  return total;
}

namespace {

constexpr char kName[] = "video-transcoder";
constexpr char kImage2[] = "my-registry/video-transcoder:v1.2.1";

std::string Quote(const std::string& s) { return "'" + absl::StrReplaceAll(s, {{"'", "'\\''"}}) + "'"; }

// Characters no POSIX shell treats specially in a word (no quoting, globbing, brace or tilde expansion).
bool ShellSafe(const std::string& word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](unsigned char c) {
    return std::isalnum(c) || (c != 0 && std::strchr("-_./:=@%+,", c) != nullptr);
  }) && word[0] != '=';
}

std::vector<std::string> PatchArgs(const std::string& type, const std::string& body) {
  return {"patch", "cloneset", kName, "--type=" + type, "-p", body};
}

}  // namespace

std::string ShellCommand(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  words.reserve(argv.size());
  for (const std::string& a : argv) words.push_back(ShellSafe(a) ? a : Quote(a));
  return absl::StrJoin(words, " ");
}

std::vector<std::string> DemoApplyArgs(const std::string& manifest_path) { return {"apply", "-f", manifest_path}; }

std::vector<std::string> DemoReplicasArgs(int replicas) {
  return PatchArgs("merge", absl::StrCat(R"({"spec":{"replicas":)", replicas, "}}"));
}

// kubectl reads and patches CloneSets in v1beta1, the CRD's preferred version: the partition is under rollingUpdate
// there (the seed's v1alpha1 manifest has it in updateStrategy; the API server converts).
std::vector<std::string> DemoCanaryArgs(int partition, const std::string& image) {
  return PatchArgs("json", absl::StrCat(R"([{"op":"replace","path":"/spec/updateStrategy/rollingUpdate/partition","value":)",
                                        partition, "},",
                                        R"({"op":"replace","path":"/spec/template/spec/containers/0/image","value":")",
                                        image, R"("}])"));
}

std::vector<std::string> DemoPartitionArgs(int partition) {
  return PatchArgs("json",
                   absl::StrCat(R"([{"op":"replace","path":"/spec/updateStrategy/rollingUpdate/partition","value":)",
                                partition, "}]"));
}

std::vector<std::string> DemoPodsToDeleteArgs(int replicas, const std::string& pod) {
  return PatchArgs("merge", absl::StrCat(R"({"spec":{"replicas":)", replicas, R"(,"scaleStrategy":{"podsToDelete":[")",
                                         pod, R"("]}}})"));
}

namespace {

struct StepReport {
  std::string title;
  absl::Duration took;
  double writes = 0;
  int pods_touched = 0;
};

class Demo {
 public:
  explicit Demo(const DemoOptions& o) : o_(o), tty_(isatty(STDOUT_FILENO) != 0) {}

  int Run();

 private:
  // Runs kubectl, echoing the command like a user would type it. False (and the output) on failure.
  bool Kubectl(const std::vector<std::string>& args, std::string* output = nullptr, bool echo = true) {
    std::string cmd = "kubectl --kubeconfig " + Quote(o_.kubeconfig);
    for (const std::string& a : args) absl::StrAppend(&cmd, " ", Quote(a));
    if (echo) {
      // Pasteable: the JSON bodies are quoted, or a shell would strip their quotes and brace-expand them.
      std::vector<std::string> argv = {"kubectl"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::cout << "  $ " << ShellCommand(argv) << "\n" << std::flush;
    }
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    if (p == nullptr) return false;
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    const int rc = pclose(p);
    if (output != nullptr) *output = out;
    if (rc != 0) std::cout << "  kubectl failed:\n" << out;
    return rc == 0;
  }

  // The demo's CloneSet and PVCs that exist before it starts, e.g. "CloneSet video-transcoder, 3 PVCs" ("" = none).
  std::string LeftoverObjects() {
    std::vector<std::string> found;
    if (client_->Get(absl::StrCat("/apis/apps.kruise.io/v1alpha1/namespaces/", o_.namespace_, "/clonesets/", kName))
            .ok()) {
      found.push_back(absl::StrCat("CloneSet ", kName));
    }
    auto pvcs = client_->Get(absl::StrCat("/api/v1/namespaces/", o_.namespace_, "/persistentvolumeclaims"));
    if (pvcs.ok()) {
      const nlohmann::json list = nlohmann::json::parse(*pvcs, nullptr, /*allow_exceptions=*/false);
      int kept = 0;
      if (list.is_object() && list.contains("items") && list["items"].is_array()) {
        for (const auto& item : list["items"]) {
          if (!item.is_object() || !item.contains("metadata") || !item["metadata"].is_object()) continue;
          const auto& name = item["metadata"].value("name", nlohmann::json());
          if (name.is_string() && name.get<std::string>().rfind(absl::StrCat("workspace-", kName, "-"), 0) == 0) {
            ++kept;
          }
        }
      }
      if (kept > 0) found.push_back(absl::StrCat(kept, " PVCs workspace-", kName, "-*"));
    }
    return absl::StrJoin(found, ", ");
  }

  absl::StatusOr<LiveCloneSet> Fetch() { return FetchCloneSet(*client_, server_, o_.namespace_, kName); }

  double Writes() {
    std::string metrics;
    if (!Kubectl({"get", "--raw", "/metrics"}, &metrics, false)) return 0;
    // kube-apiserver's apiserver_request_total has no user_agent label (the embedded cluster's has): on a real
    // control plane the controller's writes cannot be told from the other clients' here, so none are shown.
    bool any = false, labelled = false;
    for (size_t at = metrics.find("\napiserver_request_total{"); at != std::string::npos;
         at = metrics.find("\napiserver_request_total{", at + 1)) {
      any = true;
      const std::string line = metrics.substr(at + 1, metrics.find('\n', at + 1) - at - 1);
      labelled = labelled || line.find("user_agent=\"") != std::string::npos;
    }
    if (any && !labelled) writes_counted_ = false;
    return WritesFrom(metrics, {"cloneset-controller", "cloneset-executor"});
  }
  bool writes_counted_ = true;

  // Redraws the live view until `done` holds for the CloneSet, or fails after `timeout`.
  bool WaitFor(const std::string& what, const std::function<bool(const LiveCloneSet&)>& done,
               absl::Duration timeout = absl::Seconds(180)) {
    const absl::Time start = absl::Now();
    std::string last;
    int drawn_lines = 0;
    absl::StatusOr<LiveCloneSet> live;
    while (absl::Now() - start < timeout) {
      live = Fetch();
      if (live.ok()) {
        const std::string view = RenderStatus(*live, absl::Now());
        if (tty_) {
          // Redraw in place: move up over the previous frame, clear it, draw the new one.
          if (drawn_lines > 0) std::cout << "\033[" << drawn_lines << "A\033[J";
          std::cout << view << std::flush;
          drawn_lines = static_cast<int>(std::count(view.begin(), view.end(), '\n'));
        } else if (Summary(*live) != last) {
          last = Summary(*live);
          std::cout << absl::StrFormat("  [%5.1fs] %s\n", absl::ToDoubleSeconds(absl::Now() - start), last);
        }
        if (done(*live)) {
          std::cout << "  -> " << what << " (" << absl::FormatDuration(absl::Trunc(absl::Now() - start,
                                                                                  absl::Milliseconds(100)))
                    << ")\n" << std::flush;
          return true;
        }
      }
      absl::SleepFor(absl::Milliseconds(300));
    }
    std::cout << "\n  TIMEOUT waiting until " << what << "\n";
    if (live.ok()) std::cout << RenderStatus(*live, absl::Now());
    else std::cout << "  " << live.status().message() << "\n";
    ++failures_;
    return false;
  }

  static std::string Summary(const LiveCloneSet& live) {
    const auto facts = FactsOf(live);
    int ready = 0, updated = 0;
    std::vector<std::string> rows;
    for (const auto& [name, f] : facts) {
      ready += f.ready ? 1 : 0;
      const bool upd = planner::RevisionMatches(*FindPod(live, name), live.clone_set.status().update_revision());
      updated += upd ? 1 : 0;
      rows.push_back(absl::StrCat(name, f.ready ? "" : "(not ready)", upd ? "*" : ""));
    }
    return absl::StrFormat("pods %d ready %d updated %d: %s", static_cast<int>(facts.size()), ready, updated,
                           absl::StrJoin(rows, " "));
  }

  static const pb::Pod* FindPod(const LiveCloneSet& live, const std::string& name) {
    for (const pb::Pod& p : live.pods) {
      if (p.metadata().name() == name) return &p;
    }
    return nullptr;
  }

  // All `n` pods ready at the update revision, observed by the controller.
  static bool Settled(const LiveCloneSet& live, int n, int updated) {
    const pb::CloneSetStatus& st = live.clone_set.status();
    if (st.observed_generation() != live.clone_set.metadata().generation()) return false;
    if (static_cast<int>(live.pods.size()) != n) return false;  // terminating pods count until gone
    int ready = 0, upd = 0;
    for (const pb::Pod& p : live.pods) {
      ready += planner::IsK8sReady(p) && planner::IsActive(p) ? 1 : 0;
      upd += planner::RevisionMatches(p, st.update_revision()) ? 1 : 0;
    }
    return ready == n && upd == updated && st.ready_replicas() == n && st.updated_replicas() == updated;
  }

  void Check(bool ok, const std::string& what) {
    std::cout << (ok ? "  ok    " : "  FAIL  ") << what << "\n";
    if (!ok) ++failures_;
  }

  void Title(int n, const std::string& title, const std::string& why) {
    if (!o_.fast && n > 1) absl::SleepFor(absl::Seconds(2));
    std::cout << "\n== Step " << n << ": " << title << "\n  " << why << "\n" << std::flush;
  }

  int Step(int n, const std::string& title, const std::string& why, const std::function<bool()>& body);

  DemoOptions o_;
  bool tty_;
  std::unique_ptr<kube::RestClient> client_;
  std::string server_;
  int failures_ = 0;
  std::vector<StepReport> reports_;
};

int Demo::Step(int n, const std::string& title, const std::string& why, const std::function<bool()>& body) {
  Title(n, title, why);
  const double writes_before = Writes();
  const absl::Time start = absl::Now();
  const int failures_before = failures_;
  const bool ok = body();
  reports_.push_back(StepReport{title, absl::Now() - start, Writes() - writes_before, 0});
  if (!ok || failures_ > failures_before) {
    std::cout << "\nDEMO FAILED at step " << n << " (" << title << ")\n";
    return 1;
  }
  return 0;
}

int Demo::Run() {
  auto config = kube::LoadKubeconfigFile(o_.kubeconfig);
  if (!config.ok()) {
    std::cerr << "demo: " << config.status().message() << "\n";
    return 1;
  }
  kube::RestClientOptions ro;
  ro.user_agent = "cloneset-demo";
  auto client = kube::NewHttpRestClient(*config, ro);
  if (!client.ok()) {
    std::cerr << "demo: " << client.status().message() << "\n";
    return 1;
  }
  client_ = *std::move(client);
  server_ = config->server;
  // The story's checks (a fresh PVC per new pod, exact pod counts) hold only on a cluster without the objects of an
  // earlier run; ./run demo starts from a purged cluster, anyone else gets told how to get one.
  if (std::string leftover = LeftoverObjects(); !leftover.empty()) {
    std::cout << "DEMO FAILED: the cluster still has " << leftover
              << " from an earlier run; start from a clean cluster (./run down --purge, then ./run demo)\n";
    return 1;
  }
  std::map<std::string, PodFacts> three, five, canary, all, four;
  auto facts_now = [&]() -> std::map<std::string, PodFacts> {
    auto live = Fetch();
    return live.ok() ? FactsOf(*live) : std::map<std::string, PodFacts>{};
  };
  auto same_pods = [&](const std::map<std::string, PodFacts>& before, const std::map<std::string, PodFacts>& after,
                       const std::string& when) {
    bool names = before.size() == after.size(), uids = true, claims = true;
    for (const auto& [name, f] : before) {
      auto it = after.find(name);
      if (it == after.end()) { names = false; continue; }
      uids = uids && it->second.uid == f.uid;
      claims = claims && it->second.claim == f.claim && !f.claim.empty();
    }
    Check(names, absl::StrCat("same pod names ", when));
    Check(uids, absl::StrCat("same pod UIDs ", when, " (no pod was recreated)"));
    Check(claims, absl::StrCat("same PVCs ", when, " (workspaces kept)"));
  };

  if (Step(1, "apply the seed manifests and wait until 3 pods are ready",
           "StorageClass, ConfigMap, Service and the CloneSet with a per-pod PVC template, exactly as written.",
           [&] {
             for (const char* f : {"storageclass.yaml", "configmap.yaml", "service.yaml", "cloneset.yaml"}) {
               if (!Kubectl(DemoApplyArgs(o_.manifests_dir + "/" + f))) return false;
             }
             if (!WaitFor("3 pods ready", [](const LiveCloneSet& l) { return Settled(l, 3, 3); })) return false;
             three = facts_now();
             Check(three.size() == 3, "3 pods");
             for (const auto& [name, f] : three) {
               const std::string id = name.substr(std::string(kName).size() + 1);
               Check(f.claim == absl::StrCat("workspace-", kName, "-", id),
                     absl::StrCat(name, " has its own PVC ", f.claim.empty() ? "(none)" : f.claim));
             }
             return true;
           }) != 0) return 1;
  reports_.back().pods_touched = 3;

  if (Step(2, "scale to 5", "Two more pods, each with a fresh PVC; the first three are untouched.", [&] {
        if (!Kubectl(DemoReplicasArgs(5))) return false;
        if (!WaitFor("5 pods ready", [](const LiveCloneSet& l) { return Settled(l, 5, 5); })) return false;
        five = facts_now();
        Check(five.size() == 5, "5 pods");
        bool kept = true;
        for (const auto& [name, f] : three) kept = kept && five.count(name) && five[name].uid == f.uid;
        Check(kept, "the original 3 pods kept their names and UIDs");
        std::set<std::string> claims;
        for (const auto& [_, f] : five) if (!f.claim.empty()) claims.insert(f.claim);
        Check(claims.size() == 5, "5 distinct PVCs");
        return true;
      }) != 0) return 1;
  reports_.back().pods_touched = 2;

  if (Step(3, "canary: in-place upgrade of 2 pods (partition 3)",
           "A JSON patch changes only the image, so pods are upgraded in place: the container restarts, the pod, "
           "its IP and its PVC stay. partition 3 keeps 3 pods on the old version.",
           [&] {
             if (!Kubectl(DemoCanaryArgs(3, kImage2))) return false;
             if (!WaitFor("2 of 5 pods upgraded and ready", [](const LiveCloneSet& l) { return Settled(l, 5, 2); })) {
               return false;
             }
             canary = facts_now();
             same_pods(five, canary, "after the canary");
             int upgraded = 0, restarted_ok = 0, untouched_ok = 0;
             for (const auto& [name, f] : canary) {
               if (!five.count(name)) continue;
               if (f.image == kImage2) {
                 ++upgraded;
                 restarted_ok += f.restarts == five[name].restarts + 1 ? 1 : 0;
               } else {
                 untouched_ok += f.restarts == five[name].restarts ? 1 : 0;
               }
             }
             Check(upgraded == 2, absl::StrCat("exactly 2 pods run ", kImage2, " (found ", upgraded, ")"));
             Check(restarted_ok == 2, "their restartCount went up by exactly one");
             Check(untouched_ok == 3, "the 3 others were not restarted");
             return true;
           }) != 0) return 1;
  reports_.back().pods_touched = 2;

  if (Step(4, "finish the rollout (partition 0)", "The remaining 3 pods are upgraded in place, one at a time "
           "(maxUnavailable 1).", [&] {
             if (!Kubectl(DemoPartitionArgs(0))) return false;
             if (!WaitFor("5 of 5 pods upgraded and ready", [](const LiveCloneSet& l) { return Settled(l, 5, 5); })) {
               return false;
             }
             all = facts_now();
             same_pods(five, all, "after the full upgrade");
             bool once = true, image = true;
             for (const auto& [name, f] : all) {
               once = once && five.count(name) && f.restarts == five[name].restarts + 1;
               image = image && f.image == kImage2;
             }
             Check(image, absl::StrCat("every pod runs ", kImage2));
             Check(once, "every pod restarted exactly once over the whole upgrade");
             return true;
           }) != 0) return 1;
  reports_.back().pods_touched = 3;

  std::string chosen;
  if (Step(5, "remove one chosen pod (podsToDelete, replicas 4)",
           "Unlike a Deployment, you pick which pod goes away.", [&] {
             chosen = all.rbegin()->first;
             std::cout << "  chosen pod: " << chosen << "\n";
             if (!Kubectl(DemoPodsToDeleteArgs(4, chosen))) return false;
             if (!WaitFor("4 pods ready", [](const LiveCloneSet& l) { return Settled(l, 4, 4); })) return false;
             four = facts_now();
             Check(!four.count(chosen), absl::StrCat(chosen, " is gone"));
             bool kept = true;
             for (const auto& [name, f] : all) {
               if (name != chosen) kept = kept && four.count(name) && four[name].uid == f.uid;
             }
             Check(kept, "the other 4 pods are the same pods (names and UIDs)");
             std::string pvcs;
             Kubectl({"get", "pvc", all[chosen].claim, "-o", "name"}, &pvcs, false);
             Check(pvcs.find(all[chosen].claim) != std::string::npos,
                   absl::StrCat("its PVC ", all[chosen].claim, " is retained (pvcRetentionPolicy: Retain)"));
             return true;
           }) != 0) return 1;
  reports_.back().pods_touched = 1;

  if (Step(6, "scale to 2", "Scale-in removes pods; their PVCs are kept for debugging (Retain).", [&] {
        if (!Kubectl(DemoReplicasArgs(2))) return false;
        if (!WaitFor("2 pods ready", [](const LiveCloneSet& l) { return Settled(l, 2, 2); })) return false;
        const auto two = facts_now();
        bool subset = two.size() == 2;
        for (const auto& [name, f] : two) subset = subset && four.count(name) && four[name].uid == f.uid;
        Check(subset, "2 pods left, both from before (nothing recreated)");
        auto live = Fetch();
        Check(live.ok() && live->pvcs.size() == 5, "all 5 PVCs still exist");
        return true;
      }) != 0) return 1;
  reports_.back().pods_touched = 2;

  std::cout << "\n== Summary\n";
  std::cout << absl::StrFormat("  %-55s %8s %10s %12s\n", "STEP", "TIME", "API WRITES", "WRITES/POD");
  for (const StepReport& r : reports_) {
    std::cout << absl::StrFormat(
        "  %-55s %8s %10s %12s\n", r.title, absl::FormatDuration(absl::Trunc(r.took, absl::Milliseconds(100))),
        writes_counted_ ? absl::StrFormat("%.0f", r.writes) : "-",
        writes_counted_ && r.pods_touched > 0 ? absl::StrFormat("%.1f", r.writes / r.pods_touched) : "-");
  }
  if (writes_counted_) {
    std::cout << "  API writes: the controller's write requests (create, update, patch, delete; conflicts included;\n"
                 "  leases and events excluded)"
                 " from the embedded cluster's\n  apiserver_request_total{user_agent=\"cloneset-executor\"}.\n";
  } else {
    std::cout << "  API writes: not shown: this API server's apiserver_request_total has no user_agent label\n"
                 "  (on ./run up --cluster real, REAL_AUDIT_LOG=1 has kube-apiserver log every write by user).\n";
  }
  int in_place = 0, recreated = 0;
  for (const auto& [name, f] : five) {
    auto it = all.find(name);
    if (it != all.end() && it->second.uid == f.uid && it->second.image != f.image) ++in_place;
    if (it == all.end() || it->second.uid != f.uid) ++recreated;
  }
  std::cout << absl::StrFormat("  Image upgrade: %d pods upgraded in place (same names, UIDs and PVCs), %d recreated.\n",
                               in_place, recreated);
  std::cout << (failures_ == 0 ? "\nEvery check passed.\n" : "\nSome checks FAILED.\n");
  return failures_ == 0 ? 0 : 1;
}

}  // namespace

int RunDemo(const DemoOptions& options) { return Demo(options).Run(); }

}  // namespace cloneset::demo
