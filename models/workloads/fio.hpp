#pragma once
// The fio workload (workload.type = "fio"): fio job threads with ioengine=io_uring on the NVMe
// drive, with fio's pacing (rate_iops), depth (iodepth), setup flags (hipri = IOPOLL,
// sqthread_poll = SQPOLL) and report (IOPS, bandwidth, slat/clat/lat percentiles, CPU).
// See docs/models/sqpoll.md.
#include <memory>
#include <string>
#include <vector>

#include "analysis/histogram.hpp"
#include "models/block/nvme.hpp"
#include "models/block/workqueue.hpp"
#include "models/cpu_placer.hpp"
#include "models/model.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/sqpoll.hpp"
#include "models/uring/uring.hpp"
#include "models/workloads/fio_params.hpp"
#include "sim/random.hpp"

namespace uringsim::models {

// A count or rate as fio prints it (lib/num2str.c's rule, with fio's default of 4 significant
// figures): divided by 1000 (1024 with `iec`) until its integer part has at most `digits` digits,
// then with as many decimals as fit in `digits` (none when the integer part takes 3 or more: rounded
// instead), followed by the prefix (k, M, G, ... or Ki, Mi, Gi, ...) and `unit`: 123456 -> "123k",
// 504e6 B/s -> "481MiB/s" (iec) and "504MB/s". value must be finite and >= 0.
std::string fio_scaled(double value, bool iec, const std::string& unit, int digits = 4);

class FioModel final : public Model {
 public:
  FioModel(const FioParams& p, const config::CostTable& costs);
  ~FioModel() override;
  void build(sim::Engine& engine, analysis::RunMetrics& metrics) override;
  void final_checks() const override;
  void report(nlohmann::json& results) const override;
  std::vector<std::pair<std::string, std::string>> summary() const override;
  std::string latency_measure() const override;
  std::string text_report() const override;

  // fio's default percentile list (--percentile_list).
  static const std::vector<double>& fio_percentiles();

 private:
  struct LatStat {  // one of slat / clat / lat, in the window
    analysis::LatencyHistogram h;
    double sum = 0, sumsq = 0;
    void add(double ns);
    double stdev_ns() const;
  };
  struct DirStats {
    std::uint64_t ios = 0, bytes = 0;
    LatStat slat, clat, lat;
  };
  struct Slot {
    sim::TimeNs start = 0, issue = 0;
    Op op = Op::Read;
  };
  struct Job {
    int index = 0, cpu = 0, sq_cpu = -1;
    std::unique_ptr<Uring> ring;
    std::unique_ptr<SqThread> sqd;
    std::unique_ptr<BlockFile> file;
    sim::Thread* thread = nullptr;
    std::vector<Slot> slots;
    std::vector<int> free_slots;
    int inflight = 0;
    std::unique_ptr<sim::Rng> mix;
  };

  void job_main(Job& j);
  void declare_topology(sim::Engine& engine, const Job& j) const;
  void issue_one(Job& j);
  void wait_events(Job& j, int min);
  void reap(Job& j);
  Op next_op(Job& j);

  FioParams p_;
  UringCosts c_;
  std::uint64_t errors_ = 0;  // CQEs with a negative result (e.g. -ECANCELED from io-wq)
  std::unique_ptr<NvmeDevice> dev_;
  std::unique_ptr<Workqueue> dio_wq_;  // the XFS superblock's dio/ workqueue (filesystem = xfs)
  sim::Cycles dio_complete_cycles_ = 0;
  WorkqueueCosts wq_costs_;

  sim::Engine* engine_ = nullptr;
  analysis::RunMetrics* metrics_ = nullptr;
  std::unique_ptr<CpuPlacer> placer_;
  std::vector<std::unique_ptr<Job>> jobs_;
  DirStats read_, write_;
};

}  // namespace uringsim::models
