#include "base/log.h"

#include <sstream>

#include "base/testing/fake_clock.h"
#include "gtest/gtest.h"

namespace cloneset::base {
namespace {

TEST(JsonLoggerTest, LayoutsTable) {
  testing::FakeClock clock(absl::FromUnixMillis(1'800'000'000'123));
  struct Row {
    const char* name;
    bool nested;
    const char* component;
    LogLevel min_level;
    LogLevel level;
    LogFields fields;
    std::string want;
  };
  const Row rows[] = {
      {"flat, fields in order", false, "", LogLevel::kInfo, LogLevel::kWarn,
       {{"key", std::string("ns/cs")}, {"n", int64_t{3}}, {"ok", true}},
       R"({"ts":"2027-01-15T08:00:00.123Z","level":"warn","msg":"m","key":"ns/cs","n":3,"ok":true})"},
      {"nested", true, "", LogLevel::kInfo, LogLevel::kInfo, {{"x", 1.5}},
       R"({"ts":"2027-01-15T08:00:00.123Z","level":"info","msg":"m","fields":{"x":1.5}})"},
      {"nested, no fields", true, "", LogLevel::kInfo, LogLevel::kError, {},
       R"({"ts":"2027-01-15T08:00:00.123Z","level":"error","msg":"m","fields":{}})"},
      {"component", false, "cloneset-agent", LogLevel::kInfo, LogLevel::kInfo, {{"node", std::string("n1")}},
       R"({"ts":"2027-01-15T08:00:00.123Z","level":"info","msg":"m","component":"cloneset-agent","node":"n1"})"},
      {"below the level", false, "", LogLevel::kWarn, LogLevel::kInfo, {}, ""},
      {"invalid UTF-8 replaced", false, "", LogLevel::kInfo, LogLevel::kInfo, {{"s", std::string("a\xff")}},
       "{\"ts\":\"2027-01-15T08:00:00.123Z\",\"level\":\"info\",\"msg\":\"m\",\"s\":\"a\xEF\xBF\xBD\"}"},
  };
  for (const Row& row : rows) {
    std::ostringstream out;
    LogOptions options;
    options.out = &out;
    options.min_level = row.min_level;
    options.nested_fields = row.nested;
    options.component = row.component;
    options.clock = &clock;
    JsonLogger log(options);
    log.Log(row.level, "m", row.fields);
    EXPECT_EQ(out.str(), row.want.empty() ? "" : row.want + "\n") << row.name;
  }
}

TEST(JsonLoggerTest, ParseLogLevel) {
  LogLevel level = LogLevel::kInfo;
  EXPECT_TRUE(ParseLogLevel("debug", &level));
  EXPECT_EQ(level, LogLevel::kDebug);
  EXPECT_TRUE(ParseLogLevel("error", &level));
  EXPECT_EQ(level, LogLevel::kError);
  EXPECT_FALSE(ParseLogLevel("warning", &level));
  EXPECT_EQ(level, LogLevel::kError);
}

TEST(JsonLoggerTest, ProcessLoggerIsReplaceable) {
  std::ostringstream out;
  testing::FakeClock clock(absl::FromUnixMillis(1'800'000'000'123));
  LogOptions options;
  options.out = &out;
  options.component = "c";
  options.clock = &clock;
  JsonLogger mine(options);
  SetProcessLogger(&mine);
  ProcessLogger().Info("hello");
  SetProcessLogger(nullptr);
  EXPECT_EQ(out.str(), R"({"ts":"2027-01-15T08:00:00.123Z","level":"info","msg":"hello","component":"c"})" "\n");
  EXPECT_NE(&ProcessLogger(), &mine);
}

}  // namespace
}  // namespace cloneset::base
