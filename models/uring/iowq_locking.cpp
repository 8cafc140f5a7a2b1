#include "models/uring/iowq_locking.hpp"

#include <stdexcept>

#include "models/uring/iowq_locking_global.hpp"
#include "models/uring/iowq_locking_split.hpp"
#include "models/uring/iowq_locking_workers.hpp"

namespace uringsim::models {

std::unique_ptr<IoWqLocking> make_iowq_locking(IoWqLock design, bool rcu_wake) {
  switch (design) {
    case IoWqLock::Global:
      return std::make_unique<IoWqLockingGlobal>();
    case IoWqLock::Split:
      return std::make_unique<IoWqLockingSplit>(rcu_wake);
    case IoWqLock::Workers:
      return std::make_unique<IoWqLockingWorkers>();
  }
  throw std::logic_error("make_iowq_locking: unknown io-wq lock design");
}

}  // namespace uringsim::models
