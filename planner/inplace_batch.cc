#include "planner/inplace_batch.h"

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/go_json.h"

namespace cloneset::planner {

using base::AppendGoString;
using base::AppendGoStringList;

namespace {

// ApplyInPlaceBatch when no container reads changed metadata through env (nearly every update): the changed
// containers are the image keys, already in name order, and only launch priorities split them into batches.
// Same result as the general path, without its sets (this runs once per pod updated in place).
InPlaceBatch ApplyImageBatch(const PodContainers& pod, const InPlaceUpdateSpec& spec, InPlaceUpdateState state,
                             absl::Time now, InPlaceBatch batch) {
  std::vector<std::optional<int32_t>> priorities;
  priorities.reserve(spec.container_images.size());
  std::optional<int32_t> highest;
  for (const auto& [name, image] : spec.container_images) {
    priorities.push_back(pod.LaunchPriority(name));
    const std::optional<int32_t>& p = priorities.back();
    if (p.has_value() && (!highest || *p > *highest)) highest = p;
  }
  state.next_container_images.clear();
  state.next_container_ref_metadata.clear();
  state.next_container_resources.clear();
  std::vector<std::string> now_list;
  now_list.reserve(spec.container_images.size());
  size_t i = 0;
  for (const auto& [name, image] : spec.container_images) {
    const std::optional<int32_t>& p = priorities[i++];
    if (p.has_value() && *p != *highest) {
      state.next_container_images[name] = image;
      continue;
    }
    batch.container_images[name] = image;
    if (!state.last_container_statuses.contains(name)) {
      const ContainerLastStatus status = pod.LastStatus(name);
      state.last_container_statuses[name] = {std::string(status.image_id), std::string(status.container_id)};
    }
    now_list.push_back(name);
  }
  state.pre_check_containers_required_ready.clear();
  if (!state.next_container_images.empty()) state.pre_check_containers_required_ready = now_list;
  state.container_batches_record.push_back({Rfc3339(now), std::move(now_list)});
  batch.state = std::move(state);
  return batch;
}

}  // namespace

InPlaceBatch ApplyInPlaceBatch(const pb::Pod& pod, const InPlaceUpdateSpec& spec, InPlaceUpdateState state,
                               absl::Time now, bool apply_metadata) {
  return ApplyInPlaceBatch(PodContainers(pod), spec, std::move(state), now, apply_metadata);
}

InPlaceBatch ApplyInPlaceBatch(const PodContainers& pod, const InPlaceUpdateSpec& spec, InPlaceUpdateState state,
                               absl::Time now, bool apply_metadata) {
  InPlaceBatch batch;
  if (apply_metadata) {
    batch.set_labels = spec.set_labels;
    batch.set_annotations = spec.set_annotations;
    batch.remove_labels = spec.remove_labels;
    batch.remove_annotations = spec.remove_annotations;
    batch.add_finalizers = spec.add_finalizers;
    batch.remove_finalizers = spec.remove_finalizers;
  }
  if (spec.container_ref_metadata.empty() && spec.container_resources.empty()) {
    return ApplyImageBatch(pod, spec, std::move(state), now, std::move(batch));
  }
  std::set<std::string> changed;
  for (const auto& [name, image] : spec.container_images) changed.insert(name);
  for (const auto& [name, ref] : spec.container_ref_metadata) changed.insert(name);
  for (const auto& [name, resources] : spec.container_resources) changed.insert(name);

  // Containers without a launch priority go now, plus those with the highest priority.
  std::optional<int32_t> highest;
  for (const std::string& name : changed) {
    const std::optional<int32_t> p = pod.LaunchPriority(name);
    if (p.has_value() && (!highest || *p > *highest)) highest = p;
  }
  std::set<std::string> now_set;
  for (const std::string& name : changed) {
    const std::optional<int32_t> p = pod.LaunchPriority(name);
    if (!p.has_value() || *p == *highest) now_set.insert(name);
  }
  // A later container reading the same changed metadata key must restart with the first one.
  for (bool grew = true; grew;) {
    grew = false;
    for (const std::string& name : changed) {
      if (now_set.contains(name)) continue;
      auto ref = spec.container_ref_metadata.find(name);
      if (ref == spec.container_ref_metadata.end()) continue;
      for (const std::string& other : now_set) {
        auto other_ref = spec.container_ref_metadata.find(other);
        if (other_ref == spec.container_ref_metadata.end()) continue;
        const auto shares = [](const auto& a, const auto& b) {
          for (const auto& [k, v] : a) {
            if (b.contains(k)) return true;
          }
          return false;
        };
        if (shares(ref->second.labels, other_ref->second.labels) ||
            shares(ref->second.annotations, other_ref->second.annotations)) {
          now_set.insert(name);
          grew = true;
          break;
        }
      }
    }
  }

  state.next_container_images.clear();
  state.next_container_ref_metadata.clear();
  state.next_container_resources.clear();
  for (const std::string& name : changed) {
    auto image = spec.container_images.find(name);
    auto ref = spec.container_ref_metadata.find(name);
    auto resources = spec.container_resources.find(name);
    if (!now_set.contains(name)) {
      if (image != spec.container_images.end()) state.next_container_images[name] = image->second;
      if (ref != spec.container_ref_metadata.end()) state.next_container_ref_metadata[name] = ref->second;
      if (resources != spec.container_resources.end()) state.next_container_resources[name] = resources->second;
      continue;
    }
    if (image != spec.container_images.end()) batch.container_images[name] = image->second;
    if (ref != spec.container_ref_metadata.end()) {
      for (const auto& [k, v] : ref->second.labels) batch.set_labels[k] = v;
      for (const auto& [k, v] : ref->second.annotations) batch.set_annotations[k] = v;
    }
    if (resources != spec.container_resources.end()) batch.container_resources[name] = resources->second;
    // A container that is only resized keeps running: nothing of it to compare afterwards (upstream records the
    // containers whose image changes).
    const bool restarts = image != spec.container_images.end() || ref != spec.container_ref_metadata.end();
    if (restarts && !state.last_container_statuses.contains(name)) {
      const ContainerLastStatus status = pod.LastStatus(name);
      state.last_container_statuses[name] = {std::string(status.image_id), std::string(status.container_id)};
    }
  }
  std::vector<std::string> now_list(now_set.begin(), now_set.end());
  state.pre_check_containers_required_ready.clear();
  if (HasNextBatch(state)) state.pre_check_containers_required_ready = now_list;
  state.container_batches_record.push_back({Rfc3339(now), now_list});
  batch.state = std::move(state);
  return batch;
}

SingleBatchState::SingleBatchState(const InPlaceUpdateSpec& spec, absl::Time now)
    : has_ref_metadata_(!spec.container_ref_metadata.empty()), has_resources_(!spec.container_resources.empty()) {
  const std::string& timestamp = Rfc3339(now);
  prefix_ = "{\"revision\":";
  AppendGoString(prefix_, spec.revision);
  prefix_ += ",\"updateTimestamp\":";
  AppendGoString(prefix_, timestamp);
  prefix_ += ",\"lastContainerStatuses\":";
  if (spec.container_images.empty()) prefix_ += "null";
  if (spec.update_env_from_metadata) suffix_ += ",\"updateEnvFromMetadata\":true";
  if (!spec.container_images.empty()) suffix_ += ",\"updateImages\":true";
  suffix_ += ",\"containerBatchesRecord\":[{\"timestamp\":";
  AppendGoString(suffix_, timestamp);
  suffix_ += ",\"containers\":";
  for (const auto& [name, image] : spec.container_images) {
    names_.push_back(name);
    std::string key;
    AppendGoString(key, name);
    key.push_back(':');
    name_keys_.push_back(std::move(key));
  }
  AppendGoStringList(suffix_, names_);
  suffix_ += "}]}";
}

bool SingleBatchState::Covers(const PodContainers& pod) const {
  if (has_ref_metadata_ || has_resources_) return false;
  if (names_.size() < 2) return true;  // one container cannot be split from itself
  // The batch splits exactly when two of the containers carry different launch priorities.
  std::optional<int32_t> seen;
  for (std::string_view name : names_) {
    const std::optional<int32_t> p = pod.LaunchPriority(name);
    if (!p.has_value()) continue;
    if (seen.has_value() && *seen != *p) return false;
    seen = p;
  }
  return true;
}

void SingleBatchState::AppendTo(const PodContainers& pod, std::string* out, bool whole) const {
  // One allocation for the whole value: sized from the statuses first (only escaping can still grow it). The
  // statuses of the first few containers are kept for the second pass; more are looked up again.
  constexpr size_t kStatusSyntax = sizeof("{\"imageID\":\"\",\"containerID\":\"\"},") - 1;
  constexpr size_t kKept = 4;
  ContainerLastStatus kept[kKept];
  size_t size = out->size() + (whole ? prefix_.size() + suffix_.size() : 0) + 2;
  for (size_t i = 0; i < names_.size(); ++i) {
    const ContainerLastStatus status = pod.LastStatus(names_[i]);
    if (i < kKept) kept[i] = status;
    size += name_keys_[i].size() + kStatusSyntax + status.image_id.size() + status.container_id.size();
  }
  out->reserve(size);
  if (whole) out->append(prefix_);
  if (!names_.empty()) {
    out->push_back('{');
    for (size_t i = 0; i < names_.size(); ++i) {
      if (i > 0) out->push_back(',');
      out->append(name_keys_[i]);
      const ContainerLastStatus status = i < kKept ? kept[i] : pod.LastStatus(names_[i]);
      out->push_back('{');
      if (!status.image_id.empty()) {
        out->append("\"imageID\":");
        AppendGoString(*out, status.image_id);
      }
      if (!status.container_id.empty()) {
        out->append(status.image_id.empty() ? "\"containerID\":" : ",\"containerID\":");
        AppendGoString(*out, status.container_id);
      }
      out->push_back('}');
    }
    out->push_back('}');
  }
  if (whole) out->append(suffix_);
}

}  // namespace cloneset::planner
