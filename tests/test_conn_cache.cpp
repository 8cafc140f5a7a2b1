// The CPU cache's hold on connections' state (models/net/conn_cache.hpp): a touch's extra cost
// follows its LRU stack distance, computed exactly.
#include <catch2/catch.hpp>

#include "models/net/conn_cache.hpp"

using uringsim::models::ConnectionCache;

TEST_CASE("conn cache: a rotation over n connections costs cold x max(0, 1 - K/n) per touch") {
  for (const int n : {1, 50, 100, 200, 400}) {
    INFO("n = " << n);
    ConnectionCache cache(1000, 100);
    for (int c = 0; c < n; ++c) cache.touch(c);  // the first rotation sets the order up
    for (int round = 0; round < 3; ++round)
      for (int c = 0; c < n; ++c) {
        CHECK(cache.distance(c) == static_cast<std::uint64_t>(n));
        CHECK(cache.touch(c) == Approx(1000 * std::max(0.0, 1.0 - 100.0 / n)));
      }
  }
}

TEST_CASE("conn cache: the distance counts distinct connections, so repeats in between do not add up") {
  ConnectionCache cache(1000, 2);
  cache.touch(7);
  for (int k = 0; k < 50; ++k) cache.touch(3);  // one other connection, touched 50 times
  CHECK(cache.distance(7) == 2);                // 3, and 7 itself
  CHECK(cache.touch(7) == Approx(0));           // 2 connections fit
  CHECK(cache.touch(7) == Approx(0));           // touched again at once: distance 1
  CHECK(cache.distance(7) == 1);
  for (int c = 10; c < 14; ++c) cache.touch(c);
  CHECK(cache.distance(7) == 5);
  CHECK(cache.distance(3) == 6);
  CHECK(cache.touch(3) == Approx(1000 * (1 - 2.0 / 6)));
  // Never touched: as if touched before all of the 6 that were.
  CHECK(cache.distance(99) == 7);
}
