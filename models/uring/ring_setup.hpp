#pragma once
// The application's setup of one ring: the IORING_SETUP_* flags that decide who runs its
// task_work and when, and how many CQEs each wait asks for. Checked as io_uring_setup checks them.
#include "config/scenario.hpp"
#include "models/uring/kernel_config.hpp"

namespace uringsim::models {

// How a ring's request task_work reaches its task (models/uring/tw_delivery.hpp).
enum class TwMode {
  Signal,  // the task's list, TWA_SIGNAL: a running task is kicked with an IPI
  Coop,    // COOP_TASKRUN (5.19): TWA_SIGNAL_NO_IPI, it runs at the task's next kernel entry
  Defer,   // DEFER_TASKRUN (6.1): the ring's own list, run only in io_uring_enter(GETEVENTS)
};
const char* tw_mode_name(TwMode m);

struct RingSetup {
  bool coop_taskrun = false, taskrun_flag = false, single_issuer = false, defer_taskrun = false;
  int wait_nr = 1;  // min_complete of each wait (0: the workload's own default)

  TwMode tw_mode() const {
    return defer_taskrun ? TwMode::Defer : coop_taskrun ? TwMode::Coop : TwMode::Signal;
  }
  // /workload/setup_flags and /workload/wait_nr of a workload that has them. config::InputError,
  // naming the field, for a flag the era lacks or a combination the kernel refuses (-EINVAL).
  static RingSetup from(const config::Scenario& s, const KernelConfig& k, bool sqpoll);
};

}  // namespace uringsim::models
