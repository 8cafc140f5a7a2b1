#pragma once
// From the micro-benchmarks' figures to cost table entries: each entry's value, with the
// arithmetic (what other entries it subtracts) in its method. Pure: no kernel, unit-testable.
#include <optional>

#include "config/calibration.hpp"
#include "host/calibrate_measurements.hpp"
#include "host/machine_info.hpp"

namespace uringsim::host::calib {

// Uncontended spinlock sections (or atomics of the same cost) the model runs per IOSQE_ASYNC NOP
// beyond an inline one, in a batch worked through by one io-wq worker, with era 6.x's io-wq
// locking (the host's kernel): 1 in the submitter (the work list at enqueue; since 6.6 the free
// worker is found under RCU), 4 in the worker (the list at get_work, the worker list at
// __io_worker_busy, the completion_lock, and the llist_add of the task_work that frees the
// request, an atomic on tctx->task_list). Counted from `uringsim run --locks` and results.json's
// `atomics`; tests/test_calibrate.cpp checks it against the model.
inline constexpr int kIowqSpinSectionsPerItem = 5;
// The same for an IOSQE_ASYNC NOP queued while the one worker is busy (calibrate_iowq.cpp's
// fsync-held worker): acct->lock at the enqueue, and acct->workers_lock where io_wq_enqueue, finding
// no free worker, tries to create one and stops at max_workers.
inline constexpr int kIowqQueuedSpinSections = 2;

// Whether the stalls calibrate measured can be a scenario's machine.stall_lengths: within the
// schema's bounds. Beyond them the spinning threads lost their CPUs to other processes, and the
// calibration leaves the stalls out (the scenario's stay).
bool stalls_usable(const StallProbe& stalls);

// Wake-up packing's threshold (machine.wake_pack_util) from calibrate_pack.cpp's sweep: in each
// case, the waker's busy share at which the share of wake-ups kept on its CPU falls through one
// half, linear between rungs in the order of the asked shares (0 if under a half at the lowest
// rung: no packing; the highest rung's busy share if never); the mean of the two cases. nullopt
// when the sweep did not run.
std::optional<double> wake_pack_util(const Measurements& m);

// Every key of the cost table ends up in `costs` or in `defaults_kept` with its reason.
config::Calibration derive_calibration(const Measurements& m, const MachineInfo& machine, bool quick);

}  // namespace uringsim::host::calib
