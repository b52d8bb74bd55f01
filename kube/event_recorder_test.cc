#include "kube/event_recorder.h"

#include "absl/strings/str_cat.h"
#include "base/testing/fake_clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/testing/fake_apiserver.h"
#include "kube/testing/mock_rest_client.h"
#include "nlohmann/json.hpp"

namespace cloneset::kube {
namespace {

using ::testing::_;
using ::testing::DoAll;
using ::testing::Eq;
using ::testing::Return;
using ::testing::SaveArg;
using base::testing::FakeClock;
using testing::MockRestClient;

const absl::Time T0 = absl::FromUnixSeconds(1700000000);
const ObjectReference kCloneSet{"apps.kruise.io/v1alpha1", "CloneSet", "ns", "web", "uid-1", "12"};

EventRecorderOptions Opts(const FakeClock& clock, size_t max_entries = 4096) {
  EventRecorderOptions o;
  o.component = "cloneset-executor";
  o.host = "executor-0";
  o.clock = &clock;
  o.max_entries = max_entries;
  return o;
}

TEST(EventRecorderTest, CreatesThenAggregatesRepeatsWithinTenMinutes) {
  MockRestClient client;
  FakeClock clock(T0);
  EventRecorder rec(client, Opts(clock));
  std::string body;
  EXPECT_CALL(client, Create(Eq("/api/v1/namespaces/ns/events"), _))
      .WillOnce(DoAll(SaveArg<1>(&body), Return(std::string("{}"))));
  ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "SuccessfulCreate", "created pod web-abc").ok());
  auto ev = nlohmann::json::parse(body);
  const std::string name = "web.17979cfe362a0000";  // 1700000000e9 ns in hex
  EXPECT_EQ(ev["metadata"]["name"], name);
  EXPECT_EQ(ev["metadata"]["namespace"], "ns");
  EXPECT_EQ(ev["involvedObject"],
            nlohmann::json::parse(R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","namespace":"ns",
                                      "name":"web","uid":"uid-1","resourceVersion":"12"})"));
  EXPECT_EQ(ev["count"], 1);
  EXPECT_EQ(ev["firstTimestamp"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(ev["lastTimestamp"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(ev["source"], nlohmann::json::parse(R"({"component":"cloneset-executor","host":"executor-0"})"));
  EXPECT_EQ(ev["type"], "Normal");
  EXPECT_EQ(ev["reason"], "SuccessfulCreate");

  clock.Advance(absl::Minutes(5));
  EXPECT_CALL(client, Patch(Eq("/api/v1/namespaces/ns/events/" + name), PatchType::kMerge,
                            Eq(R"({"count":2,"lastTimestamp":"2023-11-14T22:18:20Z"})")))
      .WillOnce(Return(std::string("{}")));
  ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "SuccessfulCreate", "created pod web-abc").ok());

  // The window counts from the last repeat.
  clock.Advance(absl::Minutes(9));
  EXPECT_CALL(client, Patch(Eq("/api/v1/namespaces/ns/events/" + name), PatchType::kMerge,
                            Eq(R"({"count":3,"lastTimestamp":"2023-11-14T22:27:20Z"})")))
      .WillOnce(Return(std::string("{}")));
  ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "SuccessfulCreate", "created pod web-abc").ok());

  clock.Advance(absl::Minutes(10));
  EXPECT_CALL(client, Create(Eq("/api/v1/namespaces/ns/events"), _)).WillOnce(Return(std::string("{}")));
  ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "SuccessfulCreate", "created pod web-abc").ok());
  EXPECT_EQ(rec.cache_size(), 1u);
}

// The body is the Event document (escapes included), with and without the involved object's resourceVersion.
TEST(EventRecorderTest, BodyIsTheSameBytesAsTheJsonDocumentDump) {
  const std::string message = std::string("pod \"web-1\" \\ line\nnext\ttab\r\b\f ctl\x01\x1f caf\xc3\xa9 /");
  for (const std::string& rv : {std::string("12"), std::string()}) {
    MockRestClient client;
    FakeClock clock(T0);
    EventRecorder rec(client, Opts(clock));
    ObjectReference ref = kCloneSet;
    ref.resource_version = rv;
    std::string body;
    EXPECT_CALL(client, Create(Eq("/api/v1/namespaces/ns/events"), _))
        .WillOnce(DoAll(SaveArg<1>(&body), Return(std::string("{}"))));
    ASSERT_TRUE(rec.Event(ref, "Warning", "Fail\"ed", message).ok());
    nlohmann::json involved = {{"apiVersion", "apps.kruise.io/v1alpha1"}, {"kind", "CloneSet"}, {"namespace", "ns"},
                               {"name", "web"}, {"uid", "uid-1"}};
    if (!rv.empty()) involved["resourceVersion"] = rv;
    const nlohmann::json want = {
        {"apiVersion", "v1"},
        {"kind", "Event"},
        {"metadata", {{"name", "web.17979cfe362a0000"}, {"namespace", "ns"}}},
        {"involvedObject", involved},
        {"type", "Warning"},
        {"reason", "Fail\"ed"},
        {"message", message},
        {"count", 1},
        {"firstTimestamp", "2023-11-14T22:13:20Z"},
        {"lastTimestamp", "2023-11-14T22:13:20Z"},
        {"source", {{"component", "cloneset-executor"}, {"host", "executor-0"}}},
        {"reportingComponent", "cloneset-executor"},
        {"reportingInstance", "executor-0"},
    };
    EXPECT_EQ(body, want.dump()) << "resourceVersion \"" << rv << "\"";
  }
}

// A message with invalid UTF-8 (it can quote a user's value) is still recorded, the bad bytes replaced by U+FFFD;
// nlohmann's default dump() throws on them.
TEST(EventRecorderTest, InvalidUtf8InTheMessageIsReplacedNotThrown) {
  MockRestClient client;
  FakeClock clock(T0);
  EventRecorder rec(client, Opts(clock));
  std::string body;
  EXPECT_CALL(client, Create(Eq("/api/v1/namespaces/ns/events"), _))
      .WillOnce(DoAll(SaveArg<1>(&body), Return(std::string("{}"))));
  ASSERT_TRUE(rec.Event(kCloneSet, "Warning", "Failed", std::string("image \"caf\xc3\" not found")).ok());
  const auto doc = nlohmann::json::parse(body);
  EXPECT_EQ(doc["message"], "image \"caf\xef\xbf\xbd\" not found");
}

TEST(EventRecorderTest, DistinctKeysExpiredEventsAndErrors) {
  MockRestClient client;
  FakeClock clock(T0);
  EventRecorder rec(client, Opts(clock, /*max_entries=*/2));
  EXPECT_CALL(client, Create(_, _)).Times(3).WillRepeatedly(Return(std::string("{}")));
  ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "A", "m").ok());
  ASSERT_TRUE(rec.Event(kCloneSet, "Warning", "A", "m").ok());  // type is part of the key
  ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "A", "other").ok());
  EXPECT_EQ(rec.cache_size(), 2u);  // LRU bound: the first one was forgotten
  ::testing::Mock::VerifyAndClearExpectations(&client);

  // The evicted key starts a new Event; a Patch that finds the Event gone
  // (TTL) falls back to a Create.
  EXPECT_CALL(client, Create(_, _)).Times(2).WillRepeatedly(Return(std::string("{}")));
  EXPECT_CALL(client, Patch(_, _, _)).WillOnce(Return(absl::NotFoundError("gone")));
  ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "A", "m").ok());
  ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "A", "m").ok());
  ::testing::Mock::VerifyAndClearExpectations(&client);

  EXPECT_CALL(client, Patch(_, _, _)).WillOnce(Return(absl::UnavailableError("down")));
  EXPECT_EQ(rec.Event(kCloneSet, "Normal", "A", "m").code(), absl::StatusCode::kUnavailable);

  ObjectReference node{"v1", "Node", "", "node-1", "uid-n", ""};
  std::string body;
  EXPECT_CALL(client, Create(Eq("/api/v1/namespaces/default/events"), _))
      .WillOnce(DoAll(SaveArg<1>(&body), Return(std::string("{}"))));
  ASSERT_TRUE(rec.Event(node, "Normal", "B", "m").ok());
  EXPECT_FALSE(nlohmann::json::parse(body)["involvedObject"].contains("resourceVersion"));
}

TEST(EventRecorderTest, AgainstFakeApiServer) {
  testing::FakeApiServer server;
  ASSERT_TRUE(server.Start().ok());
  auto client = NewHttpRestClient(ClientConfig{.server = server.url()});
  ASSERT_TRUE(client.ok());
  FakeClock clock(T0);
  EventRecorder rec(**client, Opts(clock));
  ASSERT_TRUE(rec.Event(kCloneSet, "Warning", "InPlaceNotPossible", "containers list replaced").ok());
  clock.Advance(absl::Seconds(30));
  ASSERT_TRUE(rec.Event(kCloneSet, "Warning", "InPlaceNotPossible", "containers list replaced").ok());
  auto stored = nlohmann::json::parse(server.GetObject("/api/v1/namespaces/ns/events", "web.17979cfe362a0000"));
  EXPECT_EQ(stored["count"], 2);
  EXPECT_EQ(stored["firstTimestamp"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(stored["lastTimestamp"], "2023-11-14T22:13:50Z");
}

}  // namespace
}  // namespace cloneset::kube

namespace cloneset::kube {
namespace {

// client-go's spam filter: per source and object a burst of 25, then one event per 5 minutes; other objects have
// buckets of their own; repeats (the count patches) are events too; spam_burst 0 turns it off.
TEST(EventRecorderTest, SpamFilterDropsAnObjectsEventsBeyondItsBurstUntilItRefills) {
  MockRestClient client;
  FakeClock clock(T0);
  EventRecorder rec(client, Opts(clock));
  EXPECT_CALL(client, Create(_, _)).Times(25).WillRepeatedly(Return(std::string("{}")));
  for (int i = 0; i < 25; ++i) {
    ASSERT_TRUE(rec.Event(kCloneSet, "Normal", "SuccessfulCreate", absl::StrCat("pod ", i)).ok());
  }
  ::testing::Mock::VerifyAndClearExpectations(&client);

  EXPECT_CALL(client, Create(_, _)).Times(0);
  EXPECT_CALL(client, Patch(_, _, _)).Times(0);
  EXPECT_TRUE(rec.Event(kCloneSet, "Normal", "SuccessfulCreate", "pod 25").ok());  // dropped, not an error
  EXPECT_TRUE(rec.Event(kCloneSet, "Normal", "SuccessfulCreate", "pod 0").ok());   // a repeat is dropped too
  EXPECT_TRUE(rec.Event(kCloneSet, "Warning", "FailedCreate", "quota").ok());
  EXPECT_EQ(rec.dropped(), 3);
  ::testing::Mock::VerifyAndClearExpectations(&client);

  const ObjectReference other{"apps.kruise.io/v1alpha1", "CloneSet", "ns", "api", "uid-2", "3"};
  EXPECT_CALL(client, Create(_, _)).WillOnce(Return(std::string("{}")));
  EXPECT_TRUE(rec.Event(other, "Normal", "SuccessfulCreate", "pod 0").ok());
  ::testing::Mock::VerifyAndClearExpectations(&client);

  clock.Advance(absl::Minutes(5));  // one token back for kCloneSet
  EXPECT_CALL(client, Create(_, _)).WillOnce(Return(std::string("{}")));
  EXPECT_TRUE(rec.Event(kCloneSet, "Warning", "FailedCreate", "quota").ok());
  EXPECT_TRUE(rec.Event(kCloneSet, "Warning", "FailedCreate", "quota").ok());
  EXPECT_EQ(rec.dropped(), 4);
  ::testing::Mock::VerifyAndClearExpectations(&client);

  EventRecorderOptions unfiltered = Opts(clock);
  unfiltered.spam_burst = 0;
  EventRecorder all(client, unfiltered);
  EXPECT_CALL(client, Create(_, _)).Times(40).WillRepeatedly(Return(std::string("{}")));
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(all.Event(kCloneSet, "Normal", "SuccessfulCreate", absl::StrCat("pod ", i)).ok());
  }
  EXPECT_EQ(all.dropped(), 0);
}

}  // namespace
}  // namespace cloneset::kube
