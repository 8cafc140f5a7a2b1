#include "sim/engine.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/atomic_line.hpp"
#include "sim/lock.hpp"
#include "sim/random.hpp"
#include "sim/sg_impl.hpp"
#include "sim/waitqueue.hpp"

#if defined(__SANITIZE_ADDRESS__)
// Defaults of the sanitizer build (-DURINGSIM_SANITIZE=ON); ASAN_OPTIONS adds to or overrides them.
// Leak checking is off: at exit LeakSanitizer scans SimGrid's actor stacks (memory SimGrid mapped
// itself, switched to without telling ASan) and crashes there, and the engine is never torn down
// (one per process), so everything it holds would be reported anyway. Stack-use-after-return is off
// because its fake stacks do not follow SimGrid's context switches.
extern "C" const char* __asan_default_options() {
  // abort_on_error: a finding ends the process by SIGABRT, not exit 1, so that the fuzz driver and
  // the tests see it as a crash and never as an ordinary "simulation failed".
  return "detect_leaks=0:detect_stack_use_after_return=0:abort_on_error=1";
}
extern "C" const char* __ubsan_default_options() {
  return "abort_on_error=1:print_stacktrace=1";  // the same for undefined behaviour
}
#endif

namespace uringsim::sim {
namespace {
Engine* g_engine = nullptr;
bool g_engine_ever_created = false;
}  // namespace

double Engine::sg_clock_s_ = 0;

namespace {

std::uint64_t read_number(const char* path, std::uint64_t fallback) {
  std::ifstream f(path);
  std::uint64_t v = 0;
  return f >> v ? v : fallback;
}

std::uint64_t count_lines(const char* path) {
  std::ifstream f(path);
  std::uint64_t n = 0;
  for (std::string line; std::getline(f, line);) ++n;
  return n;
}

// VmSize from /proc/self/status, in bytes (0 if unknown).
std::uint64_t mapped_bytes() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
  return 0;
}

// SimGrid's context factories in the Debian 3.32 build; SimGrid aborts on any other name.
const std::set<std::string> kContextFactories = {"raw", "ucontext", "boost", "thread"};

}  // namespace

std::vector<std::string> simgrid_cfg_from_env() {
  const char* env = std::getenv(kSimgridCfgEnv);
  std::vector<std::string> items;
  std::string text = env ? env : "", item;
  auto finish = [&] {
    if (item.empty()) return;
    const auto colon = item.find(':');
    if (colon == 0 || colon == std::string::npos || colon + 1 == item.size())
      throw std::invalid_argument(std::string(kSimgridCfgEnv) + ": \"" + item +
                                  "\" is not NAME:VALUE (e.g. contexts/factory:thread)");
    if (item.compare(0, colon, "contexts/factory") == 0 && !kContextFactories.count(item.substr(colon + 1)))
      throw std::invalid_argument(std::string(kSimgridCfgEnv) + ": unknown context factory \"" +
                                  item.substr(colon + 1) + "\" (raw, ucontext, boost or thread)");
    items.push_back(item);
    item.clear();
  };
  for (const char c : text) {
    if (c == ';' || c == ' ' || c == '\t' || c == '\n')
      finish();
    else
      item += c;
  }
  finish();
  return items;
}

ThreadCapacity ThreadCapacity::of_this_process(std::uint64_t stack_bytes) {
  ThreadCapacity c;
  c.max_map_count = read_number("/proc/sys/vm/max_map_count", 65530);  // the kernel's default
  c.maps_in_use = count_lines("/proc/self/maps");
  c.stack_bytes = stack_bytes;
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t used = mapped_bytes();
    c.address_space_left = as.rlim_cur > used ? as.rlim_cur - used : 0;
  }
  return c;
}

std::uint64_t ThreadCapacity::max_threads() const {
  const std::uint64_t maps_left =
      max_map_count > maps_in_use + kSpareMaps ? max_map_count - maps_in_use - kSpareMaps : 0;
  std::uint64_t n = maps_left / kMapsPerThread;
  if (address_space_left != UINT64_MAX && stack_bytes > 0) {
    // The spare part, as for the maps: a quarter of what is left stays for everything else.
    n = std::min(n, address_space_left / 4 * 3 / stack_bytes);
  }
  return n;
}

std::string ThreadCapacity::explain() const {
  std::string s = "each simulated thread is a SimGrid actor with its own " +
                  std::to_string(stack_bytes / 1024) + " KiB stack, which takes " +
                  std::to_string(kMapsPerThread) + " memory maps (stack and guard page) of the " +
                  std::to_string(max_map_count) + " that vm.max_map_count allows a process (" +
                  std::to_string(maps_in_use) + " in use)";
  if (address_space_left != UINT64_MAX)
    s += " and its address space, of which the address-space limit (ulimit -v) leaves " +
         std::to_string(address_space_left >> 20) + " MiB";
  return s + "; lower the scenario's thread counts, or raise vm.max_map_count (sysctl)";
}

Engine::Engine(const MachineSpec& machine, const PrimitiveCosts& costs)
    : machine_(machine), costs_(costs), impl_(std::make_unique<Impl>()) {
  // A second SimGrid engine in one process keeps the old clock: refuse instead of giving wrong times.
  if (g_engine_ever_created)
    throw std::logic_error("one simulation per process: an engine was already created");
  g_engine_ever_created = true;
  // URINGSIM_LOOKAHEAD=off: every interaction executes the pending work first. Results must be the
  // same either way (docs/architecture.md); a difference is a model writing shared state early.
  if (const char* la = std::getenv(kLookaheadEnv)) {
    if (std::string(la) == "off")
      lookahead_ = false;
    else if (std::string(la) != "on")
      throw std::invalid_argument(std::string(kLookaheadEnv) + "=" + la + ": expected on or off");
  }
  if (machine.cores < 1 || machine.ghz <= 0)
    throw std::invalid_argument("machine needs cores >= 1 and ghz > 0");

  // Kernel costs are tens of ns: SimGrid's default 1 ns timing precision would round them away.
  // Nothing is sent over a network (hosts have no links): the constant network model is the
  // cheapest to consult at every time advance, where the default one runs its solver each time.
  // The CPU model's lazy updates (cpu/optim:TI) are exact here: CPU work is simulated as delays
  // (the scheduler runs one thread per CPU), never as executions sharing a host; they skip the
  // sharing solver for every sleep (dates may differ in the last bits of a double).
  static std::vector<std::string> args = {"uringsim",
                                          "--cfg=surf/precision:1e-12",
                                          "--cfg=maxmin/precision:1e-9",
                                          "--log=root.thres:critical",
                                          "--cfg=network/model:Constant",
                                          "--cfg=cpu/optim:TI"};
  for (const auto& item : simgrid_cfg_from_env()) args.push_back("--cfg=" + item);
  static std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  // SimGrid installs a SIGINT handler that exits with status 1, as a failure would, and even when
  // SIGINT was ignored (a background job): keep the disposition this process was started with, so
  // an interrupted run dies of the signal and one that ignores SIGINT still does.
  struct sigaction sigint_before {};
  sigaction(SIGINT, nullptr, &sigint_before);
  try {
    impl_->engine = new simgrid::s4u::Engine(&argc, argv.data());  // lives until the process exits
  } catch (const std::exception& e) {  // SimGrid refused an option (an unknown name, a bad value)
    throw std::invalid_argument(std::string(kSimgridCfgEnv) + ": " + e.what());
  }
  sigaction(SIGINT, &sigint_before, nullptr);
  capacity_ = ThreadCapacity::of_this_process(
      static_cast<std::uint64_t>(simgrid::config::get_value<int>("contexts/stack-size")) * 1024);
  auto* zone = simgrid::s4u::create_full_zone("machine");
  for (int i = 0; i < machine.cores; ++i)
    impl_->hosts.push_back(zone->create_host("cpu" + std::to_string(i), machine.ghz * 1e9)->seal());
  for (int i = 0; i < machine.external_cpus; ++i)
    impl_->hosts.push_back(zone->create_host("external" + std::to_string(i), machine.ghz * 1e9)->seal());
  zone->seal();
  sched_ = std::make_unique<CpuScheduler>(machine.cores, machine.sched, costs, machine.ghz);
  // SimGrid changes its clock only when it advances time (no availability profiles are used here),
  // and signals each advance right after it: keep our copy of the clock in step.
  sg_clock_s_ = simgrid::s4u::Engine::get_clock();
  simgrid::s4u::Engine::on_time_advance_cb([](double) { sg_clock_s_ = simgrid::s4u::Engine::get_clock(); });
  g_engine = this;
}

Engine::~Engine() {
  // SimGrid's engine is never torn down (one per process), and its actors may still be blocked on
  // our threads' semaphores: leave the threads alive rather than destroy what SimGrid still uses.
  for (auto& t : threads_) t.release();
  if (g_engine == this) g_engine = nullptr;
}

void Engine::thread_became_blocked(bool parked) {
  if (parked) ++parked_threads_;
  if (--active_threads_ > 0 || parked_threads_ == 0 || deadlocked_ || impl_->failure) return;
  stop_on_deadlock();
}

void Engine::stop_on_deadlock() {
  deadlocked_ = true;
  deadlock_ns_ = clock_ns();
  deadlock_snapshot_ = wait_snapshot();
  deadlock_snapshot_->deadlock = true;
  simgrid::s4u::Actor::kill_all();  // everyone else; the caller ends itself
  simgrid::s4u::this_actor::exit();
  std::abort();  // not reached: exit() unwinds the calling actor
}

WaitSnapshot Engine::wait_snapshot() const {
  WaitSnapshot snap;
  snap.t_ns = clock_ns();
  for (const auto& t : threads_) {
    if (t->opts_.daemon || t->state() == Thread::State::Done) continue;
    ThreadWait w;
    w.thread = t->name();
    const auto st = t->state();
    if (t->waiting_lock_) {  // set only while waiting for the lock (also just before the wait starts)
      const Lock* l = t->waiting_lock_;
      w.on = ThreadWait::On::Lock;
      w.object = l->name();
      w.site = label_name(t->waiting_site_);
      if (l->owner()) {
        w.holder = l->owner()->name();
        w.holder_site = label_name(l->owner_site());
      }
    } else if (st == Thread::State::Parked && t->waiting_queue_) {
      w.on = ThreadWait::On::WaitQueue;
      w.object = t->waiting_queue_->name();
    } else if (st == Thread::State::Parked) {
      w.on = ThreadWait::On::Park;
    } else if (st == Thread::State::Sleeping) {
      w.on = ThreadWait::On::Sleep;
    }
    snap.threads.push_back(std::move(w));
  }
  return snap;
}

void Engine::declare(const std::string& kind, const std::string& name) {
  declared_.push_back({name, kind});
}

void Engine::declare_edge(const std::string& from, const std::string& to, const std::string& label) {
  declared_edges_.push_back({from, to, label});
}

Topology Engine::topology() const {
  Topology topo;
  std::set<std::string> names;
  auto add = [&](const std::string& name, const std::string& kind) {
    if (names.insert(name).second) topo.nodes.push_back({name, kind});
  };
  for (const auto& t : threads_)
    if (!t->opts_.daemon) add(t->name(), "thread");
  for (const LockClass* l : lock_classes_) add(l->name(), l->kind() == LockKind::Spin ? "spinlock" : "mutex");
  for (const WaitQueue* q : waitqueues_) add(q->name(), "waitqueue");
  for (const auto& n : declared_) add(n.name, n.kind);
  for (const auto& e : declared_edges_) {
    for (const auto* end : {&e.from, &e.to})
      if (!names.count(*end))
        throw std::logic_error("topology edge " + e.from + " -> " + e.to + ": no node named " + *end +
                               " (declare it first)");
    topo.edges.push_back(e);
  }
  return topo;
}

void Engine::unregister_waitqueue(const WaitQueue* q) {
  waitqueues_.erase(std::remove(waitqueues_.begin(), waitqueues_.end(), q), waitqueues_.end());
}

Engine& Engine::get() {
  if (!g_engine) throw std::logic_error("no simulation engine in this process");
  return *g_engine;
}

Engine* Engine::get_if() {
  return g_engine;
}

Thread& Engine::spawn(const std::string& name, const std::string& comm, int cpu, std::function<void()> body,
                      ThreadOptions opts) {
  const int ncpu = machine_.cores + machine_.external_cpus;
  if (cpu < 0 || cpu >= ncpu)
    throw std::invalid_argument("thread " + name + ": cpu " + std::to_string(cpu) + " outside 0.." +
                                std::to_string(ncpu - 1));
  if (live_threads_ >= capacity_.max_threads())
    throw ThreadLimitError("thread " + name + " would be simulated thread " +
                           std::to_string(live_threads_ + 1) +
                           " alive at once; this machine can run at most " +
                           std::to_string(capacity_.max_threads()) + ": " + capacity_.explain());
  // The new thread comes into being after its creator's earlier work (which the lookahead may
  // have left pending).
  if (g_running && running_) g_running->flush();
  RunningGuard guard;  // creating an actor from an actor lets others run
  ++live_threads_;
  const int id = static_cast<int>(threads_.size());
  threads_.emplace_back(new Thread(*this, id, name, comm, cpu, opts));
  Thread* t = threads_.back().get();
  if (opts.interrupt) ++interrupt_threads_;
  // The new actor runs at this date; creating it lets others run (the creator too, at this date).
  if (horizons_.add(clock_ns()) != id) throw std::logic_error("horizons out of step with threads");
  if (g_running) horizons_.set(g_running->id(), clock_ns());
  if (trace_) trace_->thread(id, name, comm);
  thread_became_active();
  if (window_start_ > 0 && clock_ns() >= window_start_) t->mark_window_start();
  const bool at_setup = !running_;
  auto actor =
      simgrid::s4u::Actor::create(name, impl_->hosts[cpu], [this, t, at_setup, body = std::move(body)] {
        // Set here: a new actor may run before Actor::create() returns to a creating actor.
        g_running = t;
        simgrid::s4u::Actor::self()->set_data(t);
        if (t->opts_.daemon) simgrid::s4u::Actor::self()->daemonize();
        g_running = t;
        try {
          if (t->opts_.start_ns > 0) {
            horizons_.set(t->id(), std::max(clock_ns(), t->opts_.start_ns));
            simgrid::s4u::this_actor::sleep_until(t->opts_.start_ns * 1e-9);
          }
          g_running = t;
          if (t->scheduled()) {  // wake_up_new_task: it runs once the scheduler gives it a CPU
            sched_->start(*t, clock_ns(), at_setup);
            t->wait_dispatch();
          }
          body();
          t->flush();
          // lockdep's "lock held when returning to user space": nobody can release these any more.
          for (const auto& h : t->held_locks())
            report_violation(violation::kExitHoldingLock, h.site, 0,
                             "ends holding " + h.lock->name() + " (taken at " + label_name(h.site) + ")");
        } catch (const std::exception&) {
          // A model error (invariant broken, bad state): stop the whole simulation and report it.
          if (!impl_->failure) impl_->failure = std::current_exception();
          simgrid::s4u::Actor::kill_all();
          g_running = t;
        }
        if (t->scheduled() && t->sched().on_cpu && !impl_->failure)
          sched_->block(*t, clock_ns(), true);  // it exits
        t->state_ = Thread::State::Done;
        horizons_.set(t->id(), Horizons::kNever);
        --live_threads_;
        thread_became_blocked(false);  // a finished thread will never run again
      });
  t->impl_->actor = actor;
  return *t;
}

void Engine::at_ns(TimeNs t_ns, std::function<void()> fn) {
  ThreadOptions o;
  o.daemon = true;
  o.accounted = false;
  spawn(
      "timer", "timer", 0,
      [this, t_ns, fn = std::move(fn)] {
        Thread* self = g_running;
        horizons_.set(self->id(), std::max(clock_ns(), t_ns));
        simgrid::s4u::this_actor::sleep_until(t_ns * 1e-9);
        g_running = self;
        fn();
      },
      o);
}

std::map<std::string, std::uint64_t> Engine::syncs_other_first_by_comm() const {
  std::map<std::string, std::uint64_t> by;
  for (std::size_t i = 0; i < syncs_first_.size() && i < threads_.size(); ++i)
    if (syncs_first_[i] > 0) by[threads_[i]->comm()] += syncs_first_[i];
  return by;
}

void Engine::stuck_step(const Thread& t) {
  if (stuck_) return;  // already failing: threads unwinding must not throw again
  stuck_threads_.insert(t.name());
  if (steps_at_date_ < kMaxStepsAtOneDate) return;
  stuck_ = true;
  std::string names;
  for (const auto& n : stuck_threads_) names += (names.empty() ? "" : ", ") + n;
  throw std::runtime_error("no progress in simulated time: " + std::to_string(kMaxStepsAtOneDate) +
                           " steps of simulated threads at t = " + std::to_string(clock_ns() / 1e6) +
                           " ms without the clock advancing (a loop whose costs are all 0?); threads running "
                           "at that date: " +
                           names);
}

void Engine::set_window(TimeNs start_ns, TimeNs end_ns) {
  window_start_ = start_ns;
  window_end_ = end_ns;
  sched_->set_window(start_ns, end_ns);
  at_ns(start_ns, [this] {
    for (auto& t : threads_) t->mark_window_start();
    for (LockClass* l : lock_classes_) l->mark_window_start();
    for (AtomicLine* a : atomics_) a->mark_window_start();
  });
}

// Each CPU's stalls come at a fixed period, the CPUs' phases spread over it (a host's timer ticks
// are periodic; the phase between two vCPUs is arbitrary, fixed here for determinism). With
// measured lengths they come at random instead: after each stall ends, an exponential wait whose
// mean keeps the measured rate, then a length drawn by the lengths' rates.
void Engine::start_cpu_stalls() {
  static const Label sym = intern("(CPU stalled: tick, host)");
  ThreadOptions o;
  o.daemon = true;
  o.interrupt = true;
  o.accounted = false;
  const auto stall = [this](int cpu, TimeNs ns) {
    sched_->interrupt_current(cpu, clock_ns(), ns, ns_to_cycles(ns), sym);
  };
  if (!machine_.stall_lengths.empty()) {
    double rate = 0, stalled = 0;  // per second; ns per second
    for (const auto& l : machine_.stall_lengths) rate += l.per_s, stalled += l.per_s * l.ns;
    if (rate <= 0) return;
    const TimeNs mean_free = (1e9 - stalled) / rate;  // config checks stalled < 1e9
    for (int cpu = 0; cpu < machine_.cores; ++cpu)
      spawn(
          "cpu-stall/" + std::to_string(cpu), "[stall]", cpu,
          [this, cpu, rate, mean_free, stall] {
            Thread& self = current();
            Rng rng(machine_.stall_seed, "cpu-stall/" + std::to_string(cpu));
            for (;;) {
              self.sleep_ns(rng.exponential(mean_free));
              double pick = rng.uniform01() * rate;
              TimeNs ns = machine_.stall_lengths.back().ns;
              for (const auto& l : machine_.stall_lengths)
                if ((pick -= l.per_s) < 0) {
                  ns = l.ns;
                  break;
                }
              stall(cpu, ns);
              self.sleep_ns(ns);  // the next one comes after this one ends
            }
          },
          o);
    return;
  }
  const TimeNs every = machine_.stall_every_ns, ns = machine_.stall_ns;
  if (every <= 0 || ns <= 0) return;
  for (int cpu = 0; cpu < machine_.cores; ++cpu)
    spawn(
        "cpu-stall/" + std::to_string(cpu), "[stall]", cpu,
        [this, cpu, every, ns, stall] {
          Thread& self = current();
          TimeNs next = every * (cpu + 1) / (machine_.cores + 1);
          for (;;) {
            self.sleep_ns(next - clock_ns());
            stall(cpu, ns);
            next += every;
          }
        },
        o);
}

void Engine::run_until_ns(TimeNs t_ns) {
  if (!running_) start_cpu_stalls();
  running_ = true;
  run_end_ns_ = t_ns;
  impl_->engine->run_until(t_ns * 1e-9);
  sg_clock_s_ = simgrid::s4u::Engine::get_clock();  // in case the end of the run moved the clock
  g_running = nullptr;                              // back outside the simulation
  // Threads still blocked in a spin keep an Exec running; nothing else needs tearing down because
  // the process ends after reporting.
  if (impl_->failure) std::rethrow_exception(impl_->failure);
}

void Engine::unregister_lock_class(LockClass* c) {
  lock_classes_.erase(std::remove(lock_classes_.begin(), lock_classes_.end(), c), lock_classes_.end());
}

void Engine::unregister_atomic(AtomicLine* a) {
  atomics_.erase(std::remove(atomics_.begin(), atomics_.end(), a), atomics_.end());
}

}  // namespace uringsim::sim
