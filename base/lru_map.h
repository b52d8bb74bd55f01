// A map bounded by entry count that forgets the least recently used entry first, as client-go's event
// correlator's LRU caches do (k8s.io/utils/lru). Not thread-safe: the owner holds its own lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <list>
#include <map>
#include <utility>

namespace cloneset::base {

template <typename Key, typename Value>
class LruMap {
 public:
  // A capacity below 1 is taken as 1: the entry just inserted is always kept.
  explicit LruMap(size_t capacity) : capacity_(std::max<size_t>(1, capacity)) {}

  // The value under `key`, made the most recent; nullptr when absent.
  Value* Find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  // Sets `key` to `value` as the most recent entry (replacing an entry of that key), then forgets the least
  // recent entries beyond the capacity.
  Value& Insert(const Key& key, Value value) {
    Erase(key);
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }

  void Erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return;
    order_.erase(it->second);
    index_.erase(it);
  }

  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  using Entry = std::pair<Key, Value>;
  size_t capacity_;
  std::list<Entry> order_;  // front = most recent
  std::map<Key, typename std::list<Entry>::iterator> index_;
};

}  // namespace cloneset::base
