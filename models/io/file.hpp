#pragma once
// Files a request can target. A file is pollable (sockets) or not (regular files). Issue attempts
// run in the caller's context and charge their CPU there; the file reports back through the
// request (models/io/request.hpp), never to a particular requester.
#include <cstdint>

#include "models/io/request.hpp"

namespace uringsim::models {

// Called around a sleep inside a blocking issue: the scheduler hooks an io-wq worker gets
// (io_wq_worker_sleeping / io_wq_worker_running).
class BlockHooks {
 public:
  virtual ~BlockHooks() = default;
  virtual void before_block() = 0;
  virtual void after_block() = 0;
};

class File {
 public:
  virtual ~File() = default;
  virtual bool pollable() const = 0;
  // io-wq hashing key for hashed work (an inode); 0 = not hashed.
  virtual std::uint32_t hash_key(Op op) const { return 0; }
  // Asynchronous issue (block devices with O_DIRECT): true if the request was handed to a device
  // and will complete later through req.async_done() (-EIOCBQUEUED); false to go on with try_issue.
  virtual bool issue_async(IoRequest& req) { return false; }
  // Non-blocking attempt (IO_URING_F_NONBLOCK): true if it completed (req.result set),
  // false for -EAGAIN.
  virtual bool try_issue(IoRequest& req) = 0;
  // Blocking issue: may sleep (calling hooks around the sleep), always completes.
  virtual void issue_blocking(IoRequest& req, BlockHooks* hooks) = 0;
  // Async poll: true if the event is ready now; otherwise registers req, whose poll_wake() the
  // event calls.
  virtual bool poll_ready(const IoRequest& req) const = 0;
  virtual void add_poll(IoRequest& req) = 0;
  // io_poll_remove_entries: a multishot poll's requester is done with it. Files that never hold a
  // poll (not pollable) have nothing to remove.
  virtual void remove_poll(IoRequest& req) {}
};

}  // namespace uringsim::models
