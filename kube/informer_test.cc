#include "kube/informer.h"

#include <algorithm>
#include <iterator>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api_status.h"
#include "kube/testing/fake_apiserver.h"
#include "nlohmann/json.hpp"

namespace cloneset::kube {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;
using base::testing::FakeClock;
using testing::FakeApiServer;

constexpr char kPods[] = "/api/v1/namespaces/ns/pods";

// The compact cached form: only what a controller needs.
struct PodLite {
  std::string name;
  std::string owner_uid;
  std::string image;
};

absl::StatusOr<PodLite> DecodePod(std::string_view json) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return absl::InvalidArgumentError("not an object");
  PodLite p;
  p.name = j["metadata"].value("name", "");
  if (j["metadata"].contains("ownerReferences")) p.owner_uid = j["metadata"]["ownerReferences"][0].value("uid", "");
  if (!j.contains("spec")) return absl::InvalidArgumentError("spec: missing");
  p.image = j["spec"]["containers"][0].value("image", "");
  return p;
}

std::string Pod(const std::string& name, const std::string& image, const std::string& owner = "cs-1") {
  return nlohmann::json{{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", name}, {"ownerReferences", {{{"uid", owner}}}}}},
                        {"spec", {{"containers", {{{"name", "main"}, {"image", image}}}}}}}
      .dump();
}

bool WaitFor(const std::function<bool()>& cond) {
  for (int i = 0; i < 500; ++i) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return cond();
}

struct Recorder {
  absl::Mutex mu;
  std::vector<std::string> events;
  void Add(std::string e) {
    absl::MutexLock l(&mu);
    events.push_back(std::move(e));
  }
  std::vector<std::string> Get() {
    absl::MutexLock l(&mu);
    return events;
  }
  Informer<PodLite>::Handlers Handlers() {
    return {
        [this](const Informer<PodLite>::Ptr& p) { Add("add " + p->name + " " + p->image); },
        [this](const Informer<PodLite>::Ptr& o, const Informer<PodLite>::Ptr& n) {
          Add("update " + n->name + " " + o->image + "->" + n->image);
        },
        [this](const Informer<PodLite>::Ptr& p) { Add("delete " + p->name); },
    };
  }
};

struct Fixture {
  Fixture() {
    EXPECT_TRUE(server.Start().ok());
    auto c = NewHttpRestClient(ClientConfig{.server = server.url()});
    EXPECT_TRUE(c.ok());
    client = *std::move(c);
  }
  InformerOptions Options() {
    InformerOptions o;
    o.path = kPods;
    o.page_size = 2;
    o.backoff_initial = absl::Milliseconds(10);
    o.backoff_max = absl::Milliseconds(50);
    return o;
  }
  std::unique_ptr<Informer<PodLite>> Make(InformerOptions o) {
    return std::make_unique<Informer<PodLite>>(
        *client, std::move(o), DecodePod, rec.Handlers(),
        [](const PodLite& p) { return std::vector<std::string>{p.owner_uid}; });
  }
  FakeApiServer server;
  std::unique_ptr<RestClient> client;
  Recorder rec;
};

TEST(InformerTest, PagedListThenWatchKeepsCacheAndIndex) {
  Fixture f;
  for (const char* n : {"a", "b", "c", "d", "e"}) f.server.Upsert(kPods, Pod(n, "v1", n[0] < 'c' ? "cs-1" : "cs-2"));
  auto inf = f.Make(f.Options());
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return inf->HasSynced(); }));
  EXPECT_EQ(inf->size(), 5u);
  const auto reqs = f.server.requests();
  EXPECT_EQ(reqs[0], "GET /api/v1/namespaces/ns/pods?limit=2");
  EXPECT_EQ(reqs[1], "GET /api/v1/namespaces/ns/pods?continue=ns/b&limit=2");
  EXPECT_EQ(reqs[2], "GET /api/v1/namespaces/ns/pods?continue=ns/d&limit=2");
  ASSERT_TRUE(WaitFor([&] { return f.server.open_watches() == 1; }));
  EXPECT_TRUE(f.server.requests()[3].starts_with(
      "GET /api/v1/namespaces/ns/pods?allowWatchBookmarks=true&resourceVersion=105&timeoutSeconds="))
      << f.server.requests()[3];

  f.server.Upsert(kPods, Pod("f", "v1", "cs-2"));
  f.server.Upsert(kPods, Pod("a", "v2"));
  f.server.Remove(kPods, "b");
  ASSERT_TRUE(WaitFor([&] { return f.rec.Get().size() == 8; }));
  EXPECT_THAT(f.rec.Get(), ElementsAre("add a v1", "add b v1", "add c v1", "add d v1", "add e v1", "add f v1",
                                       "update a v1->v2", "delete b"));
  EXPECT_EQ(inf->Get("ns/a")->image, "v2");
  EXPECT_EQ(inf->Get("ns/b"), nullptr);
  std::vector<std::string> names;
  for (auto& p : inf->ByIndex("cs-2")) names.push_back(p->name);
  EXPECT_THAT(names, UnorderedElementsAre("c", "d", "e", "f"));
  EXPECT_EQ(inf->ByIndex("cs-1").size(), 1u);
  EXPECT_EQ(inf->ListNamespace("ns").size(), 5u);
  EXPECT_EQ(inf->ListNamespace("other").size(), 0u);
  EXPECT_EQ(inf->list_watch().lists(), 1);
}

TEST(InformerTest, BookmarksAdvanceTheWatchResourceVersion) {
  Fixture f;
  f.server.Upsert(kPods, Pod("a", "v1"));
  f.server.Upsert("/api/v1/namespaces/other/pods", Pod("x", "v1"));  // rv 102, not ours
  auto inf = f.Make(f.Options());
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return f.server.open_watches() == 1; }));
  f.server.Upsert("/api/v1/namespaces/other/pods", Pod("y", "v1"));  // rv 103
  f.server.SendBookmarks();
  ASSERT_TRUE(WaitFor([&] { return inf->list_watch().resource_version() == "103"; }));
  f.server.CloseWatches();
  ASSERT_TRUE(WaitFor([&] { return inf->list_watch().watches() == 2 && f.server.open_watches() == 1; }));
  auto reqs = f.server.requests();
  EXPECT_TRUE(reqs.back().find("resourceVersion=103") != std::string::npos) << reqs.back();
  EXPECT_EQ(inf->list_watch().lists(), 1);
}

// A stream that was up and delivering is resumed at once when its connection breaks; the (here long) backoff is
// only for failing to establish one. Before, each drop doubled the wait, and the cache lagged by up to a minute.
TEST(InformerTest, ResumesAtOnceWhenAnEstablishedWatchIsCut) {
  Fixture f;
  f.server.Upsert(kPods, Pod("a", "v1"));
  InformerOptions o = f.Options();
  o.backoff_initial = absl::Seconds(30);
  o.backoff_max = absl::Seconds(30);
  auto inf = f.Make(o);
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return f.server.open_watches() == 1; }));
  for (int drop = 1; drop <= 3; ++drop) {
    f.server.Upsert(kPods, Pod("a", absl::StrCat("v", drop + 1)));
    ASSERT_TRUE(WaitFor([&] { return inf->Get("ns/a")->image == absl::StrCat("v", drop + 1); }));
    f.server.DropWatches();
    ASSERT_TRUE(WaitFor([&] { return inf->list_watch().watches() == drop + 1 && f.server.open_watches() == 1; }))
        << "drop " << drop << ": " << inf->list_watch().last_error();
  }
  EXPECT_FALSE(inf->list_watch().last_error().ok());  // the cut was seen as an error, not a normal end
  EXPECT_EQ(inf->list_watch().lists(), 1);
}

TEST(InformerTest, RelistsOnGoneAndDiffsTheCache) {
  Fixture f;
  f.server.Upsert(kPods, Pod("a", "v1"));
  f.server.Upsert(kPods, Pod("b", "v1"));
  auto inf = f.Make(f.Options());
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return f.server.open_watches() == 1; }));
  // Drop the watch and keep it from reconnecting while events are missed
  // and then compacted away.
  f.server.InjectFault({"GET", kPods, "watch=1", 503, "ServiceUnavailable", "", 1000000});
  f.server.CloseWatches();
  ASSERT_TRUE(WaitFor([&] { return inf->list_watch().watches() >= 3; }))
      << inf->list_watch().watches() << " " << inf->list_watch().last_error() << " "
      << f.server.requests().back();
  f.server.Remove(kPods, "a");
  f.server.Upsert(kPods, Pod("b", "v2"));
  f.server.Upsert(kPods, Pod("z", "v1"));
  f.server.Compact();
  f.server.ClearFaults();
  ASSERT_TRUE(WaitFor([&] { return inf->Get("ns/z") != nullptr; }));
  EXPECT_EQ(inf->list_watch().lists(), 2);
  EXPECT_EQ(inf->size(), 2u);
  EXPECT_TRUE(IsGone(inf->list_watch().last_error())) << inf->list_watch().last_error();
  EXPECT_EQ(inf->Get("ns/a"), nullptr);
  EXPECT_EQ(inf->Get("ns/z")->image, "v1");
  ASSERT_TRUE(WaitFor([&] { return f.rec.Get().size() == 5; }));
  auto ev = f.rec.Get();
  EXPECT_THAT(std::vector<std::string>(ev.begin() + 2, ev.end()),
              UnorderedElementsAre("update b v1->v2", "add z v1", "delete a"));
  EXPECT_EQ(inf->ByIndex("cs-1").size(), 2u);
}

TEST(InformerTest, ExpiredContinueTokenFallsBackToUnpagedList) {
  Fixture f;
  for (const char* n : {"a", "b", "c"}) f.server.Upsert(kPods, Pod(n, "v1"));
  f.server.InjectFault({"GET", kPods, "continue=", 410, "Expired", "", 1});
  auto inf = f.Make(f.Options());
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return inf->HasSynced(); }));
  EXPECT_EQ(inf->size(), 3u);
  auto reqs = f.server.requests();
  EXPECT_EQ(reqs[2], "GET /api/v1/namespaces/ns/pods");
  EXPECT_EQ(f.rec.Get().size(), 3u);  // no duplicate adds from the aborted pages
}

TEST(InformerTest, SkipsUndecodableObjectsAndRetriesFailedLists) {
  Fixture f;
  f.server.Upsert(kPods, Pod("a", "v1"));
  f.server.Upsert(kPods, R"({"kind":"Pod","metadata":{"name":"nospec"}})");
  f.server.InjectFault({"GET", kPods, "limit=", 500, "InternalError", "", 1});
  auto inf = f.Make(f.Options());
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return inf->HasSynced(); }));
  EXPECT_EQ(inf->size(), 1u);
  EXPECT_EQ(inf->decode_errors(), 1);
  // One failed LIST is retried by the RestClient itself (GET on 5xx).
  EXPECT_EQ(inf->list_watch().lists(), 1);
}

TEST(InformerTest, ResyncRedeliversCachedObjects) {
  Fixture f;
  f.server.Upsert(kPods, Pod("a", "v1"));
  InformerOptions o = f.Options();
  o.resync_period = absl::Milliseconds(30);
  auto inf = f.Make(o);
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return f.rec.Get().size() >= 3; }));
  inf->Stop();
  auto ev = f.rec.Get();
  EXPECT_EQ(ev[0], "add a v1");
  EXPECT_EQ(ev[1], "update a v1->v1");
}

// A server that cannot be reached: every request fails in transport, so every LIST fails.
class UnreachableClient final : public RestClient {
 public:
  absl::StatusOr<HttpResponse> Do(std::string_view, std::string_view, std::string_view, std::string_view) override {
    return absl::UnavailableError("connection refused");
  }
  absl::Status Watch(std::string_view, const std::function<bool(std::string_view)>&, CancelToken*) override {
    return absl::UnavailableError("connection refused");
  }
};

// Stops `inf` on another thread and says whether Stop returned within a (generous) real-time bound, without the
// clock moving: a wait that only the clock ends fails the test instead of hanging it.
bool StopsWithoutTheClock(Informer<PodLite>& inf, FakeClock& clock) {
  absl::Notification stopped;
  std::thread stopper([&] {
    inf.Stop();
    stopped.Notify();
  });
  const bool prompt = stopped.WaitForNotificationWithTimeout(absl::Seconds(60));
  if (!prompt) clock.Advance(absl::Hours(1));  // release the wait so the thread can be joined
  stopper.join();
  return prompt;
}

// The relist back-off waits on the injected clock: each failed LIST waits [d, 2d) (jitter as client-go's
// wait.Backoff) with d doubling from backoff_initial up to backoff_max, the next LIST comes when the clock reaches
// that deadline and not before, and Stop ends the wait at once.
TEST(InformerTest, RelistBackOffIsOnTheClockAndStopEndsIt) {
  UnreachableClient client;
  FakeClock clock;
  InformerOptions o;
  o.path = kPods;
  o.backoff_initial = absl::Milliseconds(800);
  o.backoff_max = absl::Seconds(30);
  o.clock = &clock;
  Informer<PodLite> inf(client, o, DecodePod);
  inf.Start();
  const absl::Duration want[] = {absl::Milliseconds(800), absl::Milliseconds(1600), absl::Milliseconds(3200),
                                 absl::Milliseconds(6400), absl::Milliseconds(12800), absl::Milliseconds(25600),
                                 absl::Seconds(30), absl::Seconds(30)};
  for (int i = 0; i < static_cast<int>(std::size(want)); ++i) {
    SCOPED_TRACE(i);
    const absl::Time now = clock.Now();
    ASSERT_TRUE(clock.AwaitDeadlineAfter(now, absl::Seconds(60))) << "no back-off wait on the clock";
    EXPECT_EQ(inf.list_watch().lists(), i + 1);
    EXPECT_FALSE(inf.list_watch().last_error().ok());
    const std::vector<absl::Time> deadlines = clock.Deadlines();
    ASSERT_EQ(deadlines.size(), 1u);
    const absl::Duration wait = deadlines[0] - now;
    EXPECT_GE(wait, want[i]);
    EXPECT_LT(wait, 2 * want[i]);
    if (wait > absl::Milliseconds(1)) {
      // Short of the deadline: still waiting, no new LIST.
      clock.Advance(wait - absl::Milliseconds(1));
      EXPECT_EQ(clock.Deadlines(), deadlines);
      EXPECT_EQ(inf.list_watch().lists(), i + 1);
    }
    clock.Set(deadlines[0]);
    ASSERT_TRUE(clock.AwaitDeadlineAfter(deadlines[0], absl::Seconds(60))) << "no LIST after the back-off";
  }
  EXPECT_TRUE(StopsWithoutTheClock(inf, clock)) << "Stop waited for the back-off";
  EXPECT_EQ(inf.list_watch().lists(), static_cast<int>(std::size(want)) + 1);
}

// The resync period is on the clock too: a resync every period of the clock and none in between; Stop ends the
// wait at once.
TEST(InformerTest, ResyncPeriodIsOnTheClockAndStopEndsIt) {
  Fixture f;
  f.server.Upsert(kPods, Pod("a", "v1"));
  FakeClock clock;
  InformerOptions o = f.Options();
  o.resync_period = absl::Minutes(10);
  o.clock = &clock;
  auto inf = f.Make(o);
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return inf->HasSynced() && f.rec.Get().size() == 1; }));
  for (int i = 1; i <= 2; ++i) {
    SCOPED_TRACE(i);
    const absl::Time now = clock.Now();
    ASSERT_TRUE(clock.AwaitDeadlineAfter(now, absl::Seconds(60))) << "no resync wait on the clock";
    EXPECT_EQ(clock.Deadlines(), std::vector<absl::Time>{now + absl::Minutes(10)});
    clock.Advance(absl::Minutes(10) - absl::Seconds(1));
    EXPECT_EQ(f.rec.Get().size(), static_cast<size_t>(i));
    clock.Advance(absl::Seconds(1));
    ASSERT_TRUE(clock.AwaitDeadlineAfter(now + absl::Minutes(10), absl::Seconds(60)));
    EXPECT_EQ(f.rec.Get().size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(f.rec.Get().back(), "update a v1->v1");
  }
  EXPECT_TRUE(StopsWithoutTheClock(*inf, clock)) << "Stop waited for the resync period";
}

TEST(InformerTest, StopIsPromptWithAnIdleWatch) {
  Fixture f;
  auto inf = f.Make(f.Options());
  inf->Start();
  ASSERT_TRUE(WaitFor([&] { return f.server.open_watches() == 1; }));
  const absl::Time start = absl::Now();
  inf->Stop();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

}  // namespace
}  // namespace cloneset::kube
