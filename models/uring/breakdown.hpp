#pragma once
// Where a request's latency goes (issue 7's critical path): from the moment the application
// prepares the SQE to the moment it reads the CQE, every instant is in exactly one stage. A request
// moves between stages as the kernel paths hand it on; the time between two moves is added to the
// stage it was in, so the stages of every request add up to its latency by construction. Lock waits
// measured by the lock are moved out of the stage they happened in into `lock_wait`.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/types.hpp"

namespace uringsim::models {

struct Request;

enum class Stage : std::uint8_t {
  SqWait,         // prepared by the application, not yet submitted (in its SQ batch or the SQ ring)
  Issue,          // submission and issue CPU (io_submit_sqes, inline attempts, task_work re-issue)
  IoWqQueue,      // on an io-wq work list
  WorkerRun,      // an io-wq worker runs it
  LockWait,       // spinning or sleeping on a lock while working for it
  PollWait,       // async poll armed, waiting for the file to be ready
  NetOrDevice,    // blocked in the file: a worker asleep in a blocking recv, a device serving it
  TaskWorkDelay,  // queued as task_work, waiting for the task to run it
  CqWait,         // CQE posted (or on the overflow list), not yet read by the application
  kCount
};
constexpr std::size_t kStages = static_cast<std::size_t>(Stage::kCount);
const char* stage_name(Stage s);

// Per-request accumulator, kept inside the Request.
struct StageClock {
  Stage stage = Stage::SqWait;
  sim::TimeNs t_start = 0, t_last = 0;
  std::array<double, kStages> ns{};
};

// The breakdown of the requests whose CQE is read in the measurement window: the mean of every
// stage over all of them, and over the tail, the requests at or beyond the p99 latency (nearest
// rank). The mean is kept as running sums; the tail needs the records themselves, and the p99 is
// known only at the end, so a bounded set of the slowest records is kept (see `Tail` below). Both
// are summed in the order the requests finished, as the record-per-request version did, so the
// figures are the same to the last bit.
class LatencyBreakdown {
 public:
  // One request as reported: its latency and stages, rounded to float.
  struct Record {
    float latency_ns;
    std::array<float, kStages> ns;
  };
  // How many of the slowest records are kept. A record is dropped only when at least `keep`
  // records seen so far are slower, with keep = max(min_keep, slack x 1 % of the count the window
  // is on course for: the requests so far / the elapsed fraction of the window). It would have
  // belonged to the final tail only if fewer than 1 % of all the window's requests were slower,
  // i.e. if more than `slack` times that projection completed: only if the completion rate later
  // rose above `slack` times its average so far. That is checked at the end, not assumed:
  // tail_exact() holds when every dropped record is faster than the p99. Memory: at most
  // 1.5 x keep records plus those tied with the threshold; a run of up to min_keep requests keeps
  // every record.
  struct Tail {
    std::size_t min_keep = std::size_t{1} << 16;
    double slack = 4;
  };

  LatencyBreakdown() = default;
  explicit LatencyBreakdown(Tail tail) : policy_(tail) {}

  static void start(Request& req, sim::TimeNs t);           // the application prepares the SQE
  static void move(Request& req, Stage to, sim::TimeNs t);  // the request changes stage at t
  static void lock_wait(Request& req, sim::TimeNs waited);  // part of the current stage was a lock wait
  // The application reads the CQE at t; reported if t is inside the measurement window.
  void finish(Request& req, sim::TimeNs t, sim::TimeNs window_start_ns, sim::TimeNs window_end_ns);
  // Reports one request (what finish() does for a request in the window); `elapsed` is the
  // fraction of the measurement window gone when it finished, in [0, 1].
  void add(const Record& r, double elapsed);

  std::uint64_t requests() const { return n_; }
  // Largest |sum of stages - latency| over the reported requests (ns): rounding only.
  double max_residual_ns() const { return max_residual_; }
  // Records kept for the tail now, and whether the tail to_json() reports is exactly the set of
  // requests at or beyond p99 (false only if a dropped record turns out to be at or beyond it: the
  // p99 and tail are then those of the kept records, to_json() adds "tail_exact": false and the
  // run's summary warns).
  std::size_t tail_kept() const { return kept_.size(); }
  bool tail_exact() const;
  // {"requests", "mean": {latency_us, stages_us{...}}, "p99_and_beyond": {...}, "max_residual_ns"},
  // plus "tail_exact": false if !tail_exact()
  nlohmann::json to_json() const;

 private:
  struct Cut {
    std::size_t m;  // the p99 is the m-th largest latency
    float p99;      // the m-th largest kept latency (0 when empty)
    bool exact;
  };
  Cut cut() const;
  void compact(double elapsed);

  Tail policy_;
  std::uint64_t n_ = 0;
  double lat_sum_ = 0;
  std::array<double, kStages> stage_sum_{};
  double max_residual_ = 0;
  std::vector<Record> kept_;  // every record at or above threshold_, in the order they finished
  float threshold_ = -std::numeric_limits<float>::infinity();
  float max_dropped_ = -std::numeric_limits<float>::infinity();  // the slowest record not kept
  std::size_t next_compact_ = 0;
};

}  // namespace uringsim::models
