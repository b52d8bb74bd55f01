// --crd_dir: CustomResourceDefinitions the embedded cluster serves from its start, read from a directory of
// manifests (the chart's crds/). A container image of the cluster has no kubectl beside it, so the CRDs are applied
// through the REST layer before the server listens: a client that connects finds them already served.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "devcluster/api_server.h"

namespace cloneset::devcluster {

// Applies every *.yaml / *.yml file of dir (in name order; one CustomResourceDefinition each) as server-side apply
// with field manager "cloneset-devcluster", so a CRD kept in --data-dir from an earlier start is updated to the file.
// token is the cluster's bearer token (empty: none). Returns the names applied; an error names the file and why.
absl::StatusOr<std::vector<std::string>> ApplyCrdDir(ApiServer& api, const std::string& token, const std::string& dir);

}  // namespace cloneset::devcluster
