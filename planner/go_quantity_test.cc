#include "planner/go_quantity.h"

#include <string>

#include "gtest/gtest.h"

namespace cloneset::planner {
namespace {

struct Case {
  const char* in;
  const char* want;
};

// k8s.io/apimachinery v0.30.10 resource/quantity_test.go TestQuantityParseEmit (and its negated half).
TEST(CanonicalQuantity, ApimachineryParseEmit) {
  const Case cases[] = {
      {"1Ki", "1Ki"},     {"1Mi", "1Mi"},         {"1Gi", "1Gi"},           {"1024Mi", "1Gi"},
      {"1000M", "1G"},    {".001Ki", "1024m"},    {".000001Ki", "1024u"},   {".000000001Ki", "1024n"},
      {".000000000001Ki", "2n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(CanonicalQuantity(c.in).value_or("error"), c.want) << c.in;
    EXPECT_EQ(CanonicalQuantity(std::string("-") + c.in).value_or("error"), std::string("-") + c.want) << c.in;
  }
}

// TestJSONWhitespace: UnmarshalJSON trims the raw text (the caller trims; these are the raw texts trimmed).
TEST(CanonicalQuantity, ApimachineryJsonWhitespace) {
  const Case cases[] = {{"1", "1"}, {"10", "10"}, {"-1", "-1"}};
  for (const Case& c : cases) EXPECT_EQ(CanonicalQuantity(c.in).value_or("error"), c.want) << c.in;
}

// TestQuantityParse's invalid list, plus other texts ParseQuantity rejects.
TEST(CanonicalQuantity, ApimachineryInvalid) {
  for (const char* in : {"1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 ",
                         "", "1K", "1e", "1Mi3", ".e-12", "1e99999999999999999999"}) {
    EXPECT_FALSE(CanonicalQuantity(in).ok()) << '"' << in << '"';
  }
}

// What kruise-manager v1.8.0 wrote for these in revision data (tests/kruise_revision case 02-resources, run
// through upstream's code): the canonical forms, the inputs it keeps as written, and its quirks.
TEST(CanonicalQuantity, UpstreamForms) {
  const Case cases[] = {
      {"1000m", "1"},                  // canonical
      {"0.5", "500m"},
      {"1024Mi", "1Gi"},
      {"2048Ki", "2Mi"},
      {"1.5Gi", "1536Mi"},
      {"1.000", "1"},
      {"100000", "100k"},
      {"1e21", "1e21"},                // DecimalExponent, kept
      {"1e+21", "1e+21"},
      {"1e5", "100e3"},
      {"10e-3", "10e-3"},
      {"1e-12", "1e-9"},               // below 1n: rounded up
      {"0.0000000001", "1n"},
      {"+1", "+1"},                    // kept as written
      {"1E3", "1E3"},
      {"0100", "0100"},
      {"1025Mi", "1025Mi"},
      {"0.5Ki", "512"},                // BinarySI below 1024 is written in DecimalSI
      {"1.5Ki", "1536"},
      {"8Ei", "9223372036854775807"},  // BinarySI capped at 2^63-1
      {"16Ei", "9223372036854775807"},
      {"1000E", "1"},                  // 10^21 has no SI suffix: upstream writes none
      {"100000000000000000000000", "100"},
      {"12345678901234567890", "12345678901234567890"},
      {"0", "0"},
      {"-0", "0"},
      {"00", "0"},
      {"0.0", "0"},
      {"0Gi", "0"},
      {"-1.5", "-1500m"},
  };
  for (const Case& c : cases) EXPECT_EQ(CanonicalQuantity(c.in).value_or("error"), c.want) << c.in;
}

}  // namespace
}  // namespace cloneset::planner
