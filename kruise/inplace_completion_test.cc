#include "kruise/inplace_completion.h"

#include "gtest/gtest.h"

namespace cloneset::kruise {
namespace {

TEST(ContainerUpdateProgressTest, Table) {
  struct Case {
    std::string name;
    std::string spec_image, image, image_id, container_id;
    bool env_from_metadata;
    ContainerUpdate want;
  };
  // Recorded when the batch started: imageID "id-old", containerID "cid-old".
  for (const Case& c : std::vector<Case>{
           {"not restarted yet", "nginx:1.26", "nginx:1.25", "id-old", "cid-old", false, ContainerUpdate::kOldImage},
           {"image id changed", "nginx:1.26", "nginx:1.26", "id-new", "cid-new", false, ContainerUpdate::kDone},
           {"same image id, restarted", "nginx:1.26", "nginx:1.25", "id-old", "cid-new", false, ContainerUpdate::kDone},
           {"same image id, same reference spelled differently", "nginx:1.26", "docker.io/library/nginx:1.26", "id-old",
            "cid-old", false, ContainerUpdate::kDone},
           {"registry port is not a tag", "registry:5000/app", "registry:5000/app:latest", "id-old", "cid-old", false,
            ContainerUpdate::kDone},
           {"env from metadata, not restarted", "nginx:1.25", "nginx:1.25", "id-old", "cid-old", true,
            ContainerUpdate::kAwaitingRestart},
           {"env from metadata, restarted", "nginx:1.25", "nginx:1.25", "id-old", "cid-new", true, ContainerUpdate::kDone},
       }) {
    SCOPED_TRACE(c.name);
    const ObservedContainer now{true, c.image, c.image_id, c.container_id, true, c.spec_image};
    EXPECT_EQ(ContainerUpdateProgress({"id-old", "cid-old"}, now, c.env_from_metadata), c.want);
  }
}

TEST(ContainerUpdateProgressTest, MissingStatusOrSpec) {
  EXPECT_EQ(ContainerUpdateProgress({"id-old", ""}, ObservedContainer{}, false), ContainerUpdate::kNoStatus);
  ObservedContainer no_spec{true, "nginx:1.26", "id-old", "", false, ""};
  EXPECT_EQ(ContainerUpdateProgress({"id-old", ""}, no_spec, false), ContainerUpdate::kOldImage);
}

TEST(ContainerUpdateProgressTest, WithoutRecordedContainerIdOnlyTheImageCounts) {
  // Upstream's writers record no containerID: a new one then proves nothing, the image decides.
  ObservedContainer now{true, "nginx:1.25", "id-old", "cid-new", true, "nginx:1.26"};
  EXPECT_EQ(ContainerUpdateProgress({"id-old", ""}, now, false), ContainerUpdate::kOldImage);
  EXPECT_EQ(ContainerUpdateProgress({"id-old", ""}, now, true), ContainerUpdate::kOldImage);
}

}  // namespace
}  // namespace cloneset::kruise
