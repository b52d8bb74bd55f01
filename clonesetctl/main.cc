// clonesetctl: see, plan and simulate CloneSet rollouts. Also a kubectl plugin when installed as kubectl-cloneset.
//
//   clonesetctl simulate -f cloneset.yaml [--set image=...] [--set partition=N] [--ready-after 30s]
//                        [--fail-rate 0.1] [--seed N] [-o table|json]
//   clonesetctl status NAME [-n ns] [-w]
//   clonesetctl plan NAME [-n ns] --planner HOST:PORT   (or $CLONESET_PLANNER)
//   clonesetctl rollout status|history|undo|pause|resume|restart|next NAME [...]   (rollout.h, rollout_io.h)
//   clonesetctl completion bash|zsh                                               (cli_help.h)
//
// Exit codes: 0 success, 1 runtime error (unreachable cluster or planner, unknown CloneSet), 2 usage error or
// invalid manifest.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/flag_aliases.h"
#include "google/protobuf/util/json_util.h"
#include "kube/config.h"
#include "kube/rest_client.h"
#include "planapi/feature_gates.h"
#include "clonesetctl/cli_help.h"
#include "clonesetctl/live.h"
#include "clonesetctl/render.h"
#include "clonesetctl/rollout.h"
#include "clonesetctl/rollout_io.h"
#include "clonesetctl/simulate.h"

ABSL_FLAG(std::string, f, "", "simulate: the CloneSet manifest (YAML; the first CloneSet document is used)");
ABSL_FLAG(std::vector<std::string>, set, {},
          "simulate: changes for the new spec, key=value (repeatable or comma-separated): image, "
          "image.<container>, replicas, partition, maxUnavailable, maxSurge, paused, type, minReadySeconds");
ABSL_FLAG(absl::Duration, ready_after, absl::Seconds(5), "simulate: container running -> ready");
ABSL_FLAG(absl::Duration, start_delay, absl::Seconds(1), "simulate: pod created or image changed -> running");
ABSL_FLAG(absl::Duration, terminate_after, absl::ZeroDuration(), "simulate: graceful termination of a deleted pod");
ABSL_FLAG(double, fail_rate, 0, "simulate: probability that a start of a pod's containers runs but never becomes ready");
ABSL_FLAG(uint64_t, seed, 1, "simulate: seed of the failures and of new instance ids");
ABSL_FLAG(int32_t, nodes, 3, "simulate: simulated nodes");
ABSL_FLAG(std::string, o, "table", "output format: table or json");
ABSL_FLAG(std::string, n, "default", "namespace of the CloneSet");
ABSL_FLAG(bool, A, false, "migrate from-kruise: every namespace (kubectl's -A)");
ABSL_FLAG(bool, w, false, "status: watch, redrawing every --interval");
ABSL_FLAG(absl::Duration, interval, absl::Seconds(1), "status -w: refresh period");
ABSL_FLAG(std::string, kubeconfig, "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)");
ABSL_FLAG(std::string, context, "", "kubeconfig context");
ABSL_FLAG(std::string, planner, "",
          "plan: the planner's gRPC address, HOST:PORT or a gRPC target such as dns:///NAME.NAMESPACE.svc:PORT "
          "(default: $CLONESET_PLANNER)");
ABSL_FLAG(absl::Duration, timeout, absl::ZeroDuration(), "rollout status: give up after this long (0: never)");
ABSL_FLAG(bool, partition_ok, false, "rollout status: a rollout held by its partition counts as done");
ABSL_FLAG(int64_t, revision, 0, "rollout history: show this revision's template and changes");
ABSL_FLAG(int64_t, to_revision, 0, "rollout undo: the revision to restore (0: the previous one)");
ABSL_FLAG(bool, dry_run, false, "migrate: print the steps, change nothing");
ABSL_FLAG(int32_t, max_unavailable, 1, "migrate: pods moved per step (the unavailability budget)");
ABSL_FLAG(int32_t, step, 0, "rollout next: lower the partition by this many pods (0: one maxUnavailable batch)");
ABSL_FLAG(std::string, feature_gates, "",
          "simulate, plan, rollout: upstream's gates as the executor (kruise-manager) runs with them, "
          "--feature-gates=Name=true,Other=false, so that predictions match that cluster");
ABSL_FLAG(bool, cloneset_scaling_exclude_preparing_delete, false,
          "simulate, plan, rollout: as the executor's --cloneset-scaling-exclude-preparing-delete");

namespace cc = cloneset::clonesetctl;

namespace {


int Fail(const absl::Status& s, int code = 1) {
  std::cerr << "error: " << s.message() << "\n";
  return code;
}

// Long aliases (-f/--filename, -n/--namespace, -w/--watch, -o/--output), kubectl's and upstream's dashed names,
// and repeated --set values, which absl flags would otherwise overwrite, folded into one comma-separated --set.
std::vector<std::string> NormalizeArgs(int argc, char** argv) {
  static const std::vector<cloneset::base::FlagAlias> kAliases = {
      {"filename", "f"}, {"namespace", "n"}, {"watch", "w"}, {"output", "o"},
      {"ready-after", "ready_after"}, {"fail-rate", "fail_rate"}, {"start-delay", "start_delay"},
      {"terminate-after", "terminate_after"}, {"partition-ok", "partition_ok"},
      {"to-revision", "to_revision"}, {"dry-run", "dry_run"}, {"max-unavailable", "max_unavailable"},
      {"feature-gates", "feature_gates"},
      {"cloneset-scaling-exclude-preparing-delete", "cloneset_scaling_exclude_preparing_delete"}};
  std::vector<std::string> out{argv[0]};
  std::vector<std::string> sets;
  for (int i = 1; i < argc; ++i) {
    std::string a = cloneset::base::RewriteFlagAlias(argv[i], kAliases);
    if (a == "--set" || a == "-set") {
      if (i + 1 < argc) sets.push_back(argv[++i]);
      continue;
    }
    if (a.rfind("--set=", 0) == 0) {
      sets.push_back(a.substr(6));
      continue;
    }
    out.push_back(a);
  }
  if (!sets.empty()) out.push_back("--set=" + absl::StrJoin(sets, ","));
  return out;
}

absl::StatusOr<std::pair<std::unique_ptr<cloneset::kube::RestClient>, std::string>> Connect() {
  std::string path = absl::GetFlag(FLAGS_kubeconfig);
  auto sources = cloneset::kube::ConfigSources::FromEnvironment(path, absl::GetFlag(FLAGS_context));
  auto config = cloneset::kube::LoadClientConfig(sources);
  if (!config.ok()) return config.status();
  cloneset::kube::RestClientOptions options;
  options.user_agent = "clonesetctl";
  options.max_retries = 1;
  options.request_timeout = absl::Seconds(10);
  auto client = cloneset::kube::NewHttpRestClient(*config, options);
  if (!client.ok()) return client.status();
  return std::make_pair(*std::move(client), config->server);
}

// The planner's gates from --feature-gates and --cloneset-scaling-exclude-preparing-delete, read as the executor
// reads them; each gate that has no effect on CloneSets is named on stderr.
absl::StatusOr<cloneset::planner::v1::FeatureGates> FeatureGates() {
  auto settings = cloneset::planapi::ParseFeatureGates(absl::GetFlag(FLAGS_feature_gates),
                                                       absl::GetFlag(FLAGS_cloneset_scaling_exclude_preparing_delete));
  if (!settings.ok()) return settings.status();
  for (const std::string& w : settings->warnings) std::cerr << "warning: " << w << "\n";
  return settings->gates;
}

int Simulate() {
  const std::string file = absl::GetFlag(FLAGS_f);
  if (file.empty()) return Fail(absl::InvalidArgumentError("simulate needs -f cloneset.yaml"), 2);
  std::ifstream in(file);
  if (!in) return Fail(absl::InvalidArgumentError(absl::StrCat("cannot read ", file)), 2);
  std::stringstream text;
  text << in.rdbuf();
  const std::string format = absl::GetFlag(FLAGS_o);
  if (format != "table" && format != "json") {
    return Fail(absl::InvalidArgumentError("-o must be table or json"), 2);
  }
  cc::SimulateInput input;
  input.manifest_yaml = text.str();
  input.sets = absl::GetFlag(FLAGS_set);
  input.options.ready_after = absl::GetFlag(FLAGS_ready_after);
  input.options.start_delay = absl::GetFlag(FLAGS_start_delay);
  input.options.terminate_after = absl::GetFlag(FLAGS_terminate_after);
  input.options.fail_rate = absl::GetFlag(FLAGS_fail_rate);
  input.options.seed = absl::GetFlag(FLAGS_seed);
  input.options.nodes = absl::GetFlag(FLAGS_nodes);
  auto gates = FeatureGates();
  if (!gates.ok()) return Fail(gates.status(), 2);
  input.options.feature_gates = *gates;
  if (input.options.fail_rate < 0 || input.options.fail_rate > 1) {
    return Fail(absl::InvalidArgumentError("--fail-rate must be between 0 and 1"), 2);
  }
  auto result = cc::Simulate(input);
  if (!result.ok()) {
    return Fail(absl::Status(result.status().code(), absl::StrCat(file, ": ", result.status().message())),
                absl::IsInvalidArgument(result.status()) ? 2 : 1);
  }
  if (format == "json") {
    std::cout << cc::SimulationJson(*result).dump(2) << "\n";
  } else {
    std::cout << cc::SimulationTable(*result, input.options);
  }
  return 0;
}

int Status(const std::string& name) {
  auto conn = Connect();
  if (!conn.ok()) return Fail(conn.status());
  const bool tty = isatty(STDOUT_FILENO) != 0;
  std::string last;
  while (true) {
    auto live = cc::FetchCloneSet(*conn->first, conn->second, absl::GetFlag(FLAGS_n), name);
    if (!live.ok()) return Fail(live.status());
    const std::string view = cc::RenderStatus(*live, absl::Now());
    if (!absl::GetFlag(FLAGS_w)) {
      std::cout << view;
      return 0;
    }
    if (view != last) {
      if (tty) std::cout << "\033[H\033[2J";  // redraw in place
      std::cout << view << (tty ? "" : "\n") << std::flush;
      last = view;
    }
    absl::SleepFor(absl::GetFlag(FLAGS_interval));
  }
}

int Plan(const std::string& name) {
  auto gates = FeatureGates();
  if (!gates.ok()) return Fail(gates.status(), 2);
  const char* env = std::getenv("CLONESET_PLANNER");
  auto address = cc::PlannerAddress(absl::GetFlag(FLAGS_planner), env == nullptr ? "" : env);
  if (!address.ok()) return Fail(address.status(), 2);
  auto conn = Connect();
  if (!conn.ok()) return Fail(conn.status());
  auto live = cc::FetchCloneSet(*conn->first, conn->second, absl::GetFlag(FLAGS_n), name);
  if (!live.ok()) return Fail(live.status());
  auto plan = cc::AskPlanner(*address, cc::PlanRequestFor(*live, absl::Now(), *gates));
  if (!plan.ok()) return Fail(plan.status());
  if (absl::GetFlag(FLAGS_o) == "json") {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    if (auto s = google::protobuf::util::MessageToJsonString(*plan, &json, options); !s.ok()) {
      return Fail(absl::InternalError(std::string(s.message())));
    }
    std::cout << json;
    return 0;
  }
  std::cout << cc::RenderPlan(*live, *plan);
  for (const std::string& why : cc::HoldReasons(live->clone_set, live->pods, absl::Now(), *gates)) {
    std::cout << "Held: " << why << "\n";
  }
  return 0;
}


// `rollout VERB NAME`: the client, the options from the flags, then rollout_io.
int Rollout(const std::vector<char*>& positional, bool watch_given) {
  if (positional.size() < 4) {
    const std::string what = positional.size() < 3 ? "rollout needs a command and a CloneSet NAME"
                                                    : absl::StrCat("rollout ", positional[2], " needs a CloneSet NAME");
    return Fail(absl::InvalidArgumentError(absl::StrCat(what, " (clonesetctl rollout --help)")), 2);
  }
  cc::RolloutOptions o;
  o.namespace_ = absl::GetFlag(FLAGS_n);
  o.timeout = absl::GetFlag(FLAGS_timeout);
  // Unlike `status -w`, `rollout status` watches unless told --watch=false, as kubectl does.
  o.watch = !watch_given || absl::GetFlag(FLAGS_w);
  o.partition_ok = absl::GetFlag(FLAGS_partition_ok);
  o.revision = absl::GetFlag(FLAGS_revision);
  o.to_revision = absl::GetFlag(FLAGS_to_revision);
  if (absl::GetFlag(FLAGS_step) != 0) o.step = absl::GetFlag(FLAGS_step);
  if (o.timeout < absl::ZeroDuration()) return Fail(absl::InvalidArgumentError("--timeout must not be negative"), 2);
  if (o.revision < 0 || o.to_revision < 0) {
    return Fail(absl::InvalidArgumentError("--revision and --to-revision must not be negative"), 2);
  }
  if (o.step.has_value() && *o.step < 1) return Fail(absl::InvalidArgumentError("--step must be at least 1"), 2);
  auto gates = FeatureGates();
  if (!gates.ok()) return Fail(gates.status(), 2);
  o.feature_gates = *gates;
  auto conn = Connect();
  if (!conn.ok()) return Fail(conn.status());
  const std::string verb = positional[2], name = positional[3];
  if (verb == "status") return cc::RolloutStatus(*conn->first, conn->second, name, o, std::cout, std::cerr);
  return cc::RolloutCommand(*conn->first, conn->second, verb, name, o, std::cout, std::cerr);
}

// `__complete WORDS...` (the completion scripts call it; kubectl calls kubectl_complete-cloneset WORDS..., a link to
// this binary): candidates one a line, then cobra's ":4" directive (no file completion), which kubectl reads.
int Complete(int argc, char** argv, int first) {
  std::vector<std::string> words;
  for (int i = first; i < argc; ++i) words.push_back(argv[i]);
  if (words.empty()) words.push_back("");
  std::vector<std::string> names;
  if (cc::CompletesName(words)) {
    std::vector<std::string> args = NormalizeArgs(argc, argv);
    for (size_t i = 1; i + 1 < args.size(); ++i) {  // only -n/--namespace and --kubeconfig matter here
      if (args[i] == "--n" || args[i] == "-n") absl::SetFlag(&FLAGS_n, args[i + 1]);
      if (args[i] == "--kubeconfig") absl::SetFlag(&FLAGS_kubeconfig, args[i + 1]);
    }
    if (auto conn = Connect(); conn.ok()) {
      auto body = conn->first->List(
          absl::StrCat("/apis/apps.kruise.io/v1alpha1/namespaces/", absl::GetFlag(FLAGS_n), "/clonesets"), {});
      if (body.ok()) {
        auto list = nlohmann::json::parse(*body, nullptr, false);
        if (list.is_object() && list["items"].is_array()) {
          for (const auto& item : list["items"]) names.push_back(item["metadata"].value("name", ""));
        }
      }
    }
  }
  for (const std::string& c : cc::CompleteWords(words, names)) std::cout << c << "\n";
  std::cout << ":4\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A watch cancelled by --timeout closes its socket under a read; a write to a closed socket must be an error
  // value, not a SIGPIPE that kills the command before it reports the timeout (it exited 141).
  signal(SIGPIPE, SIG_IGN);
  {
    // --help anywhere prints the usage on stdout and exits 0 (absl's own --help exits 1 and lists only the flags
    // of files named like the binary: "No flags matched").
    std::vector<std::string> raw(argv + 1, argv + argc);
    std::string about;
    if (argc > 1 && std::string(argv[1]) == "__complete") return Complete(argc, argv, 2);
    const std::string program = argv[0];
    if (program.size() >= 25 && program.substr(program.size() - 25) == "kubectl_complete-cloneset") {
      return Complete(argc, argv, 1);
    }
    if (cc::WantsHelp(raw, &about)) {
      std::cout << cc::UsageText(about);
      return 0;
    }
  }
  absl::SetProgramUsageMessage(cc::UsageText(""));
  std::vector<std::string> args = NormalizeArgs(argc, argv);
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(cargs.size()), cargs.data());
  if (positional.size() < 2) {
    std::cerr << cc::UsageText("");
    return 2;
  }
  const std::string command = positional[1];
  const std::string name = positional.size() > 2 ? positional[2] : "";
  if (command == "simulate") return Simulate();
  if (command == "status" || command == "plan") {
    if (name.empty()) return Fail(absl::InvalidArgumentError(absl::StrCat(command, " needs a CloneSet NAME")), 2);
    return command == "status" ? Status(name) : Plan(name);
  }
  if (command == "rollout") {
    const bool watch_given = std::any_of(args.begin(), args.end(), [](const std::string& a) {
      return a == "-w" || a == "--w" || a.rfind("-w=", 0) == 0 || a.rfind("--w=", 0) == 0;
    });
    return Rollout(positional, watch_given);
  }
  if (command == "migrate" && name == "from-kruise") {
    auto gates = FeatureGates();
    if (!gates.ok()) return Fail(gates.status(), 2);
    auto conn = Connect();
    if (!conn.ok()) return Fail(conn.status());
    const std::string ns = absl::GetFlag(FLAGS_A) ? "" : absl::GetFlag(FLAGS_n);
    return cc::CheckKruiseTakeover(*conn->first, conn->second, ns, *gates, absl::Now(), std::cout, std::cerr);
  }
  if (command == "migrate") {
    std::string target = name;
    for (const char* kind : {"deployment/", "deployments/", "deploy/", "deployments.apps/", "deployment.apps/"}) {
      if (target.rfind(kind, 0) == 0) target = target.substr(std::string(kind).size());
    }
    if (target.empty() || target == name) {
      return Fail(absl::InvalidArgumentError("migrate needs deployment/NAME (clonesetctl migrate --help)"), 2);
    }
    cc::MigrateOptions o;
    o.namespace_ = absl::GetFlag(FLAGS_n);
    o.dry_run = absl::GetFlag(FLAGS_dry_run);
    o.max_unavailable = absl::GetFlag(FLAGS_max_unavailable);
    if (o.max_unavailable < 1) return Fail(absl::InvalidArgumentError("--max-unavailable must be at least 1"), 2);
    if (absl::GetFlag(FLAGS_timeout) > absl::ZeroDuration()) o.step_timeout = absl::GetFlag(FLAGS_timeout);
    auto conn = Connect();
    if (!conn.ok()) return Fail(conn.status());
    return cc::Migrate(*conn->first, conn->second, target, o, std::cout, std::cerr);
  }
  if (command == "completion") {
    auto script = cc::CompletionScript(name);
    if (!script) return Fail(absl::InvalidArgumentError("completion needs a shell: bash or zsh"), 2);
    std::cout << *script;
    return 0;
  }
  std::cerr << "unknown command: " << command << "\n" << cc::UsageText("");
  return 2;
}
