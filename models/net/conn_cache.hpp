#pragma once
// The CPU cache's hold on loopback connections' state. Each send or recv touches its connection's
// socket state (struct sock and tcp_sock, their queues, the skbs, the epoll item) on both ends;
// with few connections that stays in the cache, with many the others evict it between two
// touches, and the call stalls on the misses. What is measured (uringsim calibrate, a rotation over
// n connections) is the cost per call against n: flat to about a hundred connections, then rising.
// The model: a touch after d distinct connections' touches (its LRU stack distance, itself
// included) pays tcp_cold_cycles x max(0, 1 - tcp_cache_connections / d), the share of a
// d-connection working set that a cache holding tcp_cache_connections of them cannot keep.
#include <cstdint>
#include <memory>

#include "sim/types.hpp"

namespace uringsim::models {

class ConnectionCache {
 public:
  ConnectionCache(sim::Cycles cold_cycles, double cache_connections);
  ~ConnectionCache();
  ConnectionCache(const ConnectionCache&) = delete;
  ConnectionCache& operator=(const ConnectionCache&) = delete;

  // A send or recv on conn: the extra cycles its misses cost. Never touched before counts as
  // touched before all the others (its state was set up at the start). With cold_cycles 0 it
  // records nothing (distance() then knows no touch), as the default cost table has it.
  sim::Cycles touch(int conn);

  // The LRU stack distance a touch of conn would have now: distinct connections touched since
  // conn's last touch, conn included (one more than all of them if it was never touched).
  std::uint64_t distance(int conn) const;

 private:
  struct Index;
  template <typename It>
  std::uint64_t distance_of(It by_conn_position) const;
  sim::Cycles cold_;
  double fits_;
  std::uint64_t clock_ = 0;
  std::unique_ptr<Index> index_;
};

}  // namespace uringsim::models
