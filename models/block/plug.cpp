#include "models/block/plug.hpp"

#include <map>

#include "sim/thread.hpp"

namespace uringsim::models {
namespace {
// current->plug of each thread that has one. One simulation per process, so one table.
std::map<const sim::Thread*, BlockPlug*>& plugs() {
  static std::map<const sim::Thread*, BlockPlug*> m;
  return m;
}
}  // namespace

PlugCosts PlugCosts::from(const config::CostTable& t) {
  PlugCosts c;
  c.flush = t.get("blk_plug_flush_cycles");
  return c;
}

BlockPlug::~BlockPlug() {
  if (owner_) plugs().erase(owner_);
}

void BlockPlug::start() {
  const sim::Thread& self = sim::current();
  if (owner_ || plugs().count(&self)) return;  // blk_start_plug: a nested plug is ignored
  owner_ = &self;
  plugs()[&self] = this;
}

void BlockPlug::finish() {
  if (!owner_) return;
  flush();
  plugs().erase(owner_);
  owner_ = nullptr;
}

BlockPlug* BlockPlug::of(const sim::Thread& t) {
  auto it = plugs().find(&t);
  return it == plugs().end() ? nullptr : it->second;
}

void BlockPlug::add(PlugSink& sink, std::function<void()> dispatch) {
  if (static_cast<int>(held_.size()) >= kMaxRequests) flush();
  held_.push_back({&sink, std::move(dispatch)});
}

void BlockPlug::flush() {
  if (held_.empty()) return;
  static const sim::Label sym = sim::intern("blk_mq_flush_plug_list");
  sim::current().charge(c_.flush, sym);
  std::vector<Held> batch;
  batch.swap(held_);
  // Requests are counted per sink in runs, as blk_mq_flush_plug_list dispatches per queue.
  std::size_t i = 0;
  while (i < batch.size()) {
    std::size_t j = i;
    while (j < batch.size() && batch[j].sink == batch[i].sink) ++j;
    batch[i].sink->plug_flushed(j - i);
    for (std::size_t k = i; k < j; ++k) batch[k].dispatch();
    i = j;
  }
}

}  // namespace uringsim::models
