// The executor's cost per pod watch event, split (docs/performance.md "Decoding pods per event"): decoding a
// realistic pod (snapshot::PodFromJson), encoding its table row into a StringPool (planapi::EncodePodRow), and the
// whole informer step (decode + PodRowIndex::Upsert, as PodRowInformer::Apply does). The pods are ~3 KB of JSON as
// the API server sends them (managedFields, volumes, env, probes, five conditions, a container status with state),
// and the events cycle over 1 000 pods whose resourceVersion, condition times and container id change, as in an
// in-place rollout. Also the returned pod of a status write: decoded whole, or only its metadata and spec.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/pod_rows.h"
#include "planapi/pod_table.h"
#include "snapshot/snapshot.h"

namespace cloneset::executor {
namespace {

constexpr int kPods = 1000;

std::string PodJson(int i, int rv) {
  const std::string name = absl::StrCat("web-", 100000 + i);
  const std::string t = absl::StrCat("2026-11-26T10:", 10 + rv % 50, ":0", rv % 10, "Z");
  return absl::StrCat(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")", name, R"(","namespace":"default",)",
      R"("uid":"3f2a9c1e-5b7d-4e8f-9a0b-)", 100000000000 + i, R"(","resourceVersion":")", rv,
      R"(","creationTimestamp":"2026-11-26T10:00:00Z",)",
      R"("labels":{"app":"web","apps.kruise.io/cloneset-instance-id":")", i,
      R"(","controller-revision-hash":"web-6b8f7d9c5","pod-template-hash":"6b8f7d9c5","tier":"frontend"},)",
      R"("annotations":{"apps.kruise.io/inplace-update-state":"{\"revision\":\"web-6b8f7d9c5\",)",
      R"(\"updateTimestamp\":\"2026-11-26T10:05:00Z\",\"lastContainerStatuses\":{\"main\":{\"imageID\":)",
      R"(\"sha256:0b1c\"}}}","kubernetes.io/psp":"restricted"},)",
      R"("ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"web",)",
      R"("uid":"9d8c7b6a-5f4e-4d3c-2b1a-0f9e8d7c6b5a","controller":true,"blockOwnerDeletion":true}],)",
      R"("managedFields":[{"manager":"kruise-manager","operation":"Update","apiVersion":"v1","time":")", t,
      R"(","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}},)",
      R"("f:ownerReferences":{".":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:image":{}}}}}},)",
      R"({"manager":"kubelet","operation":"Update","apiVersion":"v1","time":")", t,
      R"(","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{".":{}},"f:containerStatuses":{}}},)",
      R"("subresource":"status"}]},)",
      R"("spec":{"volumes":[{"name":"kube-api-access-x7k2p","projected":{"sources":[{"serviceAccountToken":)",
      R"({"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":)",
      R"("ca.crt","path":"ca.crt"}]}}],"defaultMode":420}}],)",
      R"("containers":[{"name":"main","image":"registry.local/web:v)", 1 + rv % 2,
      R"(","ports":[{"containerPort":8080,"protocol":"TCP"}],"env":[{"name":"MODE","value":"serve"},)",
      R"({"name":"KRUISE_CONTAINER_PRIORITY","value":"10"}],"resources":{"limits":{"cpu":"500m","memory":"256Mi"},)",
      R"("requests":{"cpu":"100m","memory":"128Mi"}},"readinessProbe":{"httpGet":{"path":"/healthz","port":8080,)",
      R"("scheme":"HTTP"},"periodSeconds":10},"volumeMounts":[{"name":"kube-api-access-x7k2p","readOnly":true,)",
      R"("mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"imagePullPolicy":"IfNotPresent"}],)",
      R"("restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)",
      R"("serviceAccountName":"default","nodeName":"node-)", i % 7,
      R"(","schedulerName":"default-scheduler","readinessGates":[{"conditionType":"InPlaceUpdateReady"}]},)",
      R"("status":{"phase":"Running","conditions":[)",
      R"({"type":"InPlaceUpdateReady","status":"True","lastProbeTime":null,"lastTransitionTime":")", t, R"("},)",
      R"({"type":"Initialized","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-26T10:00:01Z"},)",
      R"({"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":")", t, R"("},)",
      R"({"type":"ContainersReady","status":"True","lastProbeTime":null,"lastTransitionTime":")", t, R"("},)",
      R"({"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-26T10:00:00Z"}],)",
      R"("hostIP":"10.0.0.)", i % 7, R"(","podIP":"10.244.)", i / 250, ".", i % 250,
      R"(","startTime":"2026-11-26T10:00:01Z","containerStatuses":[{"name":"main","state":{"running":)",
      R"({"startedAt":")", t, R"("}},"lastState":{},"ready":true,"restartCount":)", rv % 3,
      R"(,"image":"registry.local/web:v)", 1 + rv % 2, R"(","imageID":"registry.local/web@sha256:0b1c2d3e4f",)",
      R"("containerID":"containerd://)", 7000000000 + i * 10 + rv % 10, R"(","started":true}],"qosClass":"Burstable"}})");
}

// The events of a rollout, in order: every pod once per round, a new resourceVersion each time.
const std::vector<std::string>& Events() {
  static const std::vector<std::string> events = [] {
    std::vector<std::string> out;
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < kPods; ++i) out.push_back(PodJson(i, 1000 + round * kPods + i));
    }
    return out;
  }();
  return events;
}

void BM_Decode(benchmark::State& state) {
  const auto& events = Events();
  size_t k = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& json = events[k++ % events.size()];
    auto pod = snapshot::PodFromJson(json);
    if (!pod.ok()) state.SkipWithError(std::string(pod.status().message()).c_str());
    benchmark::DoNotOptimize(pod);
    bytes += json.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_Decode);

// The same into one reused message, as the pod informer decodes (PodRowInformer::Decode); with state.range(0), only
// metadata and spec, as the check of a status write's returned pod does (executor/apply.cc).
void BM_DecodeReused(benchmark::State& state) {
  const auto& events = Events();
  const snapshot::PodParts parts = state.range(0) ? snapshot::PodParts::kMetadataAndSpec : snapshot::PodParts::kAll;
  pb::Pod pod;
  size_t k = 0;
  for (auto _ : state) {
    if (absl::Status s = snapshot::PodFromJson(events[k++ % events.size()], &pod, parts); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
    }
    benchmark::DoNotOptimize(pod);
  }
}
BENCHMARK(BM_DecodeReused)->Arg(0)->Arg(1);

// The row alone: the decoded pods encoded in turn into a pool that holds every pod's row, each replacing its pod's
// previous row, as Upsert does (pods decoded beforehand).
void BM_EncodeRow(benchmark::State& state) {
  const auto& events = Events();
  std::vector<pb::Pod> pods;
  for (const std::string& json : events) pods.push_back(*snapshot::PodFromJson(json));
  planapi::StringPool pool;
  std::vector<planapi::PodRow> rows(kPods);
  for (int i = 0; i < kPods; ++i) planapi::EncodePodRow(pods[i], pool, &rows[i]);
  size_t k = kPods;
  for (auto _ : state) {
    const size_t at = k++ % pods.size();
    planapi::PodRow& row = rows[at % kPods];
    planapi::ReleasePodRow(pool, row);
    planapi::EncodePodRow(pods[at], pool, &row);
    benchmark::DoNotOptimize(row);
  }
}
BENCHMARK(BM_EncodeRow);

// The informer's step per event: decode (into a reused message), then Upsert (encode the row, refile it under its owner, the owner's key).
void BM_DecodeAndUpsert(benchmark::State& state) {
  const auto& events = Events();
  PodRowIndex index;
  for (int i = 0; i < kPods; ++i) index.Upsert(*snapshot::PodFromJson(events[i]));
  size_t k = kPods;
  PodRowIndex::OwnerKeys keys;
  pb::Pod pod;  // reused, as PodRowInformer does
  for (auto _ : state) {
    keys.clear();
    if (absl::Status s = snapshot::PodFromJson(events[k++ % events.size()], &pod); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
    }
    index.Upsert(pod, &keys);
    benchmark::DoNotOptimize(keys);
  }
}
BENCHMARK(BM_DecodeAndUpsert);

}  // namespace
}  // namespace cloneset::executor

BENCHMARK_MAIN();
