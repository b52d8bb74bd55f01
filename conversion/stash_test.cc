#include "conversion/stash.h"

#include "gtest/gtest.h"

namespace cloneset::conversion {
namespace {

using Json = nlohmann::json;
using Pointer = Json::json_pointer;

TEST(Stash, DiffThenApplyGivesTheWantedObject) {
  const Json computed = {{"a", {{"x", 1}, {"y", {1, 2}}}}, {"b", "same"}, {"gone", true}};
  const Json wanted = {{"a", {{"x", 2}, {"y", {1, 2}}, {"z/w", "new"}}}, {"b", "same"}, {"c", nullptr}};
  const std::vector<StashEntry> d = DiffForStash(computed, wanted);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0], (StashEntry{Pointer("/a/x"), Json(1), Json(2)}));
  EXPECT_EQ(d[1], (StashEntry{Pointer("/a/z~1w"), std::nullopt, Json("new")}));
  EXPECT_EQ(d[2], (StashEntry{Pointer("/c"), std::nullopt, Json(nullptr)}));
  EXPECT_EQ(d[3], (StashEntry{Pointer("/gone"), Json(true), std::nullopt}));
  Json target = computed;
  ApplyStash(d, &target);
  EXPECT_EQ(target, wanted);
}

TEST(Stash, EqualObjectsNeedNothing) {
  const Json o = {{"a", {{"b", {1, {{"c", 2}}}}}}};
  EXPECT_TRUE(DiffForStash(o, o).empty());
}

TEST(Stash, ArraysAndTypeChangesAreReplacedWhole) {
  const std::vector<StashEntry> d = DiffForStash(Json{{"l", {1, 2}}, {"t", {{"k", 1}}}}, Json{{"l", {1}}, {"t", 5}});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].path, Pointer("/l"));
  EXPECT_EQ(d[1], (StashEntry{Pointer("/t"), Json{{"k", 1}}, Json(5)}));
}

TEST(Stash, AnEntryAppliesOnlyWhileThePathHoldsWhatItWas) {
  const std::vector<StashEntry> entries = {
      {Pointer("/spec/type"), Json("RollingUpdate"), std::nullopt},  // was RollingUpdate: remove it
      {Pointer("/spec/rolling/policy"), std::nullopt, Json("InPlaceOnly")},  // was absent: add it
  };
  Json unchanged = {{"spec", {{"type", "RollingUpdate"}}}};
  ApplyStash(entries, &unchanged);
  EXPECT_EQ(unchanged, Json({{"spec", {{"rolling", {{"policy", "InPlaceOnly"}}}}}}));

  Json edited = {{"spec", {{"type", "OnDelete"}, {"rolling", {{"policy", "ReCreate"}}}}}};
  const Json before = edited;
  ApplyStash(entries, &edited);
  EXPECT_EQ(edited, before);
}

TEST(Stash, EntriesUnderANonObjectAreSkipped) {
  Json target = {{"spec", 5}};
  ApplyStash({{Pointer("/spec/x"), std::nullopt, Json(1)}, {Pointer(""), std::nullopt, Json(1)}}, &target);
  EXPECT_EQ(target, Json({{"spec", 5}}));
}

TEST(Stash, EncodeDecodeRoundTrip) {
  const std::vector<StashEntry> entries = {{Pointer("/metadata/labels/a~1b"), std::nullopt, Json("true")},
                                           {Pointer("/spec/x"), Json{{"k", {1, 2}}}, std::nullopt}};
  const std::string text = EncodeStash(entries);
  EXPECT_EQ(text, R"([{"path":"/metadata/labels/a~1b","value":"true"},{"path":"/spec/x","was":{"k":[1,2]}}])");
  EXPECT_EQ(DecodeStash(text), entries);
}

TEST(Stash, DecodeSkipsWhatItCannotRead) {
  EXPECT_TRUE(DecodeStash("").empty());
  EXPECT_TRUE(DecodeStash("{}").empty());
  EXPECT_TRUE(DecodeStash("[1, \"x\"").empty());
  const std::vector<StashEntry> d =
      DecodeStash(R"([1, {"path": 3}, {"path": "no-slash"}, {"path": "/a~2"}, {"path": ""}, {"path": "/ok", "value": 1}])");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], (StashEntry{Pointer("/ok"), std::nullopt, Json(1)}));
}

}  // namespace
}  // namespace cloneset::conversion
