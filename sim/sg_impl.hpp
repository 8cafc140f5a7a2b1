#pragma once
// SimGrid-side state of the engine and of threads. Private to sim/*.cpp.
#include <simgrid/s4u.hpp>

#include <exception>
#include <vector>

#include "sim/engine.hpp"
#include "sim/thread.hpp"

namespace uringsim::sim {

// The thread whose actor runs now: what sim::current() returns, without asking SimGrid (which
// costs a thread-local lookup and several library calls, millions of times per run). SimGrid
// switches actors only inside its own calls, so the value is set when an actor starts, and every
// sim/ function that calls SimGrid keeps a RunningGuard, which restores it when the function
// returns or unwinds (an actor killed at the end of a run). Null outside the simulation.
extern Thread* g_running;
struct RunningGuard {
  Thread* const saved = g_running;
  ~RunningGuard() { g_running = saved; }
};

struct Engine::Impl {
  simgrid::s4u::Engine* engine = nullptr;
  std::vector<simgrid::s4u::Host*> hosts;
  std::exception_ptr failure;
};

struct Thread::Impl {
  simgrid::s4u::ActorPtr actor;
  simgrid::s4u::SemaphorePtr sem = simgrid::s4u::Semaphore::create(0);
  enum class Wait { None, Park, Grant, Dispatch, Work };  // Work: running CPU work (preemptible)
  Wait waiting = Wait::None;                              // what the thread is blocked on
  bool released = false;                                  // the semaphore was released for the current wait
  bool unparked = false;  // ... by an unpark (not by the scheduler's re-check of a spin)
  bool forever = false;   // blocked without a timeout (counts for deadlock detection)
};

}  // namespace uringsim::sim
