// SameMetadataAndSpec (same_pod.h): each field of a pod changed alone, found by reflection over the message
// descriptors, so a field added to ObjectMeta, Container or OwnerReference later is compared (or this test fails)
// without anyone remembering the comparison.
#include "executor/same_pod.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "gtest/gtest.h"

namespace cloneset::executor {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

pb::Pod SnapshotPod() {
  pb::Pod p;
  auto* m = p.mutable_metadata();
  m->set_name("cs-a");
  m->set_namespace_("ns");
  m->set_uid("uid-1");
  m->set_resource_version("10");
  m->set_generation(1);
  (*m->mutable_labels())["app"] = "a";
  (*m->mutable_labels())["apps.kruise.io/revision"] = "rev-1";
  (*m->mutable_annotations())["note"] = "x";
  m->add_finalizers("f/1");
  m->mutable_creation_timestamp()->set_seconds(100);
  auto* o = m->add_owner_references();
  o->set_api_version("apps.kruise.io/v1alpha1");
  o->set_kind("CloneSet");
  o->set_name("cs");
  o->set_uid("cs-uid");
  o->set_controller(true);
  o->set_block_owner_deletion(true);
  p.set_node_name("node-1");
  p.add_readiness_gates("InPlaceUpdateReady");
  auto* c = p.add_containers();
  c->set_name("main");
  c->set_image("img:v1");
  p.set_phase("Running");
  auto* cond = p.add_conditions();
  cond->set_type("Ready");
  cond->set_status("True");
  return p;
}

// Changes the value of `field` in `m` (set, appended or altered; a message field gets a changed sub-field).
void Mutate(Message& m, const FieldDescriptor* field) {
  const auto* r = m.GetReflection();
  if (field->is_map()) {
    Message* entry = r->AddMessage(&m, field);
    const auto* er = entry->GetReflection();
    er->SetString(entry, entry->GetDescriptor()->FindFieldByName("key"), "added-key");
    er->SetString(entry, entry->GetDescriptor()->FindFieldByName("value"), "v");
    return;
  }
  if (field->is_repeated()) {
    switch (field->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: r->AddString(&m, field, "added"); return;
      case FieldDescriptor::CPPTYPE_MESSAGE: r->AddMessage(&m, field); return;
      default: FAIL() << "repeated " << field->full_name() << ": no mutation for its type";
    }
  }
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: r->SetString(&m, field, r->GetString(m, field) + "-changed"); return;
    case FieldDescriptor::CPPTYPE_INT64: r->SetInt64(&m, field, r->GetInt64(m, field) + 1); return;
    case FieldDescriptor::CPPTYPE_INT32: r->SetInt32(&m, field, r->GetInt32(m, field) + 1); return;
    case FieldDescriptor::CPPTYPE_BOOL: r->SetBool(&m, field, !r->GetBool(m, field)); return;
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      // Set (an unset Timestamp) or changed (a set one): its first field moves.
      Message* sub = r->MutableMessage(&m, field);
      Mutate(*sub, sub->GetDescriptor()->field(0));
      return;
    }
    default: FAIL() << field->full_name() << ": no mutation for its type";
  }
}

struct Case {
  std::string name;
  pb::Pod fresh;
  bool same;
};

// Every field of ObjectMeta, of the first owner reference and of the first container, changed alone; plus the
// pod's own fields. Only resourceVersion, generation, creationTimestamp, the status and the readiness gates may
// change and leave the pod "the same".
std::vector<Case> Cases() {
  std::vector<Case> out;
  const std::set<std::string> ignored = {
      "cloneset.planner.v1.ObjectMeta.resource_version", "cloneset.planner.v1.ObjectMeta.generation",
      "cloneset.planner.v1.ObjectMeta.creation_timestamp", "cloneset.planner.v1.Pod.phase",
      "cloneset.planner.v1.Pod.conditions", "cloneset.planner.v1.Pod.container_statuses",
      "cloneset.planner.v1.Pod.readiness_gates"};
  const auto add = [&](const std::string& name, pb::Pod fresh, const FieldDescriptor* f) {
    out.push_back({name, std::move(fresh), ignored.count(f->full_name()) > 0});
  };
  const pb::Pod base = SnapshotPod();
  const auto* pod_d = pb::Pod::descriptor();
  for (int i = 0; i < pod_d->field_count(); ++i) {
    const FieldDescriptor* f = pod_d->field(i);
    if (f->name() == "metadata") continue;
    pb::Pod p = base;
    Mutate(p, f);
    add(absl::StrCat("pod_", f->name()), p, f);
  }
  const auto* meta_d = pb::ObjectMeta::descriptor();
  for (int i = 0; i < meta_d->field_count(); ++i) {
    const FieldDescriptor* f = meta_d->field(i);
    pb::Pod p = base;
    Mutate(*p.mutable_metadata(), f);
    add(absl::StrCat("metadata_", f->name()), p, f);
    if (f->is_map()) {  // the same keys, one value changed
      pb::Pod q = base;
      auto* map = f->name() == "labels" ? q.mutable_metadata()->mutable_labels()
                                        : q.mutable_metadata()->mutable_annotations();
      map->begin()->second += "-changed";
      add(absl::StrCat("metadata_", f->name(), "_value"), q, f);
    }
  }
  const auto* owner_d = pb::OwnerReference::descriptor();
  for (int i = 0; i < owner_d->field_count(); ++i) {
    const FieldDescriptor* f = owner_d->field(i);
    pb::Pod p = base;
    Mutate(*p.mutable_metadata()->mutable_owner_references(0), f);
    add(absl::StrCat("owner_", f->name()), p, f);
  }
  const auto* container_d = pb::Container::descriptor();
  for (int i = 0; i < container_d->field_count(); ++i) {
    const FieldDescriptor* f = container_d->field(i);
    pb::Pod p = base;
    Mutate(*p.mutable_containers(0), f);
    add(absl::StrCat("container_", f->name()), p, f);
  }
  out.push_back({"identical", base, true});
  {
    pb::Pod p = base;  // the same maps built in another order
    p.mutable_metadata()->mutable_labels()->clear();
    (*p.mutable_metadata()->mutable_labels())["apps.kruise.io/revision"] = "rev-1";
    (*p.mutable_metadata()->mutable_labels())["app"] = "a";
    out.push_back({"labels_in_another_order", p, true});
  }
  return out;
}

TEST(SameMetadataAndSpec, EachFieldChangedAlone) {
  const pb::Pod seen = SnapshotPod();
  for (const Case& c : Cases()) {
    EXPECT_EQ(SameMetadataAndSpec(c.fresh, seen), c.same) << c.name;
    EXPECT_EQ(SameMetadataAndSpec(seen, c.fresh), c.same) << c.name << " (reversed)";
  }
}

TEST(SameMetadataAndSpec, DeletionTimestampValues) {
  pb::Pod a = SnapshotPod();
  pb::Pod b = SnapshotPod();
  a.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(5);
  b.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(5);
  EXPECT_TRUE(SameMetadataAndSpec(a, b));
  b.mutable_metadata()->mutable_deletion_timestamp()->set_nanos(1);
  EXPECT_FALSE(SameMetadataAndSpec(a, b));
}

}  // namespace
}  // namespace cloneset::executor
