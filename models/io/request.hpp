#pragma once
// What a file sees of a request, whoever issues it: the operation, its size and result, and how the
// file reports back (an armed poll fired, an asynchronous issue completed). The kernel's kiocb and
// poll wait entry; nothing here knows io_uring, so files and devices do not depend on it.
#include <cstdint>

namespace uringsim::models {

enum class Op { Recv, Send, Read, Write, Nop };
const char* op_name(Op op);

struct IoRequest {
  Op op = Op::Nop;
  std::uint32_t bytes = 0;
  int result = 0;
  // kiocb->dio_complete (IOCB_DIO_CALLER_COMP): completion work, in cycles, the file leaves to the
  // requester's task context; 0 when the file completed everything itself.
  double caller_completion_cycles = 0;

  // The requester's side, called by the file or device:
  // IOCB_HIPRI: the requester polls for the completion (IOPOLL); the device raises no interrupt.
  virtual bool hipri() const = 0;
  // An armed poll fired (the wait entry's wake function), in the waker's context.
  virtual void poll_wake() = 0;
  // The poll stays armed after it fires (a multishot poll, without EPOLLONESHOT): the file keeps
  // the wait entry until the requester removes it (File::remove_poll).
  virtual bool poll_multishot() const { return false; }
  // ki_complete: an asynchronous issue (File::issue_async) is done, in the device's context if
  // hipri, else in the interrupt's.
  virtual void async_done() = 0;

 protected:
  // Owned and copied as the requester's own type, never through this interface.
  IoRequest() = default;
  IoRequest(const IoRequest&) = default;
  IoRequest& operator=(const IoRequest&) = default;
  ~IoRequest() = default;
};

}  // namespace uringsim::models
