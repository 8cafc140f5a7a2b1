#pragma once
// The NVMe drive (scenario `device`) and the block-device file requests target. A command is
// issued from the submitting context (which pays the block layer and the doorbell), is serviced
// by the drive for a time drawn from the table of its block size, and completes either by
// interrupt (an IRQ thread on the hardware queue's CPU runs the completion) or, for polled
// (IOPOLL) commands, silently: the request is told in the drive's context, at no cost, and nothing
// more happens until a poller looks. Completions go to the request (IoRequest::async_done), so the
// drive knows nothing of io_uring. See docs/models/nvme.md.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <vector>

#include "config/scenario.hpp"
#include "models/block/plug.hpp"
#include "models/distribution.hpp"
#include "models/io/file.hpp"
#include "sim/engine.hpp"
#include "sim/random.hpp"

namespace uringsim::models {

// The drive of the scenario (`device`), hardware queues resolved.
struct DeviceParams {
  int hw_queues = 0;  // resolved: never 0
  int parallelism = 0;
  std::map<std::uint32_t, Distribution> read, write;  // service time by block size
  std::uint64_t seed = 0;
  // device.preset "null_blk": one fixed service time for every op and size (tables unused).
  std::optional<Distribution> fixed;

  // InputError (naming `where` and the listed sizes) unless the table for `op` lists `bs`.
  void check_block_size(Op op, std::uint32_t bs, const std::string& where) const;
  static DeviceParams from(const config::Scenario& s);
};

// CPU costs of the block layer and the drive's interrupt, in cycles (see models/costs.json).
struct DriveCosts {
  sim::Cycles nvme_submit;  // an issue, in the issuing context, up to the doorbell
  sim::Cycles irq_handle;   // one completion interrupt
  sim::Cycles rw_complete;  // a blocking issue's completion, in the woken issuer

  static DriveCosts from(const config::CostTable& t);
};

struct DeviceStats {
  std::uint64_t submitted = 0, completed = 0, irqs = 0, polled_done = 0, queued_peak = 0;
  // Requests that went through a plug, and the plug flushes that dispatched them.
  std::uint64_t plugged = 0, plug_flushes = 0;
  sim::TimeNs service_ns_total = 0;
};

class NvmeDevice final : public PlugSink {
 public:
  NvmeDevice(const DeviceParams& p, const DriveCosts& costs);
  void start(sim::Engine& engine);  // spawns the drive's own (unaccounted) thread

  // Issue from the current thread: charges nvme_submit there; the drive starts after that work.
  // `polled`: the completion only calls on_done (in the drive's context, free: it models the
  // completion entry appearing in memory). Otherwise on_done runs on the IRQ thread of the
  // submitter's hardware queue, after irq_handle_cycles. If the thread has a plug (BlockPlug), the
  // command waits on it and reaches the drive when the plug is flushed.
  void submit(const IoRequest& req, bool polled, std::function<void()> on_done);
  void plug_flushed(std::uint64_t requests) override;

  const DeviceStats& stats() const { return stats_; }
  const DriveCosts& costs() const { return c_; }
  int hw_queues() const { return p_.hw_queues; }

 private:
  struct Cmd {
    bool polled;
    int irq_cpu;
    std::function<void()> on_done;
    sim::TimeNs service_ns;
  };
  struct Due {
    sim::TimeNs t;
    std::uint64_t seq;
    bool operator>(const Due& o) const { return t > o.t || (t == o.t && seq > o.seq); }
  };
  struct IrqQueue {
    sim::Thread* thread = nullptr;
    std::vector<Cmd> pending;
  };
  const Distribution& service(Op op, std::uint32_t bs) const;
  void dispatch(Cmd cmd, sim::TimeNs t);  // the doorbell, at t: start it or queue it
  void begin(Cmd cmd, sim::TimeNs t_start);
  void drive_main();
  void complete(Cmd& cmd);
  void irq_main(IrqQueue& q);

  DeviceParams p_;
  DriveCosts c_;
  sim::Rng rng_;
  sim::Engine* engine_ = nullptr;
  sim::Thread* drive_ = nullptr;
  sim::TimeNs drive_sleeping_until_ = 0;
  int in_service_ = 0;
  std::deque<Cmd> waiting_;  // beyond `parallelism`, FIFO
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::map<std::uint64_t, Cmd> by_seq_;
  std::uint64_t next_seq_ = 0;
  std::map<int, std::unique_ptr<IrqQueue>> irq_;  // by CPU, created on first interrupt
  DeviceStats stats_;
};

class Workqueue;

// Where an async O_DIRECT write finishes its filesystem completion after the drive's interrupt
// (iomap_dio_bio_end_io -> iomap_dio_done): nowhere (a raw block device completes in the
// interrupt), a dio/ workqueue kworker, or the submitter's task context (IOCB_DIO_CALLER_COMP).
enum class DioWriteCompletion { None, Workqueue, Caller };

// A block device opened by the workload (fio's --filename=/dev/nvme...), or a file on XFS over it.
// Not pollable: without O_DIRECT a read or write is punted to io-wq and issued blocking there.
class BlockFile final : public File {
 public:
  BlockFile(NvmeDevice& dev, bool direct) : dev_(dev), direct_(direct) {}
  // A preallocated file on XFS: its O_DIRECT writes complete as `mode` says, doing
  // `dio_complete_cycles` of iomap_dio_complete (on `wq`'s kworker for Workqueue).
  void set_write_completion(DioWriteCompletion mode, Workqueue* wq, sim::Cycles dio_complete_cycles) {
    write_comp_ = mode;
    wq_ = wq;
    dio_complete_ = dio_complete_cycles;
  }
  bool pollable() const override { return false; }
  bool issue_async(IoRequest& req) override;
  bool try_issue(IoRequest&) override { return false; }  // never completes inline
  void issue_blocking(IoRequest& req, BlockHooks* hooks) override;
  bool poll_ready(const IoRequest&) const override { return false; }
  void add_poll(IoRequest&) override {}

 private:
  NvmeDevice& dev_;
  bool direct_;
  DioWriteCompletion write_comp_ = DioWriteCompletion::None;
  Workqueue* wq_ = nullptr;
  sim::Cycles dio_complete_ = 0;
};

}  // namespace uringsim::models
