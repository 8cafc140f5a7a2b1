// The poll re-issue rules (models/uring/poll_reissue.hpp) where sockets never reach them: a poll
// armed after -EAGAIN that is already ready (the data came in between). 5.15 issues it again at
// once; 5.16+ through task_work, whatever kernel.forced_reissue says for a request without
// IOSQE_ASYNC. The machine runs at 1 GHz; only tw_run costs (50 cycles).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "uring_fixture.hpp"

using namespace uringsim;
using namespace uringsim::models;
using uringsim::test::SeenCqe;
using uringsim::test::UringWorld;

namespace {
// A pollable file whose data arrives just after the first non-blocking attempt fails, so the
// poll armed next finds it ready.
class RacyFile final : public File {
 public:
  int attempts() const { return attempts_; }
  bool pollable() const override { return true; }
  bool try_issue(IoRequest& req) override {
    if (attempts_++ == 0) {
      arrived_ = true;
      return false;
    }
    req.result = static_cast<int>(req.bytes);
    return true;
  }
  void issue_blocking(IoRequest&, BlockHooks*) override {
    throw std::logic_error("RacyFile: no blocking issue");
  }
  bool poll_ready(const IoRequest&) const override { return arrived_; }
  void add_poll(IoRequest&) override {
    throw std::logic_error("RacyFile: the poll is ready, nothing to wait for");
  }

 private:
  int attempts_ = 0;
  bool arrived_ = false;
};

struct Outcome {
  std::vector<SeenCqe> seen;
  UringStats stats;
  std::uint64_t tw_items = 0;
  int attempts = 0;
};

// One recv (user_data 5, 64 bytes) on a RacyFile, submitted and waited for by the application.
Outcome found_ready(ApollReady ready, bool forced_reissue_iowq) {
  KernelConfig k = test::test_kernel();
  k.apoll_ready = ready;
  k.forced_reissue_iowq = forced_reissue_iowq;
  UringCosts uc = test::zero_uring_costs();
  uc.tw_run = 50;
  UringWorld w(2, sim::PrimitiveCosts{}, k, uc);
  RacyFile file;
  Outcome out;
  w.spawn_app([&] {
    std::vector<Request*> sqes{&w.request(Op::Recv, file, 5, 64, false)};
    w.ctx.enter(sqes, 1);
    w.reap(out.seen);
  });
  w.engine.run_until_ns(1e6);
  out.stats = w.ctx.stats();
  out.tw_items = w.task.items_run();
  out.attempts = file.attempts();
  return out;
}

void check_completed(const Outcome& r) {
  REQUIRE(r.seen.size() == 1);
  CHECK(r.seen[0].user_data == 5);
  CHECK(r.seen[0].result == 64);
  CHECK(r.attempts == 2);
  CHECK(r.stats.poll_ready_at_arm == 1);
  CHECK(r.stats.poll_armed == 0);
  CHECK(r.stats.inline_completed == 1);
  CHECK(r.stats.punted == 0);
  CHECK(r.stats.reissued_to_iowq == 0);
}
}  // namespace

TEST_CASE("reissue: 5.15 issues a poll found ready again at once, in the submit loop") {
  const Outcome r = found_ready(ApollReady::Inline, false);
  check_completed(r);
  CHECK(r.tw_items == 0);
  CHECK(r.seen[0].t == Approx(0.0));
}

TEST_CASE("reissue: 5.16 issues a poll found ready again through the submitter's task_work") {
  const Outcome r = found_ready(ApollReady::TaskWork, false);
  check_completed(r);
  CHECK(r.tw_items == 1);
  CHECK(r.seen[0].t == Approx(50.0));  // after one task_work item (tw_run)
}

TEST_CASE(
    "reissue: 6.3's rule sends only IOSQE_ASYNC requests to io-wq: a plain one found ready goes through "
    "task_work") {
  const Outcome r = found_ready(ApollReady::TaskWork, true);
  check_completed(r);
  CHECK(r.tw_items == 1);
  CHECK(r.seen[0].t == Approx(50.0));
}

TEST_CASE("reissue: apoll_ready=inline with forced_reissue=iowq still issues a poll found ready at once") {
  const Outcome r = found_ready(ApollReady::Inline, true);
  check_completed(r);
  CHECK(r.tw_items == 0);
  CHECK(r.seen[0].t == Approx(0.0));
}
