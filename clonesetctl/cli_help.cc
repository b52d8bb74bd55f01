#include "clonesetctl/cli_help.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cloneset::clonesetctl {
namespace {

constexpr char kRolloutUsage[] = R"(clonesetctl rollout: kubectl's rollout commands for a CloneSet

  clonesetctl rollout status NAME [-n NS] [--timeout 5m] [--watch=false] [--partition-ok]
      Waits (watching the API) until the rollout is done and prints kubectl's progress messages. Exit code 0
      when done, 1 on --timeout ("timed out waiting for the condition"), on ProgressDeadlineExceeded and on an
      invalid spec. A rollout held by its partition is done only with --partition-ok (a canary step).
  clonesetctl rollout history NAME [--revision N]
      The ControllerRevisions (number, kubernetes.io/change-cause); with --revision the pod template of one
      revision and what changed from the revision before it.
  clonesetctl rollout undo NAME [--to-revision N]
      Restores the pod template of revision N (default: the previous one); the planner rolls it out with the
      CloneSet's update strategy.
  clonesetctl rollout pause|resume NAME
      Sets or clears spec.updateStrategy.paused.
  clonesetctl rollout restart NAME
      Stamps kubectl.kubernetes.io/restartedAt on the pod template: pods are recreated under ReCreate, patched
      in place under InPlaceIfPossible/InPlaceOnly (containers that read the annotation through env restart).
  clonesetctl rollout next NAME [--step N]
      Lowers the partition by N pods (default: one batch, the resolved maxUnavailable).
  status and next resolve the spec as the planner does with --feature-gates Name=true,... and
  --cloneset-scaling-exclude-preparing-delete, as the cluster's executor runs with them.)";

constexpr char kStatusUsage[] = R"(clonesetctl status NAME [-n NAMESPACE] [-w] [--interval 1s]
  Rollout progress of one CloneSet, its pods and its conditions. With -w the view redraws in place on a
  terminal (plain successive views otherwise) until Ctrl-C.)";

constexpr char kPlanUsage[] = R"(clonesetctl plan NAME [-n NAMESPACE] --planner ADDRESS [-o table|json]
                 [--feature-gates Name=true,...] [--cloneset-scaling-exclude-preparing-delete]
  What the planner would do next for the live CloneSet, without doing it, and what holds the rollout
  (partition, paused, maxUnavailable budget, lifecycle hooks). --planner: the planner's gRPC address (HOST:PORT,
  or a gRPC target such as dns:///NAME.NAMESPACE.svc:PORT), else $CLONESET_PLANNER; one of them is required.
  --feature-gates and --cloneset-scaling-exclude-preparing-delete: as the cluster's executor (kruise-manager) runs
  with them.)";

constexpr char kSimulateUsage[] = R"(clonesetctl simulate -f cloneset.yaml [--set image=IMG] [--set partition=N]
                     [--set replicas=N] [--ready-after 30s] [--fail-rate 0.1] [--seed N] [-o table|json]
                     [--feature-gates Name=true,...] [--cloneset-scaling-exclude-preparing-delete]
  Replays the whole rollout offline with the real planner, a simulated clock and simulated pods, planned with
  upstream's feature gates as given (as kruise-manager's --feature-gates; default: upstream's defaults).)";

constexpr char kMigrateUsage[] = R"(clonesetctl migrate deployment/NAME [-n NS] [--dry-run] [--max-unavailable N]
                    [--timeout 5m]
  Creates the CloneSet NAME with the Deployment's selector and pod template (0 replicas) and moves the
  replicas over: each step scales the Deployment down and the CloneSet up by --max-unavailable (default 1)
  pods, then waits (at most --timeout, default 5m) until the CloneSet has that many available pods and the
  Deployment no more than its new count. Run again after an interruption, it continues where it stopped.
  --dry-run prints the steps only.

clonesetctl migrate from-kruise [-n NS | -A] [--feature-gates Name=true,...]
  Checks, changing nothing, that CloneSets which OpenKruise's kruise-manager manages can be taken over without
  a rollout: plans every CloneSet of the namespace (-A: all) as the executor would, with kruise-manager's
  --feature-gates and --cloneset-scaling-exclude-preparing-delete when given, and lists each write it would
  make to a pod, claim, revision or spec (none for a steady CloneSet that kruise-manager wrote), then what must
  change first: kruise-manager still running (its Lease), its admission webhooks for CloneSets and pods with
  failurePolicy Fail, a CloneSet CRD that stores another version or converts through a webhook. Exit code 0
  when safe, 1 otherwise.)";

constexpr char kCompletionUsage[] = R"(clonesetctl completion bash|zsh
  Prints a completion script for clonesetctl and kubectl-cloneset:
    source <(clonesetctl completion bash)      # bash, e.g. in ~/.bashrc
    source <(clonesetctl completion zsh)       # zsh, e.g. in ~/.zshrc
  `kubectl cloneset <TAB>` completes through the kubectl_complete-cloneset that ./run install-plugin links.)";

const std::vector<std::string>& Commands() {
  static const std::vector<std::string> kCommands = {"completion", "help", "migrate", "plan", "rollout",
                                                     "simulate", "status"};
  return kCommands;
}
const std::vector<std::string>& RolloutVerbs() {
  static const std::vector<std::string> kVerbs = {"history", "next", "pause", "restart", "resume", "status", "undo"};
  return kVerbs;
}

std::vector<std::string> FlagsOf(const std::string& command, const std::string& verb) {
  std::vector<std::string> common = {"--namespace", "--kubeconfig", "--context", "--help"};
  std::vector<std::string> own;
  if (command == "status") own = {"--watch", "--interval"};
  const std::vector<std::string> gates = {"--feature-gates", "--cloneset-scaling-exclude-preparing-delete"};
  if (command == "plan") own = {"--planner", "--output"};
  if (command == "simulate") {
    own = {"--filename", "--set", "--ready-after", "--start-delay", "--fail-rate", "--seed", "--nodes", "--output"};
  }
  if (command == "migrate") own = {"--dry-run", "--max-unavailable", "--timeout", "-A"};
  if (command == "rollout") {
    if (verb == "status") own = {"--timeout", "--watch", "--partition-ok"};
    if (verb == "history") own = {"--revision"};
    if (verb == "undo") own = {"--to-revision"};
    if (verb == "next") own = {"--step"};
  }
  if (command == "plan" || command == "simulate" || (command == "rollout" && (verb == "status" || verb == "next")) ||
      (command == "migrate" && verb == "from-kruise")) {
    own.insert(own.end(), gates.begin(), gates.end());
  }
  own.insert(own.end(), common.begin(), common.end());
  return own;
}

std::vector<std::string> WithPrefix(const std::vector<std::string>& all, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& c : all) {
    if (absl::StartsWith(c, prefix)) out.push_back(c);
  }
  return out;
}

// The words that are not flags (and not flag values of the flags that take one), before the last word.
std::vector<std::string> Positionals(const std::vector<std::string>& words) {
  static const std::vector<std::string> kBoolFlags = {"--watch", "-w", "--partition-ok", "--dry-run", "--help",
                                                       "-h", "--fast",
                                                       "--cloneset-scaling-exclude-preparing-delete"};
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.empty() || w[0] != '-') {
      out.push_back(w);
      continue;
    }
    const bool has_value = w.find('=') != std::string::npos ||
                           std::find(kBoolFlags.begin(), kBoolFlags.end(), w) != kBoolFlags.end();
    if (!has_value) ++i;  // the flag's value is the next word
  }
  return out;
}

}  // namespace

std::string UsageText(const std::string& command) {
  static const std::map<std::string, std::string> kUsages = {
      {"rollout", kRolloutUsage}, {"status", kStatusUsage},   {"plan", kPlanUsage},
      {"simulate", kSimulateUsage}, {"migrate", kMigrateUsage}, {"completion", kCompletionUsage}};
  if (auto it = kUsages.find(command); it != kUsages.end()) {
    return absl::StrCat("usage: ", it->second, "\n\nCommon flags: -n/--namespace NS, --kubeconfig FILE, ",
                        "--context NAME. Exit codes: 0 success, 1 failure, 2 usage error.\n");
  }
  return absl::StrCat(R"(clonesetctl: see, plan, simulate and roll out CloneSets

usage: clonesetctl COMMAND [NAME] [flags]

  rollout status|history|undo|pause|resume|restart|next NAME    kubectl's rollout commands for a CloneSet
  status NAME [-w]             rollout progress, pods and conditions
  plan NAME                    what the planner would do next, and what holds the rollout
  simulate -f FILE [--set k=v] replay a rollout offline with the real planner
  migrate deployment/NAME      move a Deployment's workload to a CloneSet (--dry-run prints the steps)
  migrate from-kruise          check that kruise-manager's CloneSets can be taken over without a rollout
  completion bash|zsh          shell completion script
  help [COMMAND]               this text, or one command's

Flags for the live commands: -n/--namespace NS (default "default"), --kubeconfig FILE (default $KUBECONFIG, then
~/.kube/config), --context NAME.
Exit codes: 0 success, 1 failure (unreachable cluster or planner, unknown CloneSet, rollout failed or timed out),
2 usage error or invalid manifest.
Installed as `kubectl-cloneset` on the PATH it is also `kubectl cloneset ...` (./run install-plugin).
`clonesetctl help COMMAND` or `clonesetctl COMMAND --help` shows one command.
)");
}

bool WantsHelp(const std::vector<std::string>& args, std::string* command) {
  bool help = false;
  std::string first;
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help" || a == "-help" || a == "--helpfull" || a == "-helpfull" || a == "--helpshort" ||
        a == "-helpshort") {
      help = true;
    } else if (first.empty() && !a.empty() && a[0] != '-') {
      first = a;
    }
  }
  if (first == "help") {
    help = true;
    first.clear();
    for (size_t i = 0, seen = 0; i < args.size(); ++i) {
      if (args[i].empty() || args[i][0] == '-') continue;
      if (seen++ == 1) first = args[i];
    }
  }
  if (help) *command = first;
  return help;
}

std::optional<std::string> CompletionScript(const std::string& shell) {
  if (shell == "bash") {
    return R"(# bash completion for clonesetctl and kubectl-cloneset (clonesetctl completion bash)
_clonesetctl() {
  local IFS=$'\n'
  COMPREPLY=($("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null | grep -v '^:'))
}
complete -o default -F _clonesetctl clonesetctl kubectl-cloneset
)";
  }
  if (shell == "zsh") {
    return R"(#compdef clonesetctl kubectl-cloneset
# zsh completion for clonesetctl and kubectl-cloneset (clonesetctl completion zsh)
_clonesetctl() {
  local -a candidates
  candidates=("${(@f)$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null | grep -v '^:')}")
  compadd -a candidates
}
if (( $+functions[compdef] )); then compdef _clonesetctl clonesetctl kubectl-cloneset; fi
)";
  }
  return std::nullopt;
}

bool CompletesName(const std::vector<std::string>& words) {
  if (words.empty() || (!words.back().empty() && words.back()[0] == '-')) return false;
  const std::vector<std::string> pos = Positionals(words);
  if (pos.size() == 1) return pos[0] == "status" || pos[0] == "plan";
  return pos.size() == 2 && pos[0] == "rollout";
}

std::vector<std::string> CompleteWords(const std::vector<std::string>& words, const std::vector<std::string>& names) {
  if (words.empty()) return Commands();
  const std::string& typed = words.back();
  const std::vector<std::string> pos = Positionals(words);
  const std::string command = pos.empty() ? "" : pos[0];
  const std::string verb = pos.size() > 1 ? pos[1] : "";
  if (!typed.empty() && typed[0] == '-') return WithPrefix(FlagsOf(command, verb), typed);
  if (pos.empty()) return WithPrefix(Commands(), typed);
  if (command == "rollout" && pos.size() == 1) return WithPrefix(RolloutVerbs(), typed);
  if (command == "completion" && pos.size() == 1) return WithPrefix({"bash", "zsh"}, typed);
  if (command == "help" && pos.size() == 1) return WithPrefix(Commands(), typed);
  if (command == "migrate" && pos.size() == 1) return WithPrefix({"deployment/", "from-kruise"}, typed);
  if (CompletesName(words)) return WithPrefix(names, typed);
  return {};
}

}  // namespace cloneset::clonesetctl
