#include "kube/watch_stream.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/api_status.h"

namespace cloneset::kube {
namespace {

using ::testing::ElementsAre;

TEST(JsonObjectSplitterTest, SplitsAtAnyChunkBoundary) {
  const std::string stream =
      " {\"type\":\"ADDED\",\"object\":{\"s\":\"a}b{\\\"c\"}}\n"
      "{\"type\":\"MODIFIED\",\"object\":{\"arr\":[{\"x\":1},{}]}}"
      "{\"e\":\"\\\\\"}\n";
  const std::vector<std::string> want = {
      "{\"type\":\"ADDED\",\"object\":{\"s\":\"a}b{\\\"c\"}}",
      "{\"type\":\"MODIFIED\",\"object\":{\"arr\":[{\"x\":1},{}]}}",
      "{\"e\":\"\\\\\"}",
  };
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    JsonObjectSplitter splitter;
    std::vector<std::string> got;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      splitter.Feed(std::string_view(stream).substr(i, chunk), [&](std::string_view o) {
        got.emplace_back(o);
        return true;
      });
    }
    EXPECT_EQ(got, want) << "chunk size " << chunk;
    EXPECT_EQ(splitter.buffered(), 0u);
  }
}

TEST(JsonObjectSplitterTest, StopsWhenAsked) {
  JsonObjectSplitter splitter;
  int n = 0;
  EXPECT_FALSE(splitter.Feed("{}{}{}", [&](std::string_view) { return ++n < 2; }));
  EXPECT_EQ(n, 2);
}

TEST(JsonObjectSplitterTest, WholeObjectsAreViewsIntoTheData) {
  // The usual read holds whole events: they are handed out without a copy; only the split one is assembled.
  const std::string first = "{\"a\":1}\n{\"b\":\"}\"}\n{\"c\":";
  const std::string second = "[3]}{\"d\":4}";
  JsonObjectSplitter splitter;
  std::vector<std::string> got;
  std::vector<bool> inside;
  auto collect = [&](const std::string& data) {
    return [&](std::string_view o) {
      got.emplace_back(o);
      inside.push_back(o.data() >= data.data() && o.data() + o.size() <= data.data() + data.size());
      return true;
    };
  };
  EXPECT_TRUE(splitter.Feed(first, collect(first)));
  EXPECT_EQ(splitter.buffered(), 5u);  // {"c":
  EXPECT_TRUE(splitter.Feed(second, collect(second)));
  EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "{\"b\":\"}\"}", "{\"c\":[3]}", "{\"d\":4}"}));
  EXPECT_EQ(inside, (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(splitter.buffered(), 0u);
}

TEST(JsonObjectSplitterTest, AfterAStopTheRestComesFirst) {
  JsonObjectSplitter splitter;
  std::vector<std::string> got;
  EXPECT_FALSE(splitter.Feed("{\"a\":1}{\"b\":2}{\"c\"", [&](std::string_view o) {
    got.emplace_back(o);
    return false;
  }));
  EXPECT_EQ(splitter.buffered(), 11u);  // {"b":2}{"c"
  EXPECT_TRUE(splitter.Feed(":3}", [&](std::string_view o) {
    got.emplace_back(o);
    return true;
  }));
  EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
  EXPECT_EQ(splitter.buffered(), 0u);
}

TEST(ParseWatchEventTest, Types) {
  auto added = ParseWatchEvent(
      R"({"object":{"kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1","resourceVersion":"7"}},"type":"ADDED"})");
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->type, "ADDED");
  EXPECT_EQ(added->meta.Key(), "ns/p");
  EXPECT_EQ(added->meta.uid, "u1");
  EXPECT_EQ(added->meta.resource_version, "7");
  EXPECT_EQ(added->object_json,
            R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1","resourceVersion":"7"}})");

  auto bookmark = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"99"}}})");
  ASSERT_TRUE(bookmark.ok());
  EXPECT_EQ(bookmark->meta.resource_version, "99");
  EXPECT_EQ(bookmark->meta.Key(), "");

  auto gone = ParseWatchEvent(
      R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired","message":"too old resource version: 1 (5)"}})j");
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(IsGone(gone->error)) << gone->error;
  EXPECT_EQ(gone->error.message(), "too old resource version: 1 (5)");

  for (const char* bad : {"{", "[]", R"({"type":"ADDED"})", R"({"object":{}})",
                          R"({"type":"ADDED","object":{"metadata":{"name":5}}})"}) {
    EXPECT_FALSE(ParseWatchEvent(bad).ok()) << bad;
  }
}

TEST(ParseListPageTest, ItemsAndContinuation) {
  auto page = ParseListPage(
      R"({"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"metadata":{"continue":"c1","resourceVersion":"42"}})");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->resource_version, "42");
  EXPECT_EQ(page->continue_token, "c1");
  EXPECT_THAT(page->items, ElementsAre(R"({"metadata":{"name":"a"}})", R"({"metadata":{"name":"b"}})"));
  auto empty = ParseListPage(R"({"metadata":{"resourceVersion":"1"},"items":null})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->items.empty());
  EXPECT_FALSE(ParseListPage(R"({"items":[1]})").ok());
  EXPECT_FALSE(ParseListPage("nope").ok());
}

}  // namespace
}  // namespace cloneset::kube
