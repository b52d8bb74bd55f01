#include "planapi/request.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "nlohmann/json.hpp"
#include "planapi/in_place_batches.h"
#include "planapi/pod_table.h"

namespace cloneset::planapi {

namespace {

// The pods of a snapshot whose request holds them only in its table, materialized into `table_pods`.
void MaterializeTablePods(const pb::PlanRequest& request, std::vector<std::shared_ptr<const pb::Pod>>& table_pods) {
  if (!table_pods.empty() || !request.has_pod_table() || request.pod_table().name_size() == 0) return;
  // A table the executor assembled itself: Open fails only for a table it did not build, and then no pods it is.
  auto view = PodTableView::Open(request.pod_table());
  if (view.ok()) table_pods = (*view)->MaterializeAll();
}

}  // namespace

struct SharedPodTable::Cached {
  explicit Cached(pb::PodTable t) : message(std::move(t)) {}
  const pb::PodTable message;
  absl::once_flag serialized;
  std::string bytes;
};

SharedPodTable::SharedPodTable() : SharedPodTable(pb::PodTable()) {}
SharedPodTable::SharedPodTable(pb::PodTable table) : cached_(std::make_shared<Cached>(std::move(table))) {}
const pb::PodTable& SharedPodTable::message() const { return cached_->message; }
const std::string& SharedPodTable::bytes() const {
  Cached& k = *cached_;
  absl::call_once(k.serialized, [&k] { k.bytes = k.message.SerializeAsString(); });
  return k.bytes;
}

RequestWithPods::~RequestWithPods() { ReleaseSharedTable(); }

RequestWithPods::RequestWithPods(RequestWithPods&& other) noexcept
    : request(std::move(other.request)),  // same arena (none): the table pointer moves with the fields
      table_pods(std::move(other.table_pods)),
      shared_table_(std::exchange(other.shared_table_, std::nullopt)) {}

RequestWithPods& RequestWithPods::operator=(RequestWithPods&& other) noexcept {
  if (this == &other) return *this;
  ReleaseSharedTable();
  request = std::move(other.request);
  table_pods = std::move(other.table_pods);
  shared_table_ = std::exchange(other.shared_table_, std::nullopt);
  return *this;
}

RequestWithPods::RequestWithPods(const RequestWithPods& other) : request(other.request), table_pods(other.table_pods) {}

RequestWithPods& RequestWithPods::operator=(const RequestWithPods& other) {
  if (this == &other) return *this;
  ReleaseSharedTable();
  request = other.request;
  table_pods = other.table_pods;
  return *this;
}

void RequestWithPods::ReleaseSharedTable() {
  if (!shared_table_.has_value()) return;
  // Not deleted: the table belongs to shared_table_.
  if (request.has_pod_table() && &request.pod_table() == &shared_table_->message()) {
    (void)request.unsafe_arena_release_pod_table();
  }
  shared_table_.reset();
}

void RequestWithPods::SetPodTable(SharedPodTable table) {
  ReleaseSharedTable();
  shared_table_ = std::move(table);
  // The request reads the table in place; ReleaseSharedTable takes it out again before the request could delete it.
  request.unsafe_arena_set_allocated_pod_table(const_cast<pb::PodTable*>(&shared_table_->message()));
}

RequestBytes RequestWithPods::Serialize() {
  RequestBytes out;
  const bool shared = shared_table_.has_value() && request.has_pod_table() &&
                      &request.pod_table() == &shared_table_->message();
  // Fields protobuf does not know would follow accept_in_place_batches: serialized whole then.
  if (!shared || !request.GetReflection()->GetUnknownFields(request).empty()) {
    out.head = request.SerializeAsString();
    return out;
  }
  // Protobuf writes the fields in field-number order: those before pod_table (10), pod_table, then
  // accept_in_place_batches (11) and storage_classes (12). They leave the request while the others are serialized,
  // and come back.
  pb::PlanRequest after;  // the fields after pod_table
  after.set_accept_in_place_batches(request.accept_in_place_batches());
  after.mutable_storage_classes()->Swap(request.mutable_storage_classes());
  pb::PodTable* table = request.unsafe_arena_release_pod_table();
  request.clear_accept_in_place_batches();
  out.head = request.SerializeAsString();
  request.unsafe_arena_set_allocated_pod_table(table);
  out.tail = after.SerializeAsString();
  request.set_accept_in_place_batches(after.accept_in_place_batches());
  request.mutable_storage_classes()->Swap(after.mutable_storage_classes());
  const std::string& bytes = shared_table_->bytes();
  {
    google::protobuf::io::StringOutputStream stream(&out.head);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.WriteTag(google::protobuf::internal::WireFormatLite::MakeTag(
        pb::PlanRequest::kPodTableFieldNumber, google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    coded.WriteVarint64(bytes.size());
  }
  out.table = *shared_table_;
  return out;
}

std::vector<const pb::Pod*> RequestWithPods::Pods() const {
  std::vector<const pb::Pod*> out;
  MaterializeTablePods(request, table_pods);
  if (request.pods_size() > 0) {
    out.reserve(request.pods_size());
    for (const pb::Pod& p : request.pods()) out.push_back(&p);
  } else {
    out.reserve(table_pods.size());
    for (const auto& p : table_pods) out.push_back(p.get());
  }
  return out;
}

void RequestWithPods::SendPodsAsObjects() {
  MaterializeTablePods(request, table_pods);
  ReleaseSharedTable();
  request.clear_pod_table();
  request.mutable_pods()->Reserve(static_cast<int>(table_pods.size()));
  for (const auto& p : table_pods) *request.add_pods() = *p;
  table_pods.clear();
}

void SetStorageClasses(const std::vector<pb::StorageClass>& known, pb::PlanRequest* request) {
  request->clear_storage_classes();
  std::set<std::string_view> named;
  for (const pb::PersistentVolumeClaim& pvc : request->pvcs()) {
    if (!pvc.storage_class_name().empty()) named.insert(pvc.storage_class_name());
  }
  if (named.empty()) return;
  std::vector<const pb::StorageClass*> kept;
  for (const pb::StorageClass& sc : known) {
    if (named.contains(sc.name())) kept.push_back(&sc);
  }
  std::sort(kept.begin(), kept.end(), [](const auto* a, const auto* b) { return a->name() < b->name(); });
  for (const pb::StorageClass* sc : kept) *request->add_storage_classes() = *sc;
}

bool NeedsNodes(std::string_view template_json) {
  if (template_json.find("topologySpreadConstraints") == std::string_view::npos) return false;
  const nlohmann::json t = nlohmann::json::parse(template_json, nullptr, /*allow_exceptions=*/false);
  if (!t.is_object()) return false;
  const auto spec = t.find("spec");
  if (spec == t.end() || !spec->is_object()) return false;
  const auto constraints = spec->find("topologySpreadConstraints");
  if (constraints == spec->end() || !constraints->is_array()) return false;
  return std::any_of(constraints->begin(), constraints->end(), [](const nlohmann::json& c) {
    return c.is_object() && c.contains("topologyKey") && c["topologyKey"].is_string();
  });
}

namespace {

// FNV-1a, as PlanSeed documents.
class SeedHash {
 public:
  void Mix(std::string_view s) {
    for (unsigned char c : s) h_ = (h_ ^ c) * 1099511628211ull;
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 1469598103934665603ull;
};

const pb::Pod& PodOf(const pb::Pod& p) { return p; }
const pb::Pod& PodOf(const std::shared_ptr<const pb::Pod>& p) { return *p; }

template <typename Pods>
uint64_t Seed(const pb::CloneSet& cs, const Pods& pods) {
  SeedHash h;
  h.Mix(cs.metadata().uid());
  h.Mix(cs.metadata().resource_version());
  for (const auto& p : pods) h.Mix(PodOf(p).metadata().resource_version());
  return h.value();
}

// The same from a table's rows (the pods' resourceVersions in row order).
uint64_t TableSeed(const pb::CloneSet& cs, const PodTableView& table) {
  SeedHash h;
  h.Mix(cs.metadata().uid());
  h.Mix(cs.metadata().resource_version());
  for (uint32_t row = 0; row < table.size(); ++row) h.Mix(table.Column(table.table().resource_version(), row));
  return h.value();
}

}  // namespace

uint64_t PlanSeed(const pb::CloneSet& cs, const std::vector<pb::Pod>& pods) { return Seed(cs, pods); }
uint64_t PlanSeed(const pb::CloneSet& cs, const std::vector<std::shared_ptr<const pb::Pod>>& pods) {
  return Seed(cs, pods);
}

RequestWithPods AssembleRequest(const pb::CloneSet& cs, OwnedObjects objects, const NodeLookup& nodes, absl::Time now,
                             const RequestOptions& options, absl::Status* table_error) {
  SnapshotPods pods;
  pods.pods.reserve(objects.pods.size());
  for (pb::Pod& p : objects.pods) pods.pods.push_back(std::make_shared<const pb::Pod>(std::move(p)));
  return AssembleRequest(cs, std::move(pods), std::move(objects.pvcs), std::move(objects.revisions), nodes, now,
                         options, table_error);
}

RequestWithPods AssembleRequest(const pb::CloneSet& cs, SnapshotPods pods, std::vector<pb::PersistentVolumeClaim> pvcs,
                             std::vector<pb::ControllerRevision> revisions, const NodeLookup& nodes, absl::Time now,
                             const RequestOptions& options, absl::Status* table_error) {
  RequestWithPods snapshot;
  pb::PlanRequest& req = snapshot.request;
  *req.mutable_clone_set() = cs;
  // A table comes with its pods in name order already, and a cache's pods mostly are.
  const auto by_name = [](const auto& a, const auto& b) { return a->metadata().name() < b->metadata().name(); };
  if (!pods.table.has_value() && !std::is_sorted(pods.pods.begin(), pods.pods.end(), by_name)) {
    std::sort(pods.pods.begin(), pods.pods.end(), by_name);
  }
  // Pods only in a table (a cache that keeps rows): the seed and the node names are read from its rows.
  std::unique_ptr<PodTableView> table_only;
  if (pods.pods.empty() && pods.table.has_value() && pods.table->ok() && (*pods.table)->message().name_size() > 0) {
    auto view = PodTableView::Open((*pods.table)->message());
    if (view.ok()) table_only = *std::move(view);
  }
  req.set_random_seed(table_only != nullptr ? TableSeed(cs, *table_only) : PlanSeed(cs, pods.pods));
  req.set_accept_in_place_batches(options.in_place_batches);
  *req.mutable_feature_gates() = options.feature_gates;
  std::vector<std::string> node_names;
  if (NeedsNodes(cs.spec().template_json())) {
    for (const auto& p : pods.pods) {
      if (!p->node_name().empty()) node_names.push_back(p->node_name());
    }
    for (uint32_t row = 0; table_only != nullptr && row < table_only->size(); ++row) {
      const std::string_view node = table_only->Column(table_only->table().node_name(), row);
      if (!node.empty()) node_names.emplace_back(node);
    }
  }
  table_only.reset();  // the table moves into the request below
  snapshot.table_pods = std::move(pods.pods);
  bool as_table = options.pod_table;
  if (as_table) {
    absl::StatusOr<SharedPodTable> table =
        pods.table.has_value() ? *std::move(pods.table) : EncodePodTable(snapshot.Pods());
    if (table.ok()) {
      snapshot.SetPodTable(*std::move(table));
    } else {
      as_table = false;
      if (table_error != nullptr) *table_error = table.status();
    }
  }
  if (!as_table) snapshot.SendPodsAsObjects();
  if (!node_names.empty() && nodes) {
    std::sort(node_names.begin(), node_names.end());
    node_names.erase(std::unique(node_names.begin(), node_names.end()), node_names.end());
    for (auto& n : nodes(node_names)) *req.add_nodes() = std::move(n);
  }
  for (auto& pvc : pvcs) {
    if (pvc.metadata().has_deletion_timestamp()) continue;
    *req.add_pvcs() = std::move(pvc);
  }
  for (auto& rev : revisions) *req.add_revisions() = std::move(rev);
  req.mutable_now()->set_seconds(absl::ToUnixSeconds(now));
  req.mutable_now()->set_nanos(static_cast<int32_t>((now - absl::FromUnixSeconds(absl::ToUnixSeconds(now))) /
                                                    absl::Nanoseconds(1)));
  return snapshot;
}

absl::StatusOr<pb::PlanResponse> RequestPlan(RequestWithPods& snapshot, const PlanCall& call,
                                             absl::Status* table_unread, Batches batches) {
  const auto ask = [&]() {
    absl::StatusOr<pb::PlanResponse> plan = call(snapshot.request);
    // Before anything reads the plan: applying, write accounting and metrics see per-pod actions only.
    if (plan.ok() && batches == Batches::kExpand) ExpandInPlaceBatches(&*plan);
    return plan;
  };
  absl::StatusOr<pb::PlanResponse> plan = ask();
  if (plan.ok() && snapshot.request.has_pod_table() && plan->pods_read() != PodsInRequest(snapshot.request)) {
    if (table_unread != nullptr) {
      *table_unread = absl::FailedPreconditionError(
          absl::StrCat("the planner read ", plan->pods_read(), " of the ", PodsInRequest(snapshot.request),
                       " pods sent as pod_table (a planner older than the table?)"));
    }
    snapshot.SendPodsAsObjects();
    plan = ask();
  }
  return plan;
}

}  // namespace cloneset::planapi
