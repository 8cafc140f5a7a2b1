#include "models/block/nvme.hpp"

#include <fmt/format.h>

#include <limits>

#include "config/schema.hpp"
#include "models/block/workqueue.hpp"
#include "sim/sched.hpp"
#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
// A hard interrupt preempts whatever runs on its CPU: with fluid CPU sharing, the largest CFS
// weight (nice -20, 88761/1024) stands in for that priority.

std::map<std::uint32_t, Distribution> table(const nlohmann::json& rows) {
  std::map<std::uint32_t, Distribution> t;
  for (const auto& r : rows)
    t[r.at("bs_bytes").get<std::uint32_t>()] = Distribution::from_json(r.at("service"));
  return t;
}
}  // namespace

namespace {
// Whether device.<field> keeps its schema default (the schema is the one place defaults live).
bool at_default(const config::Scenario& s, const char* field) {
  const auto* dev = config::Schema::get().root().field("device");
  const auto* f = dev->spec->field(field);
  return s.at(std::string("/device/") + field) == nlohmann::json::parse(f->spec->default_value->dump());
}
// A field the preset sets must keep its schema default: the preset would silently override it.
void refuse_with_preset(const config::Scenario& s, const char* field) {
  if (!at_default(s, field))
    throw config::InputError(fmt::format(
        "{}: device.{} conflicts with device.preset \"null_blk\", which sets it; remove one of them",
        s.source, field));
}
}  // namespace

DeviceParams DeviceParams::from(const config::Scenario& s) {
  DeviceParams p;
  const auto preset = s.at("/device/preset").get<std::string>();
  const auto irqmode = s.at("/device/null_blk_irqmode").get<std::string>();
  const double completion_ns = s.at("/device/null_blk_completion_ns").get<double>();
  if (preset == "null_blk") {
    for (const char* f : {"hw_queues", "parallelism", "read", "write"}) refuse_with_preset(s, f);
    // null_blk (drivers/block/null_blk/main.c): completes in null_handle_cmd, at once by softirq
    // (irqmode=1, the default) or after completion_nsec by hrtimer (irqmode=2), on the submitting
    // CPU; no media, so no service table and no limit on commands in service (tags not modelled).
    p.hw_queues = s.at("/machine/cores").get<int>();  // the completion is taken on the submitter's CPU
    p.parallelism = std::numeric_limits<int>::max();
    const double ns = irqmode == "timer" ? completion_ns : 0.0;
    p.fixed = Distribution::from_json({{"kind", "constant"}, {"value_us", ns / 1e3}});
    p.seed = s.at("/seed").get<std::uint64_t>();
    return p;
  }
  if (!at_default(s, "null_blk_irqmode") || !at_default(s, "null_blk_completion_ns"))
    throw config::InputError(fmt::format(
        "{}: device.null_blk_irqmode and device.null_blk_completion_ns need device.preset \"null_blk\"",
        s.source));
  const int hw = s.at("/device/hw_queues").get<int>();
  p.hw_queues = hw == 0 ? s.at("/machine/cores").get<int>() : hw;  // 0: one per core
  p.parallelism = s.at("/device/parallelism").get<int>();
  p.read = table(s.at("/device/read"));
  p.write = table(s.at("/device/write"));
  p.seed = s.at("/seed").get<std::uint64_t>();
  return p;
}

void DeviceParams::check_block_size(Op op, std::uint32_t bs, const std::string& where) const {
  if (fixed) return;  // every size
  const auto& t = op == Op::Write ? write : read;
  if (t.count(bs)) return;
  std::string listed;
  for (const auto& [size, d] : t) listed += (listed.empty() ? "" : ", ") + std::to_string(size);
  throw config::InputError(fmt::format("{}: no {} service time for bs_bytes {} in /device/{} (listed: {})",
                                       where, op == Op::Write ? "write" : "read", bs,
                                       op == Op::Write ? "write" : "read", listed));
}

DriveCosts DriveCosts::from(const config::CostTable& t) {
  DriveCosts c;
  c.nvme_submit = t.get("nvme_submit_cycles");
  c.irq_handle = t.get("irq_handle_cycles");
  c.rw_complete = t.get("rw_complete_cycles");
  return c;
}

NvmeDevice::NvmeDevice(const DeviceParams& p, const DriveCosts& costs)
    : p_(p), c_(costs), rng_(p.seed, "device.nvme.service") {}

const Distribution& NvmeDevice::service(Op op, std::uint32_t bs) const {
  if (p_.fixed) return *p_.fixed;
  return (op == Op::Write ? p_.write : p_.read).at(bs);  // checked when the model was built
}

void NvmeDevice::start(sim::Engine& engine) {
  engine_ = &engine;
  sim::ThreadOptions o;
  o.daemon = true;
  o.accounted = false;  // the drive's own controller, not a CPU of the machine
  drive_ = &engine.spawn(
      "nvme0", "nvme", 0, [this] { drive_main(); }, o);
}

void NvmeDevice::submit(const IoRequest& req, bool polled, std::function<void()> on_done) {
  auto& self = sim::current();
  static const sim::Label sym = sim::intern("nvme_queue_rq");
  self.charge(c_.nvme_submit, sym);
  ++stats_.submitted;
  // With fewer queues than CPUs, CPU c uses queue c mod n, whose interrupt is taken on CPU (queue).
  const int irq_cpu = self.cpu() % p_.hw_queues;
  Cmd cmd{polled, irq_cpu, std::move(on_done), service(req.op, req.bytes).sample_ns(rng_)};
  if (BlockPlug* plug = BlockPlug::of(self)) {
    ++stats_.plugged;
    // Held until the flush, which runs in whichever context flushes (itself a thread's work).
    plug->add(*this, [this, cmd = std::move(cmd)]() mutable {
      dispatch(std::move(cmd), sim::current().local_now_ns());
    });
    return;
  }
  dispatch(std::move(cmd), self.local_now_ns());  // the doorbell is written at the end of that work
}

void NvmeDevice::plug_flushed(std::uint64_t) {
  ++stats_.plug_flushes;
}

void NvmeDevice::dispatch(Cmd cmd, sim::TimeNs t) {
  if (in_service_ < p_.parallelism) {
    begin(std::move(cmd), t);
  } else {
    waiting_.push_back(std::move(cmd));
    stats_.queued_peak = std::max<std::uint64_t>(stats_.queued_peak, waiting_.size());
  }
}

void NvmeDevice::begin(Cmd cmd, sim::TimeNs t_start) {
  ++in_service_;
  stats_.service_ns_total += cmd.service_ns;
  const sim::TimeNs t_done = t_start + cmd.service_ns;
  const std::uint64_t seq = next_seq_++;
  by_seq_.emplace(seq, std::move(cmd));
  due_.push({t_done, seq});
  if (drive_sleeping_until_ > t_done) drive_->unpark();  // it sleeps past this completion: re-plan
}

void NvmeDevice::drive_main() {
  auto& self = sim::current();
  constexpr sim::TimeNs kNever = std::numeric_limits<double>::infinity();
  for (;;) {
    if (due_.empty()) {
      drive_sleeping_until_ = kNever;
      self.park();
      drive_sleeping_until_ = -1;
      continue;
    }
    const Due d = due_.top();
    const sim::TimeNs now = sim::now_ns();
    if (d.t > now) {
      drive_sleeping_until_ = d.t;
      self.park_for_ns(d.t - now);
      drive_sleeping_until_ = -1;
      continue;
    }
    due_.pop();
    auto it = by_seq_.find(d.seq);
    Cmd cmd = std::move(it->second);
    by_seq_.erase(it);
    --in_service_;
    if (!waiting_.empty()) {
      Cmd next = std::move(waiting_.front());
      waiting_.pop_front();
      begin(std::move(next), d.t);
    }
    complete(cmd);
  }
}

void NvmeDevice::complete(Cmd& cmd) {
  ++stats_.completed;
  if (cmd.polled) {
    // The completion entry is in memory; only a poller will find it.
    ++stats_.polled_done;
    cmd.on_done();
    return;
  }
  ++stats_.irqs;
  auto& q = irq_[cmd.irq_cpu];
  if (!q) {
    q = std::make_unique<IrqQueue>();
    sim::ThreadOptions o;
    o.daemon = true;
    o.interrupt = true;
    IrqQueue* qp = q.get();
    q->thread = &engine_->spawn(
        fmt::format("irq/nvme0q{}", cmd.irq_cpu), "[irq] nvme", cmd.irq_cpu, [this, qp] { irq_main(*qp); },
        o);
  }
  q->pending.push_back(std::move(cmd));
  q->thread->unpark();
}

void NvmeDevice::irq_main(IrqQueue& q) {
  static const sim::Label sym = sim::intern("nvme_irq");
  auto& self = sim::current();
  for (;;) {
    while (!q.pending.empty()) {
      std::vector<Cmd> batch;
      batch.swap(q.pending);
      self.charge(c_.irq_handle, sym);  // one interrupt for what has arrived (no coalescing modelled)
      for (auto& cmd : batch) cmd.on_done();
    }
    self.park();
  }
}

bool BlockFile::issue_async(IoRequest& req) {
  if (!direct_) return false;  // buffered: -EAGAIN for the non-blocking attempt, then io-wq
  if (req.op != Op::Write || write_comp_ == DioWriteCompletion::None) {
    dev_.submit(req, req.hipri(), [&req] { req.async_done(); });
    return true;
  }
  // An async iomap write: the interrupt cannot finish it (page invalidation, inode_dio_end need a
  // task context).
  if (write_comp_ == DioWriteCompletion::Caller) {
    dev_.submit(req, false, [this, &req] {
      req.caller_completion_cycles = dio_complete_;  // kiocb->dio_complete, run by the submitter
      req.async_done();
    });
    return true;
  }
  dev_.submit(req, false, [this, &req] {
    wq_->queue_work([this, &req] {  // iomap_dio_complete_work on the kworker
      static const sim::Label sym = sim::intern("iomap_dio_complete");
      sim::current().charge(dio_complete_, sym);
      req.async_done();  // ki_complete = io_complete_rw: task_work for the submitter
    });
  });
  return true;
}

void BlockFile::issue_blocking(IoRequest& req, BlockHooks* hooks) {
  static const sim::Label sym = sim::intern("blkdev_read_iter");
  sim::Thread& self = sim::current();
  dev_.submit(req, false, [&self] { sim::wake_up_process(self); });
  if (hooks) hooks->before_block();
  sim::sleep_until_woken();
  if (hooks) hooks->after_block();
  self.charge(dev_.costs().rw_complete, sym);
}

}  // namespace uringsim::models
