#pragma once
// Where a request's latency goes (issue 7's critical path): from the moment the application
// prepares the SQE to the moment it reads the CQE, every instant is in exactly one stage. A request
// moves between stages as the kernel paths hand it on; the time between two moves is added to the
// stage it was in, so the stages of every request add up to its latency by construction. Lock waits
// measured by the lock are moved out of the stage they happened in into `lock_wait`.
#include <array>
#include <cstdint>
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

class LatencyBreakdown {
 public:
  static void start(Request& req, sim::TimeNs t);           // the application prepares the SQE
  static void move(Request& req, Stage to, sim::TimeNs t);  // the request changes stage at t
  static void lock_wait(Request& req, sim::TimeNs waited);  // part of the current stage was a lock wait
  // The application reads the CQE at t; reported if t is inside the measurement window.
  void finish(Request& req, sim::TimeNs t, sim::TimeNs window_start_ns, sim::TimeNs window_end_ns);

  void merge(const LatencyBreakdown& o);  // several rings reported as one (fio numjobs)
  std::uint64_t requests() const { return records_.size(); }
  // Largest |sum of stages - latency| over the reported requests (ns): rounding only.
  double max_residual_ns() const { return max_residual_; }
  // {"requests", "mean": {latency_us, stages_us{...}}, "p99_and_beyond": {...}, "max_residual_ns"}
  nlohmann::json to_json() const;

 private:
  struct Record {
    float latency_ns;
    std::array<float, kStages> ns;
  };
  std::vector<Record> records_;
  double max_residual_ = 0;
};

}  // namespace uringsim::models
