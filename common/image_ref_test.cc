#include "common/image_ref.h"

#include "gtest/gtest.h"

namespace cloneset::common {
namespace {

TEST(NormalizeImageTest, Table) {
  struct Case {
    std::string in, want;
  };
  for (const Case& c : std::vector<Case>{
           {"nginx", "docker.io/library/nginx:latest"},
           {"nginx:1.25", "docker.io/library/nginx:1.25"},
           {"user/app", "docker.io/user/app:latest"},
           {"bitnami/redis", "docker.io/bitnami/redis:latest"},
           {"docker.io/nginx", "docker.io/library/nginx:latest"},
           {"index.docker.io/library/nginx:1", "docker.io/library/nginx:1"},
           {"reg.io/a/b:1", "reg.io/a/b:1"},
           {"registry:5000/app", "registry:5000/app:latest"},
           {"registry:5000/app:2", "registry:5000/app:2"},
           {"127.0.0.1:5000/test/app:v1", "127.0.0.1:5000/test/app:v1"},
           {"quay.io:443/x/y", "quay.io:443/x/y:latest"},
           {"localhost:5000/x", "localhost:5000/x:latest"},
           {"localhost/app", "localhost/app:latest"},
           {"nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"},
           {"nginx:1.25@sha256:abc", "docker.io/library/nginx:1.25@sha256:abc"},
           {"registry.k8s.io/pause@sha256:abc", "registry.k8s.io/pause@sha256:abc"},
           {"", ""},
       }) {
    EXPECT_EQ(NormalizeImage(c.in), c.want) << c.in;
  }
}

TEST(ImageRegistryTest, Table) {
  struct Case {
    std::string in, want;
  };
  for (const Case& c : std::vector<Case>{
           {"nginx", "docker.io"},
           {"nginx:1.25", "docker.io"},
           {"library/nginx:1.25", "docker.io"},
           {"user/app:1", "docker.io"},
           {"index.docker.io/library/nginx", "docker.io"},
           {"registry:5000/app", "registry:5000"},
           {"127.0.0.1:5000/test/app:v1", "127.0.0.1:5000"},
           {"registry.example.com/a/b@sha256:00", "registry.example.com"},
           {"reg.io/a/b", "reg.io"},
           {"localhost/app", "localhost"},
       }) {
    EXPECT_EQ(ImageRegistry(c.in), c.want) << c.in;
  }
}

TEST(SameImageTest, SpellingsOfOneReference) {
  EXPECT_TRUE(SameImage("nginx", "docker.io/library/nginx:latest"));
  EXPECT_TRUE(SameImage("registry:5000/app", "registry:5000/app:latest"));
  EXPECT_FALSE(SameImage("nginx:1.25", "nginx:1.26"));
  EXPECT_FALSE(SameImage("registry:5000/app", "registry:5001/app"));
}

}  // namespace
}  // namespace cloneset::common
