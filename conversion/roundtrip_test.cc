// Round-trip property of the conversion over the repository's CloneSets (the seeds, their fragments and the
// hand-written v1beta1 examples) and seeded random variants of them: for every object x of version V and the other
// version W,
//   * ConvertCloneSet(ConvertCloneSet(x, W), V) == x, exactly (lossless);
//   * x and ConvertCloneSet(x, W) mean the same to the planner: the snapshot decoder (semantics §1.2) reads both
//     into the same CloneSet, once each version's defaults are filled in.
// A failure prints the seed and the variant's mutations.
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "conversion/cloneset.h"
#include "gtest/gtest.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "snapshot/snapshot.h"

namespace cloneset::conversion {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;
namespace pb = ::cloneset::planner::v1;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Sample {
  std::string where;
  Json object;
};

// Every CloneSet document under tests/data (seed000, seeds, seeds/fragments, v1beta1).
std::vector<Sample> Corpus() {
  std::vector<Sample> out;
  const fs::path root = CLONESET_TEST_DATA_DIR;
  std::vector<fs::path> files;
  for (const char* dir : {"seed000", "seeds", "seeds/fragments", "v1beta1"}) {
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    absl::StatusOr<std::vector<std::string>> docs = snapshot::YamlDocumentsToJson(ReadFile(f));
    EXPECT_TRUE(docs.ok()) << f << ": " << docs.status();
    if (!docs.ok()) continue;
    for (size_t i = 0; i < docs->size(); ++i) {
      Json o = Json::parse((*docs)[i]);
      if (o.is_object() && o.value("kind", "") == "CloneSet") {
        out.push_back({fs::relative(f, root).string() + "#" + std::to_string(i), std::move(o)});
      }
    }
  }
  return out;
}

std::string Other(const Json& o) { return o["apiVersion"] == kruise::kV1alpha1 ? kruise::kV1beta1 : kruise::kV1alpha1; }

// The planner's reading of a CloneSet with what differs only in spelling between the versions taken out: the
// version itself, the metadata the decoder moves into the spec, each version's PVC-reuse default, and the rolling
// fields OnDelete ignores.
absl::StatusOr<pb::CloneSet> Meaning(const Json& o) {
  absl::StatusOr<pb::CloneSet> cs = snapshot::CloneSetFromJson(o.dump());
  if (!cs.ok()) return cs;
  const bool beta = cs->api_version() == kruise::kV1beta1;
  cs->clear_api_version();
  auto* annotations = cs->mutable_metadata()->mutable_annotations();
  for (const char* k : {kruise::kPreDownloadParallelismAnnotation, kruise::kPreDownloadTimeoutSecondsAnnotation, kruise::kPreDownloadMinUpdatedReadyPodsAnnotation,
                        kV1alpha1StashAnnotation, kV1beta1StashAnnotation}) {
    annotations->erase(k);
  }
  cs->mutable_metadata()->mutable_labels()->erase(kruise::kExcludePreparingDeleteLabel);
  pb::ScaleStrategy* ss = cs->mutable_spec()->mutable_scale_strategy();
  if (!ss->has_enable_pvc_reuse()) ss->set_enable_pvc_reuse(!beta);
  pb::UpdateStrategy* us = cs->mutable_spec()->mutable_update_strategy();
  if (us->type() == "OnDelete") {
    us->Clear();
    us->set_type("OnDelete");
  }
  return cs;
}

// Returns whether the meaning was compared (x is a CloneSet the planner accepts in its version).
bool CheckRoundTrip(const Json& x, const std::string& what) {
  SCOPED_TRACE(what + "\n  object: " + x.dump());
  const std::string own = x["apiVersion"];
  absl::StatusOr<Json> y = ConvertCloneSet(x, Other(x));
  EXPECT_TRUE(y.ok()) << y.status();
  if (!y.ok()) return false;
  EXPECT_EQ((*y)["apiVersion"], Other(x));
  absl::StatusOr<Json> back = ConvertCloneSet(*y, own);
  EXPECT_TRUE(back.ok()) << back.status();
  if (back.ok()) {
    EXPECT_EQ(*back, x) << "converted: " << y->dump() << "\n  back:      " << back->dump();
  }

  absl::StatusOr<pb::CloneSet> before = Meaning(x);
  if (!before.ok()) return false;  // not a CloneSet the planner accepts in this version: nothing to preserve
  absl::StatusOr<pb::CloneSet> after = Meaning(*y);
  EXPECT_TRUE(after.ok()) << "the converted object no longer decodes: " << after.status()
                          << "\n  converted: " << y->dump();
  if (after.ok()) {
    EXPECT_EQ(before->DebugString(), after->DebugString()) << "converted: " << y->dump();
  }
  return true;
}

TEST(RoundTrip, EveryRepositoryCloneSet) {
  const std::vector<Sample> corpus = Corpus();
  // seed000, seeds 001-003, their fragments and the four v1beta1 examples.
  ASSERT_GE(corpus.size(), 14u);
  int beta = 0, meant = 0;
  for (const Sample& s : corpus) {
    beta += s.object["apiVersion"] == kruise::kV1beta1;
    meant += CheckRoundTrip(s.object, s.where);
  }
  EXPECT_EQ(beta, 4);
  EXPECT_EQ(meant, static_cast<int>(corpus.size()));  // every repository CloneSet decodes in its own version
}

// Seeded changes that move an object off the spellings the CRD's defaults leave, into every combination the
// mapping treats specially: fields of the other version, metadata the other version keeps in its spec, values the
// decoder refuses, members nothing knows. Metadata stays as the API server serializes ObjectMeta: an empty labels or
// annotations map is omitted, never sent as {}, so the converter may drop a map it emptied.
using Mutation = std::function<void(Json&, std::mt19937&)>;

template <typename T>
const T& Pick(const std::vector<T>& v, std::mt19937& rng) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// Sets o[path...] to v (creating the objects on the way), or removes it when v is discarded.
void Put(Json& o, const std::vector<std::string>& path, const Json& v) {
  Json* at = &o;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (v.is_discarded()) {
      auto it = at->find(path[i]);
      if (it == at->end() || !it->is_object()) return;
      at = &*it;
      continue;
    }
    Json& next = (*at)[path[i]];
    if (!next.is_object()) next = Json::object();
    at = &next;
  }
  if (!v.is_discarded()) {
    (*at)[path.back()] = v;
    return;
  }
  at->erase(path.back());
  // Metadata maps are never sent empty (ObjectMeta omits them), nor is a metadata (it has a name; only the seeds'
  // nameless fragments have none).
  if (path.size() == 3 && path[0] == "metadata" && at->empty()) {
    o["metadata"].erase(path[1]);
    if (o["metadata"].empty()) o.erase("metadata");
  }
}

const Json kGone = Json(Json::value_t::discarded);

std::vector<std::pair<std::string, Mutation>> Mutations() {
  std::vector<std::pair<std::string, Mutation>> m;
  m.emplace_back("relabel", [](Json& o, std::mt19937&) { o["apiVersion"] = Other(o); });
  m.emplace_back("type", [](Json& o, std::mt19937& r) {
    Put(o, {"spec", "updateStrategy", "type"},
        Pick<Json>({kGone, "ReCreate", "InPlaceIfPossible", "InPlaceOnly", "OnDelete", "RollingUpdate", "Sideways"}, r));
  });
  m.emplace_back("policy", [](Json& o, std::mt19937& r) {
    Put(o, {"spec", "updateStrategy", "rollingUpdate", "podUpdatePolicy"},
        Pick<Json>({kGone, "ReCreate", "InPlaceIfPossible", "InPlaceOnly", "Sideways"}, r));
  });
  m.emplace_back("policy_in_alpha_place", [](Json& o, std::mt19937& r) {
    Put(o, {"spec", "updateStrategy", "podUpdatePolicy"}, Pick<Json>({kGone, "InPlaceOnly"}, r));
  });
  m.emplace_back("rolling_field", [](Json& o, std::mt19937& r) {
    const std::string field = Pick<std::string>({"partition", "maxUnavailable", "maxSurge", "paused"}, r);
    const Json v = field == "paused" ? Pick<Json>({kGone, true, false}, r) : Pick<Json>({kGone, 0, 3, "50%"}, r);
    if (r() % 2) {
      Put(o, {"spec", "updateStrategy", field}, v);
    } else {
      Put(o, {"spec", "updateStrategy", "rollingUpdate", field}, v);
    }
  });
  m.emplace_back("grace", [](Json& o, std::mt19937& r) {
    if (r() % 2) {
      Put(o, {"spec", "updateStrategy", "inPlaceUpdateStrategy", "gracePeriodSeconds"}, Pick<Json>({kGone, 0, 7}, r));
    } else {
      Put(o, {"spec", "updateStrategy", "rollingUpdate", "inPlaceUpdateStrategy", "gracePeriodSeconds"},
          Pick<Json>({kGone, 0, 7}, r));
    }
  });
  m.emplace_back("predownload_annotation", [](Json& o, std::mt19937& r) {
    const char* key = Pick<const char*>({kruise::kPreDownloadParallelismAnnotation, kruise::kPreDownloadTimeoutSecondsAnnotation, kruise::kPreDownloadMinUpdatedReadyPodsAnnotation}, r);
    Put(o, {"metadata", "annotations", key},
        Pick<Json>({kGone, "5", "05", "+5", " 5", "50%", "x%", "soon", "-1", "2147483648", ""}, r));
  });
  m.emplace_back("predownload_field", [](Json& o, std::mt19937& r) {
    const std::string field = Pick<std::string>(
        {"imagePreDownloadParallelism", "imagePreDownloadTimeoutSeconds", "imagePreDownloadMinUpdatedReadyPods"}, r);
    const Json v = field == "imagePreDownloadParallelism" ? Pick<Json>({kGone, 2, "25%"}, r) : Pick<Json>({kGone, 0, 30}, r);
    if (r() % 3 == 0) {
      Put(o, {"spec", "updateStrategy", "inPlaceUpdateStrategy", field}, v);
    } else {
      Put(o, {"spec", "updateStrategy", "rollingUpdate", "inPlaceUpdateStrategy", field}, v);
    }
  });
  m.emplace_back("exclude_label", [](Json& o, std::mt19937& r) {
    Put(o, {"metadata", "labels", kruise::kExcludePreparingDeleteLabel}, Pick<Json>({kGone, "true", "false", "yes", ""}, r));
  });
  m.emplace_back("scale_bools", [](Json& o, std::mt19937& r) {
    const std::string field = Pick<std::string>({"disablePVCReuse", "enablePVCReuse", "excludePreparingDelete"}, r);
    Put(o, {"spec", "scaleStrategy", field}, Pick<Json>({kGone, true, false}, r));
  });
  m.emplace_back("unknown", [](Json& o, std::mt19937& r) {
    const std::vector<std::vector<std::string>> places = {
        {"spec", "future"},
        {"spec", "updateStrategy", "future"},
        {"spec", "updateStrategy", "rollingUpdate", "future"},
        {"spec", "updateStrategy", "rollingUpdate", "inPlaceUpdateStrategy", "future"},
        {"spec", "scaleStrategy", "future"},
        {"status", "future"},
        {"metadata", "annotations", "example.com/other"},
        {"future"}};
    Put(o, Pick(places, r), Pick<Json>({kGone, "x", Json{{"a", {1, 2}}}}, r));
  });
  m.emplace_back("strategy_objects", [](Json& o, std::mt19937& r) {
    const std::string which = Pick<std::string>({"updateStrategy", "scaleStrategy"}, r);
    Put(o, {"spec", which}, Pick<Json>({kGone, Json::object()}, r));
  });
  m.emplace_back("rolling_update_object", [](Json& o, std::mt19937& r) {
    Put(o, {"spec", "updateStrategy", "rollingUpdate"}, Pick<Json>({kGone, Json::object()}, r));
  });
  return m;
}

TEST(RoundTrip, SeededVariants) {
  const std::vector<Sample> corpus = Corpus();
  const auto mutations = Mutations();
  constexpr uint32_t kSeed = 20260101;
  constexpr int kVariantsPerSample = 300;
  std::mt19937 rng(kSeed);
  int stashed = 0, total = 0, meant = 0;
  for (const Sample& s : corpus) {
    for (int v = 0; v < kVariantsPerSample; ++v) {
      Json x = s.object;
      std::string applied;
      const int n = 1 + static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) {
        const auto& [name, mutate] = Pick(mutations, rng);
        mutate(x, rng);
        applied += " " + name;
      }
      meant += CheckRoundTrip(x, "seed " + std::to_string(kSeed) + ", " + s.where + " variant " + std::to_string(v) +
                                     ":" + applied);
      if (HasFailure()) return;  // one printed counterexample is enough
      absl::StatusOr<Json> y = ConvertCloneSet(x, Other(x));
      stashed += y.ok() && (*y)["metadata"].contains("annotations") &&
                 ((*y)["metadata"]["annotations"].contains(kV1alpha1StashAnnotation) ||
                  (*y)["metadata"]["annotations"].contains(kV1beta1StashAnnotation));
      ++total;
    }
  }
  // The variants leave the canonical spellings on purpose, so many need the stash; some must not.
  EXPECT_GT(stashed, 0);
  EXPECT_LT(stashed, total);
  // Most variants are CloneSets the planner accepts, whose meaning was compared.
  EXPECT_GT(meant, total / 2);
  std::cout << total << " variants (" << meant << " decoded and compared), " << stashed
            << " of them kept something in the stash annotation\n";
}

// A stash annotation copied onto another object or edited by hand is not the converter's: it is read entry by entry,
// never fails the conversion and never touches what identifies the object.
TEST(RoundTrip, ForeignStashesNeverFailNorTouchTheIdentity) {
  const std::vector<std::string> stashes = {
      "", "garbage", "[]", R"([{"path":"/metadata/name","value":"x"},{"path":"/metadata/uid","value":"u"}])",
      R"([{"path":"/kind","was":"CloneSet","value":"Pod"},{"path":"/apiVersion","value":"v1"},{"path":"/metadata","value":{}}])",
      R"([{"path":"/spec/updateStrategy","value":7},{"path":"/status/replicas"}])"};
  for (const Sample& s : Corpus()) {
    for (const std::string& st : stashes) {
      Json x = s.object;
      x["metadata"]["uid"] = "uid-1";
      const char* key = x["apiVersion"] == kruise::kV1alpha1 ? kV1beta1StashAnnotation : kV1alpha1StashAnnotation;
      x["metadata"]["annotations"][key] = st;
      absl::StatusOr<Json> y = ConvertCloneSet(x, Other(x));
      ASSERT_TRUE(y.ok()) << s.where << ": " << y.status();
      EXPECT_EQ((*y)["apiVersion"], Other(x));
      EXPECT_EQ((*y)["kind"], "CloneSet");
      for (const char* f : {"name", "namespace", "uid"}) {
        EXPECT_EQ((*y)["metadata"].value(f, Json()), x["metadata"].value(f, Json())) << s.where << " " << st;
      }
    }
  }
}

}  // namespace
}  // namespace cloneset::conversion
