#pragma once
// Block-layer plugging (struct blk_plug, block/blk-core.c and blk-mq.c): between blk_start_plug and
// blk_finish_plug, requests a task issues are held on its plug instead of being dispatched, and
// go to the drive together when the plug is flushed (blk_mq_flush_plug_list). The plug is flushed
// early when it already holds BLK_MAX_REQUEST_COUNT requests (blk_add_rq_to_plug) and when its
// task sleeps (sched_submit_work -> blk_flush_plug). io_submit_sqes plugs a batch of more than two
// SQEs (io_submit_state_start: need_plug = max_ios > 2). See docs/models/sqpoll.md.
#include <cstdint>
#include <functional>
#include <vector>

#include "config/cost_table.hpp"
#include "sim/types.hpp"

namespace uringsim::sim {
class Thread;
}

namespace uringsim::models {

// Who a plugged request is dispatched to: counts the flushes and requests it receives.
class PlugSink {
 public:
  virtual ~PlugSink() = default;
  virtual void plug_flushed(std::uint64_t requests) = 0;
};

struct PlugCosts {
  sim::Cycles flush;  // one blk_mq_flush_plug_list, besides the per-request dispatch

  static PlugCosts from(const config::CostTable& t);
};

class BlockPlug {
 public:
  static constexpr int kMaxRequests = 32;  // BLK_MAX_REQUEST_COUNT (one queue: blk_plug_max_rq_count)

  explicit BlockPlug(const PlugCosts& costs) : c_(costs) {}
  ~BlockPlug();
  BlockPlug(const BlockPlug&) = delete;
  BlockPlug& operator=(const BlockPlug&) = delete;

  // blk_start_plug on the current thread (nothing if it already has a plug, as upstream).
  void start();
  // blk_finish_plug: flush what is held and detach from the thread.
  void finish();
  bool started() const { return owner_ != nullptr; }

  // The plug of `t`, or nullptr (current->plug).
  static BlockPlug* of(const sim::Thread& t);
  // blk_add_rq_to_plug: hold `dispatch` (run at the flush, in the flushing context) for `sink`;
  // a full plug is flushed first.
  void add(PlugSink& sink, std::function<void()> dispatch);
  // blk_flush_plug: dispatch what is held, charging the flush to the current thread.
  void flush();

 private:
  struct Held {
    PlugSink* sink;
    std::function<void()> dispatch;
  };
  PlugCosts c_;
  const sim::Thread* owner_ = nullptr;
  std::vector<Held> held_;
};

}  // namespace uringsim::models
