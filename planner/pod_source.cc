#include "planner/pod_source.h"

#include "planner/context.h"
#include "planapi/pod_table.h"

namespace cloneset::planner {

const pb::Pod& PodOf(const PlanContext& ctx, const PodFacts& f) {
  if (f.pod != nullptr) return *f.pod;
  return ctx.pod_store->Pod(f.row);
}

const pb::Pod& PodAt(const PlanContext& ctx, size_t i) {
  if (ctx.pods[i] != nullptr) return *ctx.pods[i];
  return ctx.pod_store->Pod(ctx.pod_facts[i].row);
}

const std::vector<const pb::Pod*>& AllPods(const PlanContext& ctx, std::vector<const pb::Pod*>& scratch) {
  if (ctx.pod_store == nullptr) return ctx.pods;
  scratch.clear();
  scratch.reserve(ctx.pods.size());
  for (size_t i = 0; i < ctx.pods.size(); ++i) scratch.push_back(&PodAt(ctx, i));
  return scratch;
}

PodStore::PodStore(std::unique_ptr<PodTableView> view) : view_(std::move(view)), built_(view_->size(), nullptr) {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 16 << 10;
  options.max_block_size = 1 << 20;
  arena_ = std::make_unique<google::protobuf::Arena>(options);
}

PodStore::~PodStore() = default;

const pb::Pod& PodStore::Pod(uint32_t row) {
  if (built_[row] == nullptr) built_[row] = view_->Materialize(row, arena_.get());
  return *built_[row];
}

std::optional<int32_t> PodContainers::LaunchPriority(std::string_view name) const {
  if (pod_ != nullptr) {
    for (const pb::Container& c : pod_->containers()) {
      if (c.name() == name) return c.has_launch_priority() ? std::optional<int32_t>(c.launch_priority()) : std::nullopt;
    }
    return std::nullopt;
  }
  const pb::PodTable& t = table_->table();
  for (auto r = table_->containers(row_); r.begin < r.end; ++r.begin) {
    if (table_->Entry(t.containers(), 2, r.begin, 0) != name) continue;
    if (!PodTableView::Value(t.container_has_launch_priority(), r.begin)) return std::nullopt;
    return PodTableView::Value(t.container_launch_priority(), r.begin);
  }
  return std::nullopt;
}

ContainerLastStatus PodContainers::LastStatus(std::string_view name) const {
  if (pod_ != nullptr) {
    for (const pb::ContainerStatus& s : pod_->container_statuses()) {
      if (s.name() == name) return {true, s.image_id(), s.container_id()};
    }
    return {};
  }
  const pb::PodTable& t = table_->table();
  for (auto r = table_->container_statuses(row_); r.begin < r.end; ++r.begin) {
    if (table_->Entry(t.container_statuses(), 4, r.begin, 0) != name) continue;
    return {true, table_->Entry(t.container_statuses(), 4, r.begin, 2),
            table_->Entry(t.container_statuses(), 4, r.begin, 3)};
  }
  return {};
}

PodContainers ContainersOf(const PlanContext& ctx, const PodFacts& f) {
  if (f.pod != nullptr) return PodContainers(*f.pod);
  return PodContainers(ctx.pod_store->view(), f.row);
}

}  // namespace cloneset::planner
