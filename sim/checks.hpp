#pragma once
// Design-review checks (issue #7), on in every run: lock rules (who may unlock, who may sleep,
// which locks a code path requires or forbids), the lock-order graph (held A -> taken B, with the
// pair of call sites, in the spirit of lockdep), and what every thread waits for when the run
// deadlocks. See docs/models/checks.md.
//
// For models: sim::require_held / require_not_held / require_may_sleep state a path's locking
// rules; a rule broken records a Violation (the run goes on; `uringsim run` exits 1 at the end
// unless --allow-violations). The checks cost no allocation while the rules hold.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/label.hpp"
#include "sim/types.hpp"

namespace uringsim::sim {

class Lock;
class Thread;

// Kinds of violation (the `kind` field).
namespace violation {
inline constexpr const char* kUnlockNotOwner = "unlock_not_owner";  // released by a non-holder
inline constexpr const char* kSleepHoldingSpinlock =
    "sleep_holding_spinlock";                                         // park/sleep/mutex under a spinlock
inline constexpr const char* kLockRequired = "lock_required";         // require_held failed
inline constexpr const char* kLockForbidden = "lock_forbidden";       // require_not_held failed
inline constexpr const char* kRecursiveLock = "recursive_lock";       // re-taking a lock one holds
inline constexpr const char* kExitHoldingLock = "exit_holding_lock";  // a thread ends holding a lock
}  // namespace violation

struct Violation {
  TimeNs t_ns = 0;
  std::string kind, thread, path, message;
  std::uint64_t request = 0;            // the request being worked on, 0 if none/unknown
  std::vector<std::string> locks_held;  // "lock@site", outermost first
};

// One edge of the lock-order graph: `to` was taken while `from` was held. Locks are named by
// their name, which plays the role of lockdep's lock class (instances with one name merge).
struct LockOrderEdge {
  std::string from, to;
  std::vector<std::pair<std::string, std::string>> sites;  // (where `from` was taken, where `to` was)
  std::uint64_t count = 0;                                 // acquisitions of `to` under `from`
};

// What a thread waits for at one moment: the raw data of the wait-for graph.
struct ThreadWait {
  enum class On { Running, Lock, WaitQueue, Park, Sleep };
  std::string thread;
  On on = On::Running;
  std::string object;       // the lock or wait queue waited for ("" for Running/Park/Sleep)
  std::string site;         // where the thread tries to take the lock
  std::string holder;       // the lock's owner thread ("" if none)
  std::string holder_site;  // where the owner took it
};
const char* to_string(ThreadWait::On on);

struct WaitSnapshot {
  TimeNs t_ns = 0;
  bool deadlock = false;            // taken when the run deadlocked (else: the state at the end of the run)
  std::vector<ThreadWait> threads;  // live, non-daemon threads, in creation order
};

// The scenario's components and how they connect (uringsim graph --kind topology).
struct TopologyNode {
  std::string name, kind;  // kind: thread, spinlock, mutex, waitqueue, or what a model declares
};
struct TopologyEdge {
  std::string from, to, label;
};
struct Topology {
  std::vector<TopologyNode> nodes;
  std::vector<TopologyEdge> edges;
};

// The engine's record of checks; models use the free functions below.
class Checks {
 public:
  static constexpr std::size_t kMaxStored = 100;  // violations kept in full; all are counted

  void add(Violation v);
  std::uint64_t total() const { return total_; }
  const std::vector<Violation>& stored() const { return stored_; }
  const std::map<std::string, std::uint64_t>& by_kind() const { return by_kind_; }

  // Lock ids are assigned at registration; names outlive the locks.
  int add_lock_name(const std::string& name);
  void order_edge(int from, Label from_site, int to, Label to_site);
  std::vector<LockOrderEdge> lock_order() const;  // merged by lock name, sorted

 private:
  // One counter per (from lock, to lock, from site, to site): one hash lookup per nested acquisition.
  struct EdgeKey {
    std::uint32_t from, to;
    Label from_site, to_site;
    bool operator==(const EdgeKey&) const = default;
  };
  struct EdgeHash {
    std::size_t operator()(const EdgeKey& k) const {
      const std::uint64_t a = (std::uint64_t{k.from} << 32) | k.to,
                          b = (std::uint64_t{k.from_site} << 32) | k.to_site;
      return std::hash<std::uint64_t>{}(a * 0x9e3779b97f4a7c15ull ^ b);
    }
  };
  std::uint64_t total_ = 0;
  std::vector<Violation> stored_;
  std::map<std::string, std::uint64_t> by_kind_;
  std::vector<std::string> lock_names_;
  std::unordered_map<EdgeKey, std::uint64_t, EdgeHash> edges_;
};

// Records a violation for the calling thread at its current point (time after its pending work,
// the locks it holds). `request` 0 means the thread's current request (Thread::set_request).
void report_violation(const char* kind, Label path, std::uint64_t request, std::string message);

// --- rules for models ---
// Violation `lock_required` unless the calling thread holds `l`.
void require_held(const Lock& l, Label path, std::uint64_t request = 0);
// Violation `lock_forbidden` if the calling thread holds `l`.
void require_not_held(const Lock& l, Label path, std::uint64_t request = 0);
// Violation `sleep_holding_spinlock` if the calling thread holds any spinlock (might_sleep()).
void require_may_sleep(Label path, std::uint64_t request = 0);

// Tags the calling thread's work with a request id for the scope (violations name it).
class RequestScope {
 public:
  explicit RequestScope(std::uint64_t request);
  ~RequestScope();
  RequestScope(const RequestScope&) = delete;
  RequestScope& operator=(const RequestScope&) = delete;

 private:
  std::uint64_t previous_;
};

}  // namespace uringsim::sim
