// Uncontended lock/unlock pairs and a cache line moving between two CPUs.
#include <pthread.h>

#include <fmt/format.h>

#include "host/calibrate_bench.hpp"
#include "host/calibrate_fit.hpp"

namespace uringsim::host::calib {
namespace {

// One-way transfer of a cache line: two threads take turns incrementing a counter, each waiting
// (by reading it) for the other's write, so every step is one line moving to the other CPU. The
// median over chunks of kChunk steps, so a chunk in which a CPU was taken away is an outlier.
double bounce_one_way_ns(const Bench& b, int steps) {
  constexpr std::uint64_t kChunk = 200;  // steps per timed chunk; player 0 reads the clock once per chunk
  struct alignas(64) Line {
    std::atomic<std::uint64_t> v{0};
  } line;
  std::atomic<bool> failed{false};
  auto player = [&](std::uint64_t parity, auto&& clock) {
    for (std::uint64_t i = parity; i < static_cast<std::uint64_t>(steps); i += 2) {
      if (i % kChunk == 0) clock(now_ns());
      if (!spin_until(
              b, [&] { return line.v.load(std::memory_order_acquire) == i || failed.load(); }, 1e9) ||
          failed.load()) {
        failed.store(true);
        return;
      }
      line.v.store(i + 1, std::memory_order_release);
    }
  };
  std::vector<double> chunks;
  {
    Joined other([&] {
      try {
        pin_to_cpu(b.cpu_b);
      } catch (const std::exception&) {
        failed.store(true);
        return;
      }
      player(1, [](double) {});
    });
    player(0, [&](double t) { chunks.push_back(t); });
  }
  if (failed.load() || chunks.size() < 2)
    b.fail("cache-line bounce: the other CPU did not answer within a second");
  std::vector<double> per_step;
  for (std::size_t i = 1; i < chunks.size(); ++i) per_step.push_back((chunks[i] - chunks[i - 1]) / kChunk);
  return median(per_step);
}

}  // namespace

void measure_locks(const Bench& b, Measurements& m) {
  run_pinned(b, b.cpu_a, [&] {
    pthread_spinlock_t spin;
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    for (int r = 0; r < b.rounds(100) && !b.stopping(); ++r) {
      m.spin_pair.push_back(per_call_ns(50, 1000, [&] {
        pthread_spin_lock(&spin);
        pthread_spin_unlock(&spin);
      }));
      m.mutex_pair.push_back(per_call_ns(50, 1000, [&] {
        pthread_mutex_lock(&mutex);
        pthread_mutex_unlock(&mutex);
      }));
    }
    pthread_spin_destroy(&spin);
    b.say(fmt::format("  uncontended lock + unlock: pthread spin {:.1f} ns, mutex {:.1f} ns",
                      median(m.spin_pair), median(m.mutex_pair)));
    if (b.cpu_b < 0) return;
    for (int r = 0; r < b.rounds(100) && !b.stopping(); ++r)
      m.line_one_way.push_back(bounce_one_way_ns(b, 20000));
    b.say(fmt::format("  cache line CPU {} <-> CPU {}: {:.1f} ns per transfer", b.cpu_a, b.cpu_b,
                      median(m.line_one_way)));
  });
}

}  // namespace uringsim::host::calib
