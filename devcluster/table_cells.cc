#include "devcluster/table_cells.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "devcluster/object_meta.h"

namespace cloneset::devcluster {

using nlohmann::json;

std::string HumanDuration(std::chrono::seconds d) {
  int64_t s = d.count();
  if (s < -1) return "<invalid>";
  if (s < 0) s = 0;
  if (s < 120) return absl::StrCat(s, "s");
  int64_t m = s / 60;
  if (m < 10) return s % 60 == 0 ? absl::StrCat(m, "m") : absl::StrCat(m, "m", s % 60, "s");
  if (m < 180) return absl::StrCat(m, "m");
  int64_t h = s / 3600;
  if (h < 8) return m % 60 == 0 ? absl::StrCat(h, "h") : absl::StrCat(h, "h", m % 60, "m");
  if (h < 48) return absl::StrCat(h, "h");
  if (h < 192) return h % 24 == 0 ? absl::StrCat(h / 24, "d") : absl::StrCat(h / 24, "d", h % 24, "h");
  if (h < 24 * 365 * 2) return absl::StrCat(h / 24, "d");
  if (h < 24 * 365 * 8) {
    int64_t dy = (h / 24) % 365;
    return dy == 0 ? absl::StrCat(h / 24 / 365, "y") : absl::StrCat(h / 24 / 365, "y", dy, "d");
  }
  return absl::StrCat(h / 24 / 365, "y");
}

namespace table_cells {

json Col(const std::string& name, const std::string& type, int priority, const std::string& format) {
  return {{"name", name}, {"type", type}, {"format", format}, {"description", ""}, {"priority", priority}};
}

std::string Str(const json& o, const std::string& path) {
  const json* v = LookupPath(o, path);
  if (!v || v->is_null()) return "";
  return v->is_string() ? v->get<std::string>() : v->dump();
}

std::string Age(const json& o, std::chrono::system_clock::time_point now, const std::string& path) {
  absl::StatusOr<absl::Time> t = base::ParseTime(Str(o, path));
  if (!t.ok()) return "<unknown>";
  return HumanDuration(std::chrono::duration_cast<std::chrono::seconds>(now - absl::ToChronoTime(*t)));
}

std::string OrNone(const std::string& s) { return s.empty() ? "<none>" : s; }

}  // namespace table_cells
}  // namespace cloneset::devcluster
