// cloneset-demo: the `./run demo` story (demo.h) against the cluster of a kubeconfig. A development tool run by
// tools/run.d/demo.sh, not part of the product CLI (clonesetctl).
//
//   cloneset-demo --kubeconfig PATH --manifests DIR [--namespace NS] [--fast]
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/demo/demo.h"

ABSL_FLAG(std::string, kubeconfig, "", "kubeconfig of the cluster to play the story on (default: $KUBECONFIG)");
ABSL_FLAG(std::string, manifests, "", "directory with the seed 000 manifests (tests/data/seed000)");
ABSL_FLAG(std::string, namespace, "default", "namespace of the story's objects");
ABSL_FLAG(bool, fast, false, "no pauses between steps");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "cloneset-demo --kubeconfig PATH --manifests DIR [--namespace NS] [--fast]: the ./run demo story");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() > 1) {
    std::cerr << "cloneset-demo: unexpected argument " << positional[1] << " (cloneset-demo --help)\n";
    return 2;
  }
  std::string kubeconfig = absl::GetFlag(FLAGS_kubeconfig);
  if (kubeconfig.empty()) {
    if (const char* env = std::getenv("KUBECONFIG"); env != nullptr) kubeconfig = env;
  }
  if (kubeconfig.empty()) {
    std::cerr << "cloneset-demo: --kubeconfig is required (or $KUBECONFIG)\n";
    return 2;
  }
  if (absl::GetFlag(FLAGS_manifests).empty()) {
    std::cerr << "cloneset-demo: --manifests is required (the seed 000 manifests' directory)\n";
    return 2;
  }
  return cloneset::demo::RunDemo(cloneset::demo::DemoOptions{kubeconfig, absl::GetFlag(FLAGS_manifests),
                                                             absl::GetFlag(FLAGS_namespace), absl::GetFlag(FLAGS_fast)});
}
