// The `./run demo` story (the dev binary cloneset-demo, tools/demo/main.cc): plays the seed 000 story against a
// running cluster with kubectl, shows a live view of the pods while waiting, and checks every step (same pod names,
// UIDs and PVCs after the in-place upgrade, restart counts, canary size, the chosen pod gone, ...). Returns the
// process exit code: 0 when every check passed. Development tooling: it ships in no product binary.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "clonesetctl/live.h"

namespace cloneset::demo {

// The demo reads the cluster as clonesetctl status does and shows its view.
using clonesetctl::LiveCloneSet;
namespace pb = ::cloneset::planner::v1;

struct DemoOptions {
  std::string kubeconfig;
  std::string manifests_dir;  // storageclass.yaml, configmap.yaml, service.yaml, cloneset.yaml
  std::string namespace_ = "default";
  bool fast = false;
};

int RunDemo(const DemoOptions& options);

// What the checks compare between steps, per pod name.
struct PodFacts {
  std::string uid;
  std::string node;
  std::string revision;
  std::string image;
  std::string claim;  // the PVC with the pod's instance id
  int restarts = 0;
  bool ready = false;
};
std::map<std::string, PodFacts> FactsOf(const LiveCloneSet& live);

// The command line a user can paste into a POSIX shell to run `argv`: each word as it is when it has no character a
// shell treats specially, else in single quotes (a quote inside as '\''), so JSON bodies reach kubectl unchanged.
std::string ShellCommand(const std::vector<std::string>& argv);

// The kubectl arguments (after "kubectl") of the demo's steps, as run and as printed.
std::vector<std::string> DemoApplyArgs(const std::string& manifest_path);
std::vector<std::string> DemoReplicasArgs(int replicas);                          // merge patch of spec.replicas
std::vector<std::string> DemoCanaryArgs(int partition, const std::string& image);  // JSON patch: partition + image
std::vector<std::string> DemoPartitionArgs(int partition);                         // JSON patch: partition
std::vector<std::string> DemoPodsToDeleteArgs(int replicas, const std::string& pod);  // merge patch

// Sum of apiserver_request_total for write verbs (POST, PUT, PATCH, DELETE) whose user_agent starts with one of
// `agents`, from a Prometheus text exposition. Leases and events are not counted.
double WritesFrom(const std::string& metrics_text, const std::vector<std::string>& agents);

}  // namespace cloneset::demo
