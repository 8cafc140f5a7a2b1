#pragma once
// The NOP workload (workload.type = "nop"): one thread submits batches of IORING_OP_NOP and waits
// for each whole batch, like the io-wq microbenchmarks of the seed-003 patch series (nop_test.c:
// IOSQE_ASYNC NOPs at depth 10). With force_async every NOP goes through io-wq's bound account,
// so the run measures io-wq alone: enqueue, worker wake-ups, the work-list lock, CQE posting.
// See docs/models/locking.md.
#include <memory>

#include "models/cpu_placer.hpp"
#include "models/model.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/nop_file.hpp"
#include "models/uring/uring.hpp"
#include "models/workloads/nop_params.hpp"

namespace uringsim::models {

class NopModel final : public Model {
 public:
  NopModel(const NopParams& p, const config::CostTable& costs);
  ~NopModel() override;
  void build(sim::Engine& engine, analysis::RunMetrics& metrics) override;
  void final_checks() const override;
  void report(nlohmann::json& results) const override;
  std::vector<std::pair<std::string, std::string>> summary() const override;
  std::string latency_measure() const override;

 private:
  void submitter_main();

  NopParams p_;
  UringCosts c_;

  sim::Engine* engine_ = nullptr;
  analysis::RunMetrics* metrics_ = nullptr;
  std::unique_ptr<CpuPlacer> placer_;
  std::unique_ptr<Uring> ring_;
  std::unique_ptr<NopFile> file_;
  std::uint64_t batches_window_ = 0;
  std::uint64_t failed_ = 0;  // CQEs with a negative result, whole run
};

}  // namespace uringsim::models
