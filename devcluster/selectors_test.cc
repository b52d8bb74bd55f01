#include "devcluster/selectors.h"

#include <gtest/gtest.h>

namespace cloneset::devcluster {
namespace {

struct LabelCase {
  std::string selector;
  KeyValues labels;
  bool match;
};

TEST(SelectorTest, LabelOperators) {
  const KeyValues app{{"app", "web"}, {"tier", "fe"}};
  const std::vector<LabelCase> cases = {
      {"", app, true},
      {"app=web", app, true},
      {"app==web", app, true},
      {"app=db", app, false},
      {"app!=db", app, true},
      {"app!=web", app, false},
      {"missing!=x", app, true},
      {"app in (db, web)", app, true},
      {"app in (db)", app, false},
      {"app notin (db)", app, true},
      {"app notin (web,db)", app, false},
      {"missing notin (web)", app, true},
      {"tier", app, true},
      {"missing", app, false},
      {"!missing", app, true},
      {"!tier", app, false},
      {"app=web,tier=fe", app, true},
      {"app=web,tier=be", app, false},
      {"apps.kruise.io/cloneset-instance-id", {{"apps.kruise.io/cloneset-instance-id", "abc"}}, true},
  };
  for (const auto& c : cases) {
    auto s = Selector::ParseLabels(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector << ": " << s.status();
    EXPECT_EQ(s->Matches(c.labels), c.match) << c.selector;
  }
}

TEST(SelectorTest, LabelParseErrors) {
  for (const char* bad : {"app in (a", "app=(x", "a b in (x)", "=x", "app=web,", "bad key=x"}) {
    EXPECT_FALSE(Selector::ParseLabels(bad).ok()) << bad;
  }
}

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
    auto s = Selector::ParseFields(c.selector);
    ASSERT_TRUE(s.ok()) << c.selector;
    EXPECT_EQ(s->Matches(fields), c.match) << c.selector;
  }
  EXPECT_FALSE(Selector::ParseFields("novalue").ok());
}

}  // namespace
}  // namespace cloneset::devcluster
