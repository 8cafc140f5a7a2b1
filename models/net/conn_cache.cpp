#include "models/net/conn_cache.hpp"

#include <algorithm>

#include <boost/multi_index/hashed_index.hpp>
#include <boost/multi_index/member.hpp>
#include <boost/multi_index/ranked_index.hpp>
#include <boost/multi_index_container.hpp>

namespace uringsim::models {
namespace mi = boost::multi_index;

namespace {
struct Touch {
  int conn;
  std::uint64_t stamp;  // when it was last touched; later touches have larger stamps
};
}  // namespace

// Each touched connection once, found by connection and ranked by the time of its last touch:
// the connections touched since conn's last touch are those ranked above it, in O(log n).
struct ConnectionCache::Index {
  mi::multi_index_container<
      Touch, mi::indexed_by<mi::hashed_unique<mi::member<Touch, int, &Touch::conn>>,
                            mi::ranked_unique<mi::member<Touch, std::uint64_t, &Touch::stamp>>>>
      set;
};

ConnectionCache::ConnectionCache(sim::Cycles cold_cycles, double cache_connections)
    : cold_(cold_cycles), fits_(cache_connections), index_(std::make_unique<Index>()) {}

ConnectionCache::~ConnectionCache() = default;

std::uint64_t ConnectionCache::distance(int conn) const {
  const auto& by_conn = index_->set.get<0>();
  return distance_of(by_conn.find(conn));
}

template <typename It>
std::uint64_t ConnectionCache::distance_of(It it) const {
  const std::uint64_t n = index_->set.size();
  if (it == index_->set.template get<0>().end()) return n + 1;
  return n - index_->set.template get<1>().rank(
                 index_->set.template project<1>(it));  // those after it, and itself
}

sim::Cycles ConnectionCache::touch(int conn) {
  if (cold_ == 0) return 0;  // nothing to pay at any distance: skip the O(log n) bookkeeping
  auto& by_conn = index_->set.get<0>();
  const auto it = by_conn.find(conn);  // one lookup for the distance and the update
  const double d = static_cast<double>(distance_of(it));
  const std::uint64_t now = ++clock_;
  if (it == by_conn.end())
    index_->set.insert({conn, now});
  else
    by_conn.modify(it, [now](Touch& t) { t.stamp = now; });
  return cold_ * std::max(0.0, 1.0 - fits_ / d);
}

}  // namespace uringsim::models
