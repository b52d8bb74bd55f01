// The store's writes decide and serialize outside its lock and commit only over the version they read
// (store.h, "Thread-safe"): these tests hold one write inside its decision while another runs, and check that the
// other is not blocked, that a write that lost its race is decided again on the newer version, and that commits
// keep one resourceVersion order with no update lost.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/testing/fake_clock.h"
#include "devcluster/object_meta.h"
#include "devcluster/stored_object.h"
#include "devcluster/store.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// A one-shot signal with a bounded wait: a test that would block forever on the old one-lock store fails instead.
class Signal {
 public:
  void Notify() {
    std::lock_guard<std::mutex> l(mu_);
    done_ = true;
    cv_.notify_all();
  }
  // False when `timeout` passed first. Generous: the bound only has to end a test that cannot pass, on a loaded
  // machine it is never reached by one that can.
  bool Wait(std::chrono::seconds timeout = 20s) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [&] { return done_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

json Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox:1.36"}}}}}}};
}

WatchOptions From(int64_t rv) {
  WatchOptions o;
  o.resource_version = rv;
  return o;
}

int64_t Rv(const json& o) { return std::stoll(o["metadata"]["resourceVersion"].get<std::string>()); }

absl::Status Label(json& o, const std::string& key, const std::string& value) {
  o["metadata"]["labels"][key] = value;
  return absl::OkStatus();
}

class StoreConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"a", "b"}) ASSERT_TRUE(store_.Create(kPods, Pod(name)).ok());
  }
  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
};

// While one write is deciding (its Mutate callback runs), a write to another object commits: the decision is not
// taken under the store's lock. On the one-lock store the second write waited for the first, which waited for the
// second: the bounded wait ran out.
TEST_F(StoreConcurrencyTest, AWriteDecidesWithoutHoldingTheStore) {
  Signal inside, other_done;
  std::atomic<bool> other_seen{false};
  std::thread first([&] {
    auto r = store_.Mutate(kPods, "default", "a", false, [&](json& o) {
      inside.Notify();
      other_seen = other_done.Wait();
      return Label(o, "first", "yes");
    });
    EXPECT_TRUE(r.ok()) << r.status();
  });
  ASSERT_TRUE(inside.Wait());
  auto other = store_.Mutate(kPods, "default", "b", false, [](json& o) { return Label(o, "other", "yes"); });
  other_done.Notify();
  first.join();
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_TRUE(other_seen) << "the write to pod b waited for the decision of the write to pod a";
  // Both committed, each once.
  EXPECT_EQ((*store_.Get(kPods, "default", "a"))["metadata"]["labels"]["first"], "yes");
  EXPECT_EQ((*store_.Get(kPods, "default", "b"))["metadata"]["labels"]["other"], "yes");
}

// A write whose object changed while it decided is decided again on the new version, as kube-apiserver's
// GuaranteedUpdate does: no update is lost, the callback runs once more, and the commits are watched in
// resourceVersion order.
TEST_F(StoreConcurrencyTest, AWriteThatLostItsRaceIsDecidedAgainOnTheNewVersion) {
  auto watch = store_.Watch(kPods, From(store_.CurrentResourceVersion()));
  ASSERT_TRUE(watch.ok());
  Signal inside, other_done;
  std::atomic<int> runs{0};
  std::atomic<bool> other_seen{false};
  absl::StatusOr<json> first_result;
  std::thread first([&] {
    first_result = store_.Mutate(kPods, "default", "a", false, [&](json& o) {
      if (++runs == 1) {
        inside.Notify();
        other_seen = other_done.Wait();
      }
      const json& labels = o["metadata"]["labels"];
      return Label(o, "first", labels.is_object() ? labels.value("other", "absent") : "absent");
    });
  });
  ASSERT_TRUE(inside.Wait());
  auto other = store_.Mutate(kPods, "default", "a", false, [](json& o) { return Label(o, "other", "yes"); });
  other_done.Notify();
  first.join();
  ASSERT_TRUE(other_seen) << "the second write to pod a waited for the first one's decision";
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(first_result.ok()) << first_result.status();
  EXPECT_EQ(runs, 2);
  // The first write's second run saw the other write's label, and both labels are stored.
  json stored = *store_.Get(kPods, "default", "a");
  EXPECT_EQ(stored["metadata"]["labels"], json({{"first", "yes"}, {"other", "yes"}}));
  EXPECT_EQ(Rv(*first_result), Rv(*other) + 1);
  EXPECT_EQ(Rv(stored), Rv(*first_result));
  WatchEvent ev;
  ASSERT_TRUE((*watch)->Next(&ev, 0ms));
  EXPECT_EQ(ev.resource_version, Rv(*other));
  ASSERT_TRUE((*watch)->Next(&ev, 0ms));
  EXPECT_EQ(ev.resource_version, Rv(*first_result));
  EXPECT_EQ(ev.object->json, stored.dump());
  EXPECT_FALSE((*watch)->Next(&ev, 0ms));
}

// A custom resource's unknown-field warnings come from the attempt that counted, not once per attempt.
TEST_F(StoreConcurrencyTest, WarningsOfALostAttemptAreNotRepeated) {
  ASSERT_TRUE(store_
                  .Create(kCustomResourceDefinitions, json::parse(R"({"metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
      "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
        "properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"}}}}}}}]}})"))
                  .ok());
  const std::string widgets = "widgets.example.com";
  ASSERT_TRUE(store_
                  .Create(widgets, {{"apiVersion", "example.com/v1"},
                                    {"kind", "Widget"},
                                    {"metadata", {{"name", "w"}, {"namespace", "default"}}},
                                    {"spec", {{"size", 1}}}})
                  .ok());
  Signal inside, other_done;
  std::atomic<int> runs{0};
  std::vector<std::string> warnings;
  absl::StatusOr<json> first_result;
  std::thread first([&] {
    first_result = store_.Mutate(
        widgets, "default", "w", false,
        [&](json& o) {
          if (++runs == 1) {
            inside.Notify();
            other_done.Wait();
          }
          o["spec"]["typo"] = 1;
          return absl::OkStatus();
        },
        WriteOptions{.warnings = &warnings});
  });
  ASSERT_TRUE(inside.Wait());
  auto other = store_.Mutate(widgets, "default", "w", false, [](json& o) {
    o["spec"]["size"] = 2;
    return absl::OkStatus();
  });
  other_done.Notify();
  first.join();
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(first_result.ok()) << first_result.status();
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(warnings, std::vector<std::string>{"unknown field \"spec.typo\""});
  EXPECT_EQ((*first_result)["spec"], json({{"size", 2}}));
}

// Writers on one object and on others at once: every update counted once, and the watch sees each commit once,
// in strictly increasing resourceVersion order, ending at the store's version.
TEST_F(StoreConcurrencyTest, ConcurrentWritersLoseNoUpdateAndCommitInOneOrder) {
  const int64_t start = store_.CurrentResourceVersion();
  auto watch = store_.Watch(kPods, From(start));
  ASSERT_TRUE(watch.ok());
  constexpr int kThreads = 4, kWrites = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; ++i) {
        // Every thread counts on pod a; each also writes pod b (status, a different subresource path).
        auto r = store_.Mutate(kPods, "default", "a", false, [](json& o) {
          auto& ann = o["metadata"]["annotations"];
          const int count = ann.is_object() ? std::stoi(ann.value("count", "0")) : 0;
          ann["count"] = std::to_string(count + 1);
          return absl::OkStatus();
        });
        EXPECT_TRUE(r.ok()) << r.status();
        auto s = store_.Mutate(kPods, "default", "b", true, [&](json& o) {
          o["status"]["message"] = absl::StrCat("t", t, "-", i);
          return absl::OkStatus();
        });
        EXPECT_TRUE(s.ok()) << s.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ((*store_.Get(kPods, "default", "a"))["metadata"]["annotations"]["count"],
            std::to_string(kThreads * kWrites));
  const int64_t end = store_.CurrentResourceVersion();
  EXPECT_EQ(end - start, 2 * kThreads * kWrites);
  int64_t last = start;
  int events = 0;
  WatchEvent ev;
  while ((*watch)->Next(&ev, 0ms)) {
    ASSERT_EQ(ev.type, EventType::kModified);
    ASSERT_GT(ev.resource_version, last);
    ASSERT_EQ(ev.object->resource_version, ev.resource_version);
    EXPECT_EQ(Rv(ev.object->Parse()), ev.resource_version);
    last = ev.resource_version;
    ++events;
  }
  EXPECT_EQ(events, 2 * kThreads * kWrites);
  EXPECT_EQ(last, end);
}

// The serialization made before the version is known is, once the version is in, MakeStoredObject's byte for byte.
TEST(UnversionedObjectTest, IsMakeStoredObjectOnceVersioned) {
  const std::vector<json> objects = {
      {{"metadata", json::object()}},
      {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}, {"namespace", "default"}}}},
      // Members after metadata and after resourceVersion; a value that looks like the member; escapes, UTF-8.
      {{"apiVersion", "v1"},
       {"data", {{"resourceVersion", "\"resourceVersion\":\"\""}}},
       {"kind", "ConfigMap"},
       {"metadata",
        {{"annotations", {{"resourceVersion", "1"}, {"q\"uote", "tab\tnew\nline \xc3\xa9 \xe2\x82\xac"}}},
         {"labels", {{"app", "x"}}},
         {"name", "c"},
         {"namespace", "default"},
         {"ownerReferences", {{{"uid", "u1"}, {"name", "o"}}}},
         {"finalizers", {"f"}},
         {"resourceVersion", "17"},
         {"selfLink", "/x"},
         {"uid", "u"}}},
       {"zeta", {1, 2.5, nullptr, true, json::object(), json::array()}}},
  };
  for (const json& original : objects) {
    for (int64_t rv : {int64_t{1}, int64_t{42}, int64_t{9007199254740993}}) {
      json versioned = original;
      versioned["metadata"]["resourceVersion"] = std::to_string(rv);
      const ObjectPtr want = MakeStoredObject(versioned, kConfigMaps);
      json copy = original;
      UnversionedObject u = MakeUnversionedObject(copy, kConfigMaps);
      EXPECT_EQ(VersionedSize(u, rv), want->json.size());
      const ObjectPtr got = SetVersion(std::move(u), rv);
      EXPECT_EQ(got->json, want->json) << original.dump();
      EXPECT_EQ(got->resource_version, rv);
      EXPECT_EQ(got->ns, want->ns);
      EXPECT_EQ(got->name, want->name);
      EXPECT_EQ(got->uid, want->uid);
      EXPECT_EQ(got->labels, want->labels);
      EXPECT_EQ(got->fields, want->fields);
      EXPECT_EQ(got->owner_uids, want->owner_uids);
      EXPECT_EQ(got->finalizers, want->finalizers);
      EXPECT_EQ(got->deleting, want->deleting);
    }
  }
}

// Same value and same JSON type at every node (== alone takes the unsigned 5 for the signed 5).
void ExpectSameTree(const json& got, const json& want, const std::string& path) {
  ASSERT_EQ(got.type(), want.type()) << path;
  if (want.is_object()) {
    ASSERT_EQ(got.size(), want.size()) << path;
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << path << "." << it.key();
      ExpectSameTree(got[it.key()], *it, path + "." + it.key());
    }
  } else if (want.is_array()) {
    ASSERT_EQ(got.size(), want.size()) << path;
    for (size_t i = 0; i < want.size(); ++i) ExpectSameTree(got[i], want[i], absl::StrCat(path, "[", i, "]"));
  } else if (want.is_number_float()) {
    // Bit for bit (NaN cannot be written by dump(); -0.0 must stay negative).
    ASSERT_EQ(std::signbit(got.get<double>()), std::signbit(want.get<double>())) << path;
    ASSERT_EQ(got.get<double>(), want.get<double>()) << path;
  } else {
    ASSERT_EQ(got, want) << path;
  }
}

// A reproducible random JSON value: every type, numbers at the integer limits and in exponent form, strings with
// escapes, control characters and multi-byte UTF-8.
json RandomValue(std::mt19937_64& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  static const std::vector<std::string> kPieces = {"a", "resourceVersion", "\"", "\\", "/", "\n", "\t", std::string(1, '\0'),
                                                   "\x01", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", " ", "{", "]"};
  auto text = [&] {
    std::string s;
    for (int i = pick(6); i > 0; --i) s += kPieces[pick(static_cast<int>(kPieces.size()))];
    return s;
  };
  switch (depth > 3 ? 2 + pick(7) : pick(9)) {
    case 0: {
      json o = json::object();
      for (int i = pick(5); i > 0; --i) o[text()] = RandomValue(rng, depth + 1);
      return o;
    }
    case 1: {
      json a = json::array();
      for (int i = pick(5); i > 0; --i) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    case 2: return text();
    case 3: {
      static const std::vector<int64_t> kInts = {0, 1, -1, 42, -42, INT64_MAX, INT64_MIN, 1LL << 53, -(1LL << 53)};
      return kInts[pick(static_cast<int>(kInts.size()))];
    }
    case 4: return pick(2) ? json(UINT64_MAX) : json(static_cast<uint64_t>(rng()));
    case 5: {
      static const std::vector<double> kDoubles = {0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, 3.0, 0.1, 1e21, 5e-324,
                                                   1.7976931348623157e308};
      return kDoubles[pick(static_cast<int>(kDoubles.size()))];
    }
    case 6: return pick(2) == 1;
    case 7: return nullptr;
    default: return static_cast<double>(static_cast<int64_t>(rng())) / 1024.0;
  }
}

// The store's parse of its own serializations is nlohmann's, node for node and type for type.
TEST(ParseStoredJsonTest, IsNlohmannsParseOfTheStoresSerializations) {
  std::vector<std::string> texts = {"{}", "[]", "null", "0", "-1", "18446744073709551615", "1.0", "-0.0", "\"x\"",
                                    Pod("p").dump()};
  std::mt19937_64 rng(16);
  for (int i = 0; i < 2000; ++i) texts.push_back(RandomValue(rng, 0).dump());
  // Past the size where nlohmann's parser takes over, and one simdjson refuses (nesting past its depth limit).
  texts.push_back(json{{"big", std::string(100 * 1024, 'x')}}.dump());
  texts.push_back(std::string(2000, '[') + std::string(2000, ']'));
  for (const std::string& text : texts) {
    SCOPED_TRACE(text.substr(0, 200));
    ExpectSameTree(ParseStoredJson(text), json::parse(text), "$");
  }
  // Errors are nlohmann's.
  EXPECT_THROW(ParseStoredJson("{\"a\":"), json::parse_error);
}

}  // namespace
}  // namespace cloneset::devcluster
