#include "models/uring/ring_internal.hpp"

namespace uringsim::models::ring {

const Syms& syms() {
  static const Syms s;
  return s;
}

const RingSyms& rsyms() {
  static const RingSyms s;
  return s;
}

}  // namespace uringsim::models::ring
