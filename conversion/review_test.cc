#include "conversion/review.h"

#include <string>

#include "conversion/cloneset.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"

namespace cloneset::conversion {
namespace {

using Json = nlohmann::json;
using ::cloneset::kruise::kV1alpha1;
using ::cloneset::kruise::kV1beta1;
using ::testing::HasSubstr;

Json Review(Json objects, std::string desired = kV1beta1, std::string api = "apiextensions.k8s.io/v1") {
  return Json{{"apiVersion", api},
              {"kind", "ConversionReview"},
              {"request", {{"uid", "u-1"}, {"desiredAPIVersion", desired}, {"objects", objects}}}};
}

Json CloneSet(std::string name, std::string type) {
  return Json{{"apiVersion", kV1alpha1},
              {"kind", "CloneSet"},
              {"metadata", {{"name", name}, {"namespace", "ns"}}},
              {"spec", {{"scaleStrategy", Json::object()}, {"updateStrategy", {{"type", type}}}}}};
}

TEST(ConversionReview, ConvertsEveryObjectAndEchoesTheUid) {
  const Json in = Review({CloneSet("a", "ReCreate"), CloneSet("b", "InPlaceOnly")});
  const ReviewOutcome out = HandleConversionReview(in.dump());
  EXPECT_EQ(out.http_status, 200);
  EXPECT_TRUE(out.success) << out.message;
  EXPECT_EQ(out.objects, 2);
  const Json body = Json::parse(out.body);
  EXPECT_EQ(body["apiVersion"], "apiextensions.k8s.io/v1");
  EXPECT_EQ(body["kind"], "ConversionReview");
  EXPECT_EQ(body["response"]["uid"], "u-1");
  EXPECT_EQ(body["response"]["result"]["status"], "Success");
  ASSERT_EQ(body["response"]["convertedObjects"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(body["response"]["convertedObjects"][i], *ConvertCloneSet(in["request"]["objects"][i], kV1beta1));
  }
}

TEST(ConversionReview, AnswersAV1beta1ReviewInKind) {
  const ReviewOutcome out = HandleConversionReview(Review(Json::array(), kV1alpha1, "apiextensions.k8s.io/v1beta1").dump());
  EXPECT_TRUE(out.success);
  EXPECT_EQ(Json::parse(out.body)["apiVersion"], "apiextensions.k8s.io/v1beta1");
  EXPECT_EQ(Json::parse(out.body)["response"]["convertedObjects"], Json::array());
}

TEST(ConversionReview, OneBadObjectFailsTheReviewNamingItAndTheField) {
  Json bad = CloneSet("b", "ReCreate");
  bad["spec"]["updateStrategy"]["type"] = 7;
  const ReviewOutcome out = HandleConversionReview(Review({CloneSet("a", "ReCreate"), bad}).dump());
  EXPECT_EQ(out.http_status, 200);
  EXPECT_FALSE(out.success);
  EXPECT_EQ(out.message,
            "converting request.objects[1] (ns/b) to apps.kruise.io/v1beta1: spec.updateStrategy.type: must be a "
            "string, got number");
  const Json body = Json::parse(out.body);
  EXPECT_EQ(body["response"]["uid"], "u-1");
  EXPECT_EQ(body["response"]["result"]["status"], "Failure");
  EXPECT_EQ(body["response"]["result"]["message"], out.message);
  EXPECT_FALSE(body["response"].contains("convertedObjects"));
}

struct Bad {
  std::string name;
  std::string body;
  int status;
  std::string message;
};

class BadReviewTest : public ::testing::TestWithParam<Bad> {};

TEST_P(BadReviewTest, FailsNamingWhat) {
  const ReviewOutcome out = HandleConversionReview(GetParam().body);
  EXPECT_FALSE(out.success);
  EXPECT_EQ(out.http_status, GetParam().status);
  EXPECT_THAT(out.message, HasSubstr(GetParam().message));
  const Json body = Json::parse(out.body);  // always a ConversionReview, never a crash or an empty answer
  EXPECT_EQ(body["kind"], "ConversionReview");
  EXPECT_EQ(body["response"]["result"]["status"], "Failure");
}

INSTANTIATE_TEST_SUITE_P(
    Inputs, BadReviewTest,
    ::testing::Values(Bad{"empty", "", 400, "the body is not JSON"}, Bad{"garbage", "{\"a\":", 400, "not JSON"},
                      Bad{"array", "[]", 400, "not a JSON object"},
                      Bad{"kind", R"({"kind":"AdmissionReview","request":{"uid":"x"}})", 400, "kind: \"AdmissionReview\""},
                      Bad{"api", R"({"apiVersion":"v1","kind":"ConversionReview"})", 400, "apiVersion: \"v1\""},
                      Bad{"no_request", R"({"kind":"ConversionReview"})", 400, "request: must be an object"},
                      Bad{"no_uid", R"({"kind":"ConversionReview","request":{"objects":[]}})", 400, "request.uid"},
                      Bad{"no_desired", R"({"kind":"ConversionReview","request":{"uid":"x","objects":[]}})", 200,
                          "request.desiredAPIVersion: must be a string"},
                      Bad{"bad_desired",
                          R"({"kind":"ConversionReview","request":{"uid":"x","desiredAPIVersion":"v9","objects":[{}]}})",
                          200, "desiredAPIVersion: \"v9\""},
                      Bad{"no_objects",
                          R"({"kind":"ConversionReview","request":{"uid":"x","desiredAPIVersion":"apps.kruise.io/v1beta1"}})",
                          200, "request.objects: must be an array"},
                      Bad{"object_not_cloneset",
                          R"({"kind":"ConversionReview","request":{"uid":"x","desiredAPIVersion":"apps.kruise.io/v1beta1","objects":[3]}})",
                          200, "request.objects[0] to apps.kruise.io/v1beta1: must be an object"}),
    [](const ::testing::TestParamInfo<Bad>& i) { return i.param.name; });

}  // namespace
}  // namespace cloneset::conversion
