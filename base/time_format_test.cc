#include "base/time_format.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "gtest/gtest.h"

namespace cloneset::base {
namespace {

absl::Time Utc(int y, int mo, int d, int h, int mi, int s) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone());
}

TEST(TimeFormatTest, FormatTimeIsUtcWholeSeconds) {
  struct Case {
    absl::Time t;
    std::string want;
  };
  const std::vector<Case> cases = {
      {absl::UnixEpoch(), "1970-01-01T00:00:00Z"},
      {Utc(2026, 11, 26, 7, 40, 0), "2026-11-26T07:40:00Z"},
      // The fraction is dropped, never rounded up to the next second.
      {Utc(2026, 11, 26, 7, 40, 0) + absl::Milliseconds(999), "2026-11-26T07:40:00Z"},
      {Utc(2024, 2, 29, 23, 59, 59), "2024-02-29T23:59:59Z"},
      // Before the epoch the floor is still toward the past.
      {absl::UnixEpoch() - absl::Milliseconds(1), "1969-12-31T23:59:59Z"},
      {absl::FromUnixSeconds(0x7fffffff), "2038-01-19T03:14:07Z"},
  };
  for (const Case& c : cases) EXPECT_EQ(base::FormatTime(c.t), c.want);
}

TEST(TimeFormatTest, FormatMicroTimeHasSixDigits) {
  struct Case {
    absl::Time t;
    std::string want;
  };
  const std::vector<Case> cases = {
      {absl::UnixEpoch(), "1970-01-01T00:00:00.000000Z"},
      {Utc(2026, 11, 26, 7, 40, 0) + absl::Microseconds(123456), "2026-11-26T07:40:00.123456Z"},
      // Nanoseconds are dropped.
      {Utc(2026, 11, 26, 7, 40, 0) + absl::Nanoseconds(1999), "2026-11-26T07:40:00.000001Z"},
  };
  for (const Case& c : cases) EXPECT_EQ(base::FormatMicroTime(c.t), c.want);
}

TEST(TimeFormatTest, ParseAcceptsWhatAnApiServerSends) {
  const absl::Time base_time = Utc(2026, 11, 26, 7, 40, 0);
  struct Case {
    std::string text;
    absl::Time want;
  };
  const std::vector<Case> cases = {
      {"2026-11-26T07:40:00Z", base_time},
      {"2026-11-26T07:40:00.123456Z", base_time + absl::Microseconds(123456)},
      {"2026-11-26T07:40:00.5Z", base_time + absl::Milliseconds(500)},
      {"2026-11-26T07:40:00.123456789Z", base_time + absl::Nanoseconds(123456789)},
      {"2026-11-26T09:40:00+02:00", base_time},
      {"2026-11-26T02:10:00-05:30", base_time},
      {"2026-11-26T07:40:00+00:00", base_time},
      {"2026-11-26t07:40:00Z", base_time},
      {"1970-01-01T00:00:00Z", absl::UnixEpoch()},
      {"2024-02-29T12:00:00Z", Utc(2024, 2, 29, 12, 0, 0)},
      // Surrounding whitespace is ignored (absl's rule, kept by every former copy).
      {" 2026-11-26T07:40:00Z ", base_time},
  };
  for (const Case& c : cases) {
    absl::StatusOr<absl::Time> got = base::ParseTime(c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(TimeFormatTest, ParseRejectsMalformedTextNamingIt) {
  const std::vector<std::string> cases = {
      "",
      "yesterday",
      "2026-11-26",
      "2026-11-26T07:40:00",          // no zone
      "2026-11-26 07:40:00Z",         // space instead of T
      "2027-13-01T00:00:00Z",         // no month 13
      "2023-02-29T00:00:00Z",         // not a leap year
      "2026-11-26T24:00:01Z",         // no hour 24
      "2026-11-26T07:40:00Zjunk",     // trailing text
      "2026-11-26T07:40:00.Z",        // a dot without digits
      "1764142800",                   // Unix seconds are not RFC 3339
  };
  for (const std::string& text : cases) {
    absl::StatusOr<absl::Time> got = base::ParseTime(text);
    ASSERT_FALSE(got.ok()) << "accepted \"" << text << "\" as " << *got;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(got.status().message().find("\"" + text + "\" is not an RFC 3339 time"), std::string::npos)
        << got.status();
  }
}

// ParseTime reads the form metav1.Time serializes on a path of its own; absl reads every other text, including the
// same text with a leading space (absl skips surrounding whitespace). Both answer alike for every date and time of
// that form, valid or not (days 0-32 of every month of a leap and a common year, hours, minutes and seconds at and
// past their ends).
TEST(TimeFormatTest, TheCommonFormReadsAsAbslReadsIt) {
  std::vector<std::string> texts;
  for (const char* year : {"2024", "2023", "1900", "2000", "0000", "9999"}) {
    for (int month = 0; month <= 13; ++month) {
      for (int day = 0; day <= 32; ++day) {
        texts.push_back(absl::StrCat(year, "-", month < 10 ? "0" : "", month, "-", day < 10 ? "0" : "", day,
                                     "T12:34:56Z"));
      }
    }
  }
  for (const char* time : {"00:00:00", "23:59:59", "24:00:00", "23:60:00", "23:59:60", "23:59:61", "99:99:99",
                           "1a:00:00", "-1:00:00"}) {
    texts.push_back(absl::StrCat("2026-12-31T", time, "Z"));
  }
  for (const std::string& text : texts) {
    const absl::StatusOr<absl::Time> direct = base::ParseTime(text);
    const absl::StatusOr<absl::Time> by_absl = base::ParseTime(" " + text);
    ASSERT_EQ(direct.ok(), by_absl.ok()) << text << ": " << direct.status() << " / " << by_absl.status();
    if (direct.ok()) {
      EXPECT_EQ(*direct, *by_absl) << text;
    }
  }
}

TEST(TimeFormatTest, RoundTrips) {
  const std::vector<absl::Time> times = {
      absl::UnixEpoch(),
      Utc(2026, 11, 26, 7, 40, 0),
      Utc(2024, 2, 29, 23, 59, 59),
      Utc(1999, 12, 31, 23, 59, 59),
      Utc(2026, 11, 26, 7, 40, 0) + absl::Microseconds(123456),
  };
  for (absl::Time t : times) {
    const absl::Time whole = absl::FromUnixSeconds(absl::ToUnixSeconds(t));
    const absl::Time micro = absl::FromUnixMicros(absl::ToUnixMicros(t));
    EXPECT_EQ(base::ParseTime(base::FormatTime(t)).value(), whole) << t;
    EXPECT_EQ(base::ParseTime(base::FormatMicroTime(t)).value(), micro) << t;
    // Text -> time -> text is the identity for each form.
    EXPECT_EQ(base::FormatTime(base::ParseTime(base::FormatTime(t)).value()), base::FormatTime(t));
    EXPECT_EQ(base::FormatMicroTime(base::ParseTime(base::FormatMicroTime(t)).value()), base::FormatMicroTime(t));
  }
}

}  // namespace
}  // namespace cloneset::base
