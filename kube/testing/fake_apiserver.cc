#include "kube/testing/fake_apiserver.h"

#include <openssl/pem.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/json_read.h"
#include "common/label_selector.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace cloneset::kube::testing {

using json = nlohmann::json;

namespace {

struct Route {
  std::string resource;  // "/api/v1/pods" style key (namespace stripped)
  std::string ns;
  std::string name;
  bool ok = false;
};

// /api/v1[/namespaces/NS]/RES[/NAME]  or  /apis/G/V[/namespaces/NS]/RES[/NAME]
Route ParsePath(const std::string& path) {
  std::vector<std::string> seg = absl::StrSplit(path, '/', absl::SkipEmpty());
  Route r;
  size_t i = 0;
  std::string prefix;
  if (seg.size() >= 2 && seg[0] == "api") {
    prefix = "/api/" + seg[1];
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    prefix = "/apis/" + seg[1] + "/" + seg[2];
    i = 3;
  } else {
    return r;
  }
  if (seg.size() > i + 2 && seg[i] == "namespaces") {
    r.ns = seg[i + 1];
    i += 2;
  }
  if (i >= seg.size()) return r;
  r.resource = prefix + "/" + seg[i];
  if (i + 1 < seg.size()) r.name = seg[i + 1];
  r.ok = i + 2 >= seg.size();
  return r;
}

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()},
              {"status", "Failure"}, {"message", message}, {"reason", reason}, {"code", code}}
      .dump();
}

// The ?labelSelector= filter, as the real API server applies it; one that does not parse selects nothing.
bool LabelsMatch(const json& obj, const std::string& selector) {
  if (selector.empty()) return true;
  absl::StatusOr<common::LabelSelector> parsed = common::LabelSelector::Parse(selector);
  if (!parsed.ok()) return false;
  return parsed->Matches(base::json_read::StringMap(base::json_read::Member(base::json_read::Member(obj, "metadata"), "labels")));
}

}  // namespace

struct Event {
  std::string resource, ns, type;
  json object;
  int64_t rv;
};

struct Watcher {
  bool closed = false;
};

struct FakeApiServer::State {
  Options options;
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  int port = 0;

  mutable std::mutex mu;
  std::condition_variable cv;
  int64_t rv = 100;
  int64_t compacted_rv = 0;  // watches from rv < this get 410
  std::map<std::string, std::map<std::string, json>> store;  // resource -> "ns/name" -> object
  std::vector<Event> events;
  std::vector<Fault> faults;
  std::vector<std::string> requests;
  int64_t watch_generation = 0;
  int64_t bookmark_generation = 0;
  bool drop_watches = false;  // the current watch_generation ends by cutting the connection
  int open_watches = 0;
  int64_t uid_counter = 0;
  bool stopping = false;

  static std::string Key(const std::string& ns, const std::string& name) {
    return ns.empty() ? name : ns + "/" + name;
  }

  // Caller holds mu.
  int64_t Write(const std::string& resource, const std::string& type, json obj) {
    obj["metadata"]["resourceVersion"] = std::to_string(++rv);
    const std::string ns = obj["metadata"].value("namespace", "");
    const std::string name = obj["metadata"].value("name", "");
    if (type == "DELETED") {
      store[resource].erase(Key(ns, name));
    } else {
      store[resource][Key(ns, name)] = obj;
    }
    events.push_back(Event{resource, ns, type, obj, rv});
    cv.notify_all();
    return rv;
  }

  void Handle(const httplib::Request& req, httplib::Response& res);
  void HandleList(const Route& r, const httplib::Request& req, httplib::Response& res);
  void HandleWatch(const Route& r, const httplib::Request& req, httplib::Response& res);
};

FakeApiServer::FakeApiServer(Options options) : state_(std::make_shared<State>()) {
  state_->options = std::move(options);
}

FakeApiServer::~FakeApiServer() { Stop(); }

absl::Status FakeApiServer::Start() {
  State& s = *state_;
  if (s.options.tls) {
    if (s.options.pki == nullptr) return absl::InvalidArgumentError("tls needs a pki");
    BIO* cb = BIO_new_mem_buf(s.options.pki->server_cert_pem.data(), -1);
    BIO* kb = BIO_new_mem_buf(s.options.pki->server_key_pem.data(), -1);
    X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
    X509_STORE* client_ca = nullptr;
    if (s.options.require_client_cert) {
      BIO* ab = BIO_new_mem_buf(s.options.pki->ca_pem.data(), -1);
      X509* ca = PEM_read_bio_X509(ab, nullptr, nullptr, nullptr);
      client_ca = X509_STORE_new();
      X509_STORE_add_cert(client_ca, ca);
      X509_free(ca);
      BIO_free(ab);
    }
    s.server = std::make_unique<httplib::SSLServer>(cert, key, client_ca);
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(cb);
    BIO_free(kb);
  } else {
    s.server = std::make_unique<httplib::Server>();
  }
  if (!s.server->is_valid()) return absl::InternalError("fake apiserver: invalid server setup");
  s.server->new_task_queue = [] { return new httplib::ThreadPool(32); };
  State* st = state_.get();
  auto handler = [st](const httplib::Request& req, httplib::Response& res) { st->Handle(req, res); };
  s.server->Get(".*", handler);
  s.server->Post(".*", handler);
  s.server->Put(".*", handler);
  s.server->Patch(".*", handler);
  s.server->Delete(".*", handler);
  s.port = s.server->bind_to_any_port("127.0.0.1");
  if (s.port <= 0) return absl::InternalError("fake apiserver: bind failed");
  s.thread = std::thread([st] { st->server->listen_after_bind(); });
  return absl::OkStatus();
}

void FakeApiServer::Stop() {
  State& s = *state_;
  if (!s.server) return;
  {
    std::lock_guard l(s.mu);
    s.stopping = true;
    s.cv.notify_all();
  }
  s.server->stop();
  if (s.thread.joinable()) s.thread.join();
  s.server.reset();
}

std::string FakeApiServer::url() const {
  return absl::StrCat(state_->options.tls ? "https" : "http", "://127.0.0.1:", state_->port);
}

int64_t FakeApiServer::Upsert(const std::string& collection, const std::string& object_json) {
  Route r = ParsePath(collection);
  json obj = json::parse(object_json);
  std::lock_guard l(state_->mu);
  if (!r.ns.empty()) obj["metadata"]["namespace"] = r.ns;
  const std::string name = obj["metadata"].value("name", "");
  const bool exists = state_->store[r.resource].count(State::Key(r.ns, name)) > 0;
  if (!obj["metadata"].contains("uid")) obj["metadata"]["uid"] = absl::StrCat("uid-", ++state_->uid_counter);
  return state_->Write(r.resource, exists ? "MODIFIED" : "ADDED", obj);
}

void FakeApiServer::Remove(const std::string& collection, const std::string& name) {
  Route r = ParsePath(collection);
  std::lock_guard l(state_->mu);
  auto& objs = state_->store[r.resource];
  auto it = objs.find(State::Key(r.ns, name));
  if (it != objs.end()) state_->Write(r.resource, "DELETED", it->second);
}

std::string FakeApiServer::GetObject(const std::string& collection, const std::string& name) {
  Route r = ParsePath(collection);
  std::lock_guard l(state_->mu);
  auto& objs = state_->store[r.resource];
  auto it = objs.find(State::Key(r.ns, name));
  return it == objs.end() ? "" : it->second.dump();
}

void FakeApiServer::InjectFault(Fault fault) {
  std::lock_guard l(state_->mu);
  state_->faults.push_back(std::move(fault));
}

void FakeApiServer::ClearFaults() {
  std::lock_guard l(state_->mu);
  state_->faults.clear();
}

void FakeApiServer::set_token(const std::string& token) {
  std::lock_guard l(state_->mu);
  state_->options.token = token;
}

void FakeApiServer::Compact() {
  std::lock_guard l(state_->mu);
  state_->compacted_rv = state_->rv;  // watching from the current rv needs no history
  state_->events.clear();
}

void FakeApiServer::SendBookmarks() {
  std::lock_guard l(state_->mu);
  ++state_->bookmark_generation;
  state_->cv.notify_all();
}

void FakeApiServer::CloseWatches() {
  std::lock_guard l(state_->mu);
  ++state_->watch_generation;
  state_->drop_watches = false;
  state_->cv.notify_all();
}

void FakeApiServer::DropWatches() {
  std::lock_guard l(state_->mu);
  ++state_->watch_generation;
  state_->drop_watches = true;
  state_->cv.notify_all();
}

int64_t FakeApiServer::resource_version() const {
  std::lock_guard l(state_->mu);
  return state_->rv;
}

int FakeApiServer::open_watches() const {
  std::lock_guard l(state_->mu);
  return state_->open_watches;
}

std::vector<std::string> FakeApiServer::requests() const {
  std::lock_guard l(state_->mu);
  return state_->requests;
}

void FakeApiServer::clear_requests() {
  std::lock_guard l(state_->mu);
  state_->requests.clear();
}

void FakeApiServer::State::Handle(const httplib::Request& req, httplib::Response& res) {
  std::map<std::string, std::string> params(req.params.begin(), req.params.end());
  std::string query;
  for (auto& [k, v] : params) absl::StrAppend(&query, query.empty() ? "?" : "&", k, "=", v);
  {
    std::lock_guard l(mu);
    requests.push_back(absl::StrCat(req.method, " ", req.path, query));
    if (!options.token.empty() && req.get_header_value("Authorization") != "Bearer " + options.token) {
      res.status = 401;
      res.set_content(StatusBody(401, "Unauthorized", "Unauthorized"), "application/json");
      return;
    }
    for (auto it = faults.begin(); it != faults.end(); ++it) {
      if ((!it->method.empty() && it->method != req.method) || req.path.rfind(it->path_prefix, 0) != 0 ||
          (!it->query_contains.empty() && query.find(it->query_contains) == std::string::npos)) {
        continue;
      }
      res.status = it->status;
      if (!it->retry_after.empty()) res.set_header("Retry-After", it->retry_after);
      res.set_content(StatusBody(it->status, it->reason, "injected fault"), "application/json");
      if (--it->count <= 0) faults.erase(it);
      return;
    }
  }
  Route r = ParsePath(req.path);
  if (!r.ok) {
    res.status = 404;
    res.set_content(StatusBody(404, "NotFound", "the server could not find the requested resource"),
                    "application/json");
    return;
  }
  if (req.method == "GET" && r.name.empty()) {
    const std::string w = req.get_param_value("watch");
    if (w == "1" || w == "true") return HandleWatch(r, req, res);
    return HandleList(r, req, res);
  }
  json body;
  if (!req.body.empty()) {
    body = json::parse(req.body, nullptr, false);
    if (body.is_discarded()) {
      res.status = 400;
      res.set_content(StatusBody(400, "BadRequest", "invalid JSON body"), "application/json");
      return;
    }
  }
  std::lock_guard l(mu);
  auto& objs = store[r.resource];
  auto reply = [&](int code, const json& obj) {
    res.status = code;
    res.set_content(obj.dump(), "application/json");
  };
  auto fail = [&](int code, const std::string& reason, const std::string& msg) {
    res.status = code;
    res.set_content(StatusBody(code, reason, msg), "application/json");
  };
  const std::string plural = r.resource.substr(r.resource.rfind('/') + 1);
  if (req.method == "POST") {
    if (!body.is_object()) return fail(400, "BadRequest", "body must be an object");
    std::string name = body["metadata"].value("name", "");
    if (name.empty() && body["metadata"].contains("generateName")) {
      name = body["metadata"]["generateName"].get<std::string>() + std::to_string(++uid_counter);
      body["metadata"]["name"] = name;
    }
    if (name.empty()) return fail(422, "Invalid", "metadata.name: Required value");
    if (objs.count(Key(r.ns, name))) {
      return fail(409, "AlreadyExists", absl::StrCat(plural, " \"", name, "\" already exists"));
    }
    if (!r.ns.empty()) body["metadata"]["namespace"] = r.ns;
    body["metadata"]["uid"] = absl::StrCat("uid-", ++uid_counter);
    body["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z";
    Write(r.resource, "ADDED", body);
    return reply(201, store[r.resource][Key(r.ns, name)]);
  }
  auto it = objs.find(Key(r.ns, r.name));
  if (it == objs.end()) return fail(404, "NotFound", absl::StrCat(plural, " \"", r.name, "\" not found"));
  const std::string current_rv = it->second["metadata"]["resourceVersion"];
  const std::string conflict = absl::StrCat("Operation cannot be fulfilled on ", plural, " \"", r.name,
                                            "\": the object has been modified; please apply your "
                                            "changes to the latest version and try again");
  if (req.method == "GET") return reply(200, it->second);
  if (req.method == "DELETE") {
    json obj = it->second;
    Write(r.resource, "DELETED", obj);
    return reply(200, obj);
  }
  json updated;
  if (req.method == "PUT") {
    updated = body;
  } else {  // PATCH
    const std::string ct = req.get_header_value("Content-Type");
    try {
      if (ct == "application/json-patch+json") {
        updated = it->second.patch(body);
      } else {
        updated = it->second;
        updated.merge_patch(body);
      }
    } catch (const json::exception& e) {
      return fail(422, "Invalid", e.what());
    }
  }
  const std::string wanted_rv = updated["metadata"].value("resourceVersion", "");
  const bool precondition = req.method == "PUT" || (body.is_object() && body.contains("metadata") &&
                                                    body["metadata"].contains("resourceVersion"));
  if (precondition && !wanted_rv.empty() && wanted_rv != current_rv) return fail(409, "Conflict", conflict);
  updated["metadata"]["uid"] = it->second["metadata"]["uid"];
  if (!r.ns.empty()) updated["metadata"]["namespace"] = r.ns;
  Write(r.resource, "MODIFIED", updated);
  return reply(200, store[r.resource][Key(r.ns, r.name)]);
}

void FakeApiServer::State::HandleList(const Route& r, const httplib::Request& req, httplib::Response& res) {
  int limit = 0;
  (void)absl::SimpleAtoi(req.get_param_value("limit"), &limit);
  const std::string cont = req.get_param_value("continue");
  const std::string selector = req.get_param_value("labelSelector");
  std::lock_guard l(mu);
  json items = json::array();
  std::string next;
  for (auto& [key, obj] : store[r.resource]) {
    if (!r.ns.empty() && obj["metadata"].value("namespace", "") != r.ns) continue;
    if (!cont.empty() && key <= cont) continue;
    if (!LabelsMatch(obj, selector)) continue;
    if (limit > 0 && static_cast<int>(items.size()) == limit) {
      next = items.back()["metadata"].value("namespace", "").empty()
                 ? items.back()["metadata"]["name"].get<std::string>()
                 : items.back()["metadata"]["namespace"].get<std::string>() + "/" +
                       items.back()["metadata"]["name"].get<std::string>();
      break;
    }
    items.push_back(obj);
  }
  json list = {{"kind", "List"}, {"apiVersion", "v1"},
               {"metadata", {{"resourceVersion", std::to_string(rv)}}}, {"items", items}};
  if (!next.empty()) list["metadata"]["continue"] = next;
  res.set_content(list.dump(), "application/json");
}

void FakeApiServer::State::HandleWatch(const Route& r, const httplib::Request& req, httplib::Response& res) {
  int64_t from = 0;
  (void)absl::SimpleAtoi(req.get_param_value("resourceVersion"), &from);
  int timeout = 0;
  (void)absl::SimpleAtoi(req.get_param_value("timeoutSeconds"), &timeout);
  const bool bookmarks = req.get_param_value("allowWatchBookmarks") == "true";
  const std::string selector = req.get_param_value("labelSelector");
  struct Cursor {
    std::vector<std::string> pending;
    size_t next_event = 0;
    int64_t last_rv = 0;
    int64_t generation = 0;
    int64_t bookmark_generation = 0;
    bool done = false;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
  };
  auto cur = std::make_shared<Cursor>();
  {
    std::lock_guard l(mu);
    cur->generation = watch_generation;
    cur->bookmark_generation = bookmark_generation;
    cur->deadline = std::chrono::steady_clock::now() +
                    (timeout > 0 ? std::chrono::seconds(timeout) : std::chrono::hours(1));
    cur->last_rv = from;
    if (from > 0 && from < compacted_rv) {
      json err = {{"type", "ERROR"},
                  {"object", json::parse(StatusBody(410, "Expired", absl::StrCat("too old resource version: ", from,
                                                                                 " (", compacted_rv, ")")))}};
      cur->pending.push_back(err.dump() + "\n");
      cur->done = true;
    } else if (from == 0) {
      // rv "" or "0": synthetic ADDED events for the current state first.
      for (auto& [key, obj] : store[r.resource]) {
        if (!r.ns.empty() && obj["metadata"].value("namespace", "") != r.ns) continue;
        if (!LabelsMatch(obj, selector)) continue;
        cur->pending.push_back(json{{"type", "ADDED"}, {"object", obj}}.dump() + "\n");
      }
      cur->last_rv = rv;
      cur->next_event = events.size();
    }
    ++open_watches;
  }
  const std::string resource = r.resource, ns = r.ns;
  res.set_chunked_content_provider(
      "application/json",
      [this, cur, resource, ns, selector, bookmarks](size_t, httplib::DataSink& sink) {
        std::unique_lock l(mu);
        auto collect = [&] {
          for (; cur->next_event < events.size(); ++cur->next_event) {
            const Event& e = events[cur->next_event];
            if (e.rv <= cur->last_rv || e.resource != resource || (!ns.empty() && e.ns != ns)) continue;
            if (!LabelsMatch(e.object, selector)) continue;
            cur->pending.push_back(json{{"type", e.type}, {"object", e.object}}.dump() + "\n");
            cur->last_rv = e.rv;
          }
          if (bookmarks && cur->bookmark_generation != bookmark_generation) {
            cur->bookmark_generation = bookmark_generation;
            cur->pending.push_back(
                json{{"type", "BOOKMARK"},
                     {"object", {{"kind", "Bookmark"}, {"apiVersion", "v1"},
                                 {"metadata", {{"resourceVersion", std::to_string(rv)}}}}}}
                    .dump() +
                "\n");
          }
        };
        if (cur->pending.empty() && !cur->done) {
          collect();
          if (cur->pending.empty()) {
            cv.wait_for(l, std::chrono::milliseconds(50));
            collect();
          }
        }
        std::vector<std::string> out;
        out.swap(cur->pending);
        const bool dropped = cur->generation != watch_generation && drop_watches;
        const bool end = cur->done || stopping || cur->generation != watch_generation ||
                         std::chrono::steady_clock::now() >= cur->deadline;
        l.unlock();
        const auto now = std::chrono::steady_clock::now();
        // An idle newline now and then notices clients that went away.
        if (out.empty() && now - cur->last_write > std::chrono::milliseconds(500)) out.push_back("\n");
        if (!out.empty()) cur->last_write = now;
        for (auto& line : out) {
          if (!sink.write(line.data(), line.size())) return false;
        }
        if (dropped) return false;
        if (end) {
          sink.done();
          return true;
        }
        return sink.is_writable();
      },
      [this](bool) {
        std::lock_guard l(mu);
        --open_watches;
      });
}

}  // namespace cloneset::kube::testing
