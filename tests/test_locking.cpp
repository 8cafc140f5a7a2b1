// The io-wq locking designs of seed 003, checked at their call sites through the lock statistics
// of a short echo run: `global` takes wqe->lock everywhere; `split` moves the work-list sites to
// acct->lock and keeps wqe->lock for the free list and counts.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace testing;

namespace {
nlohmann::json run_lock_design(const std::string& design) {
  return run_results("lock-" + design, source_path("scenarios/seeds/async-hybrid.json") +
                                           " --variant hybrid --set warmup_ms=20 --set duration_ms=30"
                                           " --set kernel.iowq.max_unbound=4 --set kernel.iowq.lock=" +
                                           design);
}
long acquisitions(const nlohmann::json& locks, const std::string& lock, const std::string& site) {
  if (!locks.contains(lock) || !locks[lock]["sites"].contains(site)) return 0;
  return locks[lock]["sites"][site]["acquisitions"].get<long>();
}
}  // namespace

TEST_CASE("locking: the global design takes wqe->lock at every listed site") {
  const auto locks = run_lock_design("global")["locks"];
  for (const char* site :
       {"io_wqe_enqueue", "io_wqe_worker", "io_worker_handle_work", "io_wq_worker_sleeping"})
    CHECK(acquisitions(locks, "wqe->lock", site) > 0);
  CHECK_FALSE(locks.contains("acct->lock[unbound]"));
}

TEST_CASE("locking: the split design moves the work-list sites to acct->lock") {
  const auto locks = run_lock_design("split")["locks"];
  const std::string acct = "acct->lock[unbound]";
  for (const char* site : {"io_wqe_enqueue", "io_wqe_worker", "io_worker_handle_work", "io_wqe_dec_running"})
    CHECK(acquisitions(locks, acct, site) > 0);
  // The sleep hook no longer takes wqe->lock; the work list is no longer read under it.
  CHECK(acquisitions(locks, "wqe->lock", "io_wq_worker_sleeping") == 0);
  CHECK(acquisitions(locks, "wqe->lock", "io_worker_handle_work") == 0);
  CHECK(acquisitions(locks, "wqe->lock", "io_wqe_dec_running") == 0);
  // What stays under wqe->lock: activating a free worker on enqueue, busy/idle bookkeeping.
  CHECK(acquisitions(locks, "wqe->lock", "io_wqe_enqueue") > 0);
  CHECK(acquisitions(locks, "wqe->lock", "__io_worker_busy") > 0);
  CHECK(acquisitions(locks, "wqe->lock", "io_wqe_worker") > 0);
}

TEST_CASE("locking: the profile accounts lock spinning to the slow-path symbol and sums to 100 %") {
  const auto r = run_lock_design("global");
  const auto& p = r["profile"];
  double sum = 0, slow = 0;
  for (const auto& e : p["entries"]) {
    sum += e["pct"].get<double>();
    if (e["symbol"] == "native_queued_spin_lock_slowpath") slow += e["pct"].get<double>();
  }
  CHECK(sum == Approx(100.0).epsilon(1e-6));
  CHECK(slow == Approx(p["spin_slowpath_pct"].get<double>()));
  CHECK(slow > 0);  // 4 workers and the submitter do contend on wqe->lock
  CHECK(r["locks"]["wqe->lock"]["contended"].get<long>() > 0);
}

namespace {
nlohmann::json run_seed_003(const std::string& variant, const std::string& extra = "") {
  return run_results("seed003-" + variant, source_path("scenarios/seeds/iowq-lock-split.json") +
                                               " --variant " + variant + " " + extra);
}
}  // namespace

TEST_CASE("locking: seed 003's split cuts the spin share by the seed's proportion") {
  // Not fitted: the line counts are read from io-wq.c and the transfer cost is the published one.
  // The seed's own 150 ms: in shorter windows the global design's share swings by several points
  // with the order of simultaneous lock attempts (64 CPUs contending).
  // Since the CPU scheduler, both shares sit above the seed's bands (global 34.5-37.5 %, split
  // 21.4 %): docs/calibration.md says why. What the split does to them is the seed's finding.
  const double global = run_seed_003("global")["profile"]["spin_slowpath_pct"].get<double>();
  const double split = run_seed_003("split")["profile"]["spin_slowpath_pct"].get<double>();
  CHECK(global >= 30.0);
  CHECK(split >= 17.0);
  CHECK(split / global >= 0.55);  // seed: 21.4 / 34.5 = 0.62, 21.4 / 37.5 = 0.57
  CHECK(split / global <= 0.72);
  // Without the data lines that move with the lock, the sections are too short to contend much.
  const double no_lines =
      run_seed_003(
          "global",
          "--set costs.iowq_list_lines=0 --set costs.iowq_free_list_lines=0 --set costs.iowq_count_lines=0")
          ["profile"]["spin_slowpath_pct"]
              .get<double>();
  CHECK(no_lines < global / 2);
}

namespace {
// Three injected fatal worker-creation failures at the start of the NOP loop, counted from time 0.
nlohmann::json run_create_failures(const std::string& design) {
  return run_results("lock-cancel-" + design,
                     source_path("scenarios/validation/iowq-nop.json") + " --variant " + design +
                         " --set warmup_ms=0 --set duration_ms=2 "
                         "--set 'kernel.iowq.create_errors=[\"enomem\",\"enomem\",\"enomem\"]'");
}
}  // namespace

TEST_CASE("locking: a failed worker creation takes the queued work back under the design's list lock") {
  // No worker exists while the first three creations fail, so each enqueue cancels its own NOP.
  const auto g = run_create_failures("global");
  CHECK(g["iowq"]["bound"]["create_failed"].get<int>() == 3);
  CHECK(g["iowq"]["bound"]["cancelled"].get<int>() == 3);
  CHECK(g["nop"]["failed"].get<int>() == 3);
  const auto& rq = g["requests"];
  CHECK(rq["failed"].get<long>() == 3);
  CHECK(rq["submitted"].get<long>() ==
        rq["completed"].get<long>() + rq["failed"].get<long>() + rq["in_flight_at_end"].get<long>());
  // Global: the roll-back and the cancel are under wqe->lock; every creation, failed or not,
  // takes it at create_io_worker.
  const auto& gl = g["locks"];
  CHECK(acquisitions(gl, "wqe->lock", "create_io_worker") == 3 + g["iowq"]["bound"]["created"].get<long>());
  CHECK(acquisitions(gl, "wqe->lock", "io_acct_cancel_pending_work") == 0);
  CHECK_FALSE(gl.contains("acct->lock[bound]"));

  // Split: the work list is searched under acct->lock, nested in wqe->lock.
  const auto s = run_create_failures("split");
  CHECK(s["iowq"]["bound"]["cancelled"].get<int>() == 3);
  CHECK(acquisitions(s["locks"], "acct->lock[bound]", "io_acct_cancel_pending_work") == 3);
  CHECK(acquisitions(s["locks"], "wqe->lock", "io_acct_cancel_pending_work") == 0);
  CHECK(s["checks"]["violations"].empty());
}

TEST_CASE(
    "locking: a retried creation that finally fails cancels all queued work, under each design's locks") {
  // One bound worker at most. The first creation fails with -EAGAIN and is retried from task_work,
  // fails again, then fatally: with no worker left, the ten NOPs queued meanwhile are cancelled.
  const std::string args =
      " --set warmup_ms=0 --set duration_ms=2 --set kernel.iowq.max_bound=1 "
      "--set 'kernel.iowq.create_errors=[\"eagain\",\"eagain\",\"enomem\"]'";
  const auto g = run_results("lock-cont-global",
                             source_path("scenarios/validation/iowq-nop.json") + " --variant global" + args);
  const auto& b = g["iowq"]["bound"];
  CHECK(b["create_failed"].get<int>() == 3);
  CHECK(b["create_retries"].get<int>() == 2);
  CHECK(b["cancelled"].get<int>() == 10);
  CHECK(g["requests"]["failed"].get<int>() == 10);
  CHECK(b["created"].get<int>() == 1);  // the next batch's creation succeeds
  // Global: wqe->lock once, then again after each of the ten cancels.
  CHECK(acquisitions(g["locks"], "wqe->lock", "create_worker_cont") == 11);

  const auto s = run_results("lock-cont-split",
                             source_path("scenarios/validation/iowq-nop.json") + " --variant split" + args);
  CHECK(s["iowq"]["bound"]["cancelled"].get<int>() == 10);
  // Split: wqe->lock once for the roll-back; each cancel (and the final empty look) under acct->lock.
  CHECK(acquisitions(s["locks"], "wqe->lock", "create_worker_cont") == 1);
  CHECK(acquisitions(s["locks"], "acct->lock[bound]", "io_acct_cancel_pending_work") == 11);
}
