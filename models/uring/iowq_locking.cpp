#include "models/uring/iowq_locking.hpp"

#include <stdexcept>

#include "models/uring/iowq_locking_global.hpp"
#include "models/uring/iowq_locking_split.hpp"

namespace uringsim::models {

std::unique_ptr<IoWqLocking> make_iowq_locking(IoWqLock design) {
  switch (design) {
    case IoWqLock::Global:
      return std::make_unique<IoWqLockingGlobal>();
    case IoWqLock::Split:
      return std::make_unique<IoWqLockingSplit>();
  }
  throw std::logic_error("make_iowq_locking: unknown io-wq lock design");
}

}  // namespace uringsim::models
