// The bare engine's speed, for bench/bench.sh: two SimGrid actors hand a token back and forth,
// each doing a 100 ns delay before it releases the other's semaphore and waits on its own — the
// activities a uringsim thread's interaction costs (a delay, a blocking wait), with nothing else.
// Prints events (activities started) per wall-second.
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace sg = simgrid::s4u;

int main(int argc, char** argv) {
  const long rounds = argc > 1 ? std::atol(argv[1]) : 1000000;
  std::vector<std::string> args = {"pingpong", "--cfg=surf/precision:1e-12", "--cfg=network/model:Constant",
                                   "--cfg=cpu/optim:TI", "--log=root.thres:critical"};
  std::vector<char*> av;
  for (auto& a : args) av.push_back(a.data());
  int ac = static_cast<int>(av.size());
  sg::Engine e(&ac, av.data());
  auto* zone = sg::create_full_zone("zone");
  sg::Host* h0 = zone->create_host("cpu0", 1e9)->seal();
  sg::Host* h1 = zone->create_host("cpu1", 1e9)->seal();
  zone->seal();
  sg::SemaphorePtr sem[2] = {sg::Semaphore::create(0), sg::Semaphore::create(0)};
  long events = 0;
  auto player = [&](int me, bool serves) {
    for (long i = 0; i < rounds; ++i) {
      if (!serves || i > 0) {
        sem[me]->acquire();
        ++events;
      }
      sg::this_actor::sleep_for(100e-9);
      ++events;
      sem[1 - me]->release();
    }
  };
  sg::Actor::create("a", h0, [&] { player(0, true); });
  sg::Actor::create("b", h1, [&] { player(1, false); });
  const auto t0 = std::chrono::steady_clock::now();
  e.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%ld %.3f %.0f\n", events, wall, events / wall);
  return 0;
}
