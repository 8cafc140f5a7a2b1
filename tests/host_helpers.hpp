#pragma once
// For tests that run on the real kernel: whether io_uring is usable here, and if not why (such
// tests skip, printing the reason).
#include <liburing.h>

#include <string>

#include <catch2/catch.hpp>

#include "host/machine_info.hpp"

namespace testing {

inline std::string host_unavailable_reason() {
  io_uring ring{};
  const int rc = io_uring_queue_init(4, &ring, 0);
  if (rc < 0)
    return uringsim::host::io_uring_unavailable_reason(uringsim::host::read_io_uring_disabled(), -rc);
  io_uring_queue_exit(&ring);
  return "";
}

inline bool host_available() {
  const std::string why = host_unavailable_reason();
  if (!why.empty()) WARN("skipped: io_uring is not available here: " << why);
  return why.empty();
}

}  // namespace testing
