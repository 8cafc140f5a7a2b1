#pragma once
// The echo workload's parameters (scenario `workload`, type "echo"), read and checked once.
#include <cstdint>
#include <vector>

#include "config/scenario.hpp"
#include "models/distribution.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/ring_setup.hpp"

namespace uringsim::models {

struct EchoParams {
  KernelConfig kernel;       // the server's ring
  RingSetup setup;           // its setup flags and wait_nr
  bool multishot = false;    // recv_mode "multishot": one IORING_RECV_MULTISHOT recv per connection
  int buf_ring_entries = 0;  // buffers of the provided buffer ring (multishot)
  int connections = 0;
  std::uint32_t msg_bytes = 0;
  bool force_async = false, fixed_files = false;
  bool local_clients = false;  // client_placement "local": clients on this machine's CPUs
  double server_work_cycles = 0;
  int server_nice = 0;
  int client_threads = 0;
  int server_cpu = -1;           // -1 = not pinned (CPU 0 in this model)
  std::vector<int> client_cpus;  // empty = not pinned (the last cores)
  std::uint64_t seed = 0;
  Distribution think;

  // config::InputError for a CPU at or above machine.cores.
  static EchoParams from(const config::Scenario& s);
};

}  // namespace uringsim::models
