#include "devcluster/selectors.h"

#include <gtest/gtest.h>

namespace cloneset::devcluster {
namespace {

TEST(SelectorTest, FieldSelectors) {
  const KeyValues fields{{"involvedObject.name", "vt"}, {"involvedObject.kind", "CloneSet"}, {"spec.nodeName", ""}};
  struct Case {
    std::string selector;
    bool match;
  };
  for (const auto& c : std::vector<Case>{{"involvedObject.name=vt", true},
                                        {"involvedObject.kind==CloneSet,involvedObject.name=vt", true},
                                        {"involvedObject.kind!=CloneSet", false},
                                        {"spec.nodeName=", true},
                                        {"spec.nodeName!=", false}}) {
    auto s = FieldSelector::ParseFields(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector;
    EXPECT_EQ(s->Matches(fields), c.match) << c.selector;
  }
  EXPECT_FALSE(FieldSelector::ParseFields("novalue").ok());
}

}  // namespace
}  // namespace cloneset::devcluster
