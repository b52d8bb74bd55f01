// The CRD conversion webhook's protocol: an apiextensions.k8s.io ConversionReview in (request.uid,
// request.desiredAPIVersion, request.objects), the same kind out (response.uid, response.convertedObjects,
// response.result.status "Success" or "Failure" with a message); v1 and v1beta1 reviews have the same shape. Pure: the
// HTTP server around it is the planner's (planner/service/conversion_server.h).
#pragma once

#include <string>
#include <string_view>

namespace cloneset::conversion {

struct ReviewOutcome {
  // 200 for every review that could be read, whatever its result (the API server reads failures from the body);
  // 400 when the body is not a ConversionReview at all.
  int http_status = 200;
  std::string body;  // the response ConversionReview (or, for 400, a ConversionReview with only a failed result)
  bool success = false;
  std::string message;  // why it failed: the object's index and name, and the field ("objects[1] (ns/web): spec...")
  int objects = 0;      // objects converted (0 on failure)
  std::string desired_api_version;
};

// Converts every object of the review's request to request.desiredAPIVersion with ConvertCloneSet. One object that
// cannot be converted fails the whole review (as the API server requires: all or nothing), naming it and the field.
ReviewOutcome HandleConversionReview(std::string_view body);

}  // namespace cloneset::conversion
