// How stages reach more of a pod than its facts. A request carries its pods either as `pods` (protobuf objects)
// or as a `pod_table` (pod_table.h, the compact encoding); the facts are read from either without building
// objects, and a stage that needs the full pod asks PodOf, which builds it from the table on first use (about
// 3 µs a pod). Hot paths, the in-place update of thousands of pods above all, read PodContainers instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>
#include <optional>
#include <string_view>

#include "cloneset/planner/v1/planner.pb.h"
#include "google/protobuf/arena.h"
#include "planner/pod_facts.h"

namespace cloneset::planapi {
class PodTableView;  // planapi/pod_table.h
}  // namespace cloneset::planapi

namespace cloneset::planner {

namespace pb = ::cloneset::planner::v1;
struct PlanContext;
using planapi::PodTableView;

// The pod `f` describes: f.pod, or the pod built from ctx's pod table (kept until ctx goes away).
const pb::Pod& PodOf(const PlanContext& ctx, const PodFacts& f);
// PodOf for the i-th active pod (ctx.pods[i]).
const pb::Pod& PodAt(const PlanContext& ctx, size_t i);

// Every active pod as an object, in ctx.pods order: ctx.pods itself, or (pod table) `scratch` filled with the
// pods built from the table. For the rare stages that read arbitrary labels of every pod.
const std::vector<const pb::Pod*>& AllPods(const PlanContext& ctx, std::vector<const pb::Pod*>& scratch);

// The last status of one container: what an in-place update records to detect its completion.
struct ContainerLastStatus {
  bool found = false;            // the pod has a status for the container
  std::string_view image_id;     // imageID
  std::string_view container_id; // containerID
};

// A pod's containers and container statuses, read from the protobuf pod or straight from the pod table.
class PodContainers {
 public:
  explicit PodContainers(const pb::Pod& pod) : pod_(&pod) {}
  PodContainers(const PodTableView& table, uint32_t row) : table_(&table), row_(row) {}

  // The launch priority of the first container called `name`; nullopt when it has none or does not exist.
  std::optional<int32_t> LaunchPriority(std::string_view name) const;
  // The first status of container `name`.
  ContainerLastStatus LastStatus(std::string_view name) const;

 private:
  const pb::Pod* pod_ = nullptr;
  const PodTableView* table_ = nullptr;
  uint32_t row_ = 0;
};

PodContainers ContainersOf(const PlanContext& ctx, const PodFacts& f);

// A request's pod table and the pods built from it so far (PlanContext::pod_store). Not thread-safe: one plan.
class PodStore {
 public:
  explicit PodStore(std::unique_ptr<PodTableView> view);
  ~PodStore();
  PodStore(const PodStore&) = delete;
  PodStore& operator=(const PodStore&) = delete;

  const PodTableView& view() const { return *view_; }
  // The pod of `row`, built on first use.
  const pb::Pod& Pod(uint32_t row);

 private:
  std::unique_ptr<PodTableView> view_;
  std::unique_ptr<google::protobuf::Arena> arena_;
  std::vector<const pb::Pod*> built_;
};

}  // namespace cloneset::planner
