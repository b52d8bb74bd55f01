#ifndef CLONESET_KUBE_WATCH_STREAM_H_
#define CLONESET_KUBE_WATCH_STREAM_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cloneset::kube {

// Splits a byte stream of concatenated JSON objects (a watch body) into
// whole objects. Chunk boundaries and newlines don't matter (a watch body is
// one JSON event after another); each byte is scanned once, keeping string/escape state across Feed()
// calls. An object that lies whole inside one Feed() is handed out as a view into that call's data (no copy:
// the usual case, a watch event per read); only an object split across reads is assembled in a buffer. Holds at
// most one incomplete object.
class JsonObjectSplitter {
 public:
  // Calls `on_object` for every complete top-level object; stops early (and
  // returns false) when it returns false. Bytes outside objects are skipped.
  bool Feed(std::string_view data, const std::function<bool(std::string_view)>& on_object);
  size_t buffered() const { return buf_.size() + rest_.size(); }

 private:
  // Scans data[from, end) with the state below; returns the index just after the '}' that closes the top-level
  // object, or npos when the data ends first. `*start` is set to the index of a top-level '{' opened here.
  size_t Scan(std::string_view data, size_t from, size_t* start);

  std::string buf_;   // the unfinished object, from its '{'; all of it scanned
  std::string rest_;  // bytes after the object at which on_object stopped, not scanned yet
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
};

struct ObjectMeta {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string Key() const { return namespace_.empty() ? name : namespace_ + "/" + name; }
};

struct WatchEvent {
  std::string type;         // ADDED MODIFIED DELETED BOOKMARK ERROR
  std::string object_json;  // the raw "object"
  ObjectMeta meta;          // of the object (BOOKMARK: only resource_version)
  absl::Status error;       // for ERROR events: the Status it carried
};

// Reads one watch event with simdjson On-Demand, touching only type,
// metadata and (for ERROR) the Status fields.
absl::StatusOr<WatchEvent> ParseWatchEvent(std::string_view event_json);
absl::StatusOr<ObjectMeta> ReadObjectMeta(std::string_view object_json);

// One page of a LIST answer. `items` view into the page's own buffer.
struct ListPage {
  std::string resource_version;
  std::string continue_token;
  std::vector<std::string_view> items;
  std::shared_ptr<const void> storage;  // keeps `items` alive
};
absl::StatusOr<ListPage> ParseListPage(std::string body);

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_WATCH_STREAM_H_
