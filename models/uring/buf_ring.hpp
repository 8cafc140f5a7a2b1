#pragma once
// A provided buffer ring (IORING_REGISTER_PBUF_RING, 5.19; struct io_buffer_list with a mapped
// ring): user space adds buffer ids at the tail, the kernel takes them from the head. A selection
// (io_ring_buffer_select) only peeks at the head; the buffer is consumed when the request that took
// it posts its CQE (io_kbuf_commit), so a receive that gets -EAGAIN leaves it in the ring. The
// ring is protected by uring_lock: only the ring's issue paths select from it.
#include <cstdint>
#include <optional>
#include <vector>

namespace uringsim::models {

class BufRing {
 public:
  // `entries`: the ring's size, a power of two (as the kernel requires); the ring starts empty.
  explicit BufRing(int entries);

  int entries() const { return static_cast<int>(slots_.size()); }
  int available() const { return static_cast<int>(tail_ - head_); }

  // --- kernel side ---
  // The buffer at the head, or nothing when the ring is empty (-ENOBUFS).
  std::optional<std::uint16_t> peek() const;
  void commit();  // the peeked buffer is used: the head moves past it

  // --- user space ---
  // io_uring_buf_ring_add + io_uring_buf_ring_advance: buffer `bid` is the kernel's again.
  // std::logic_error if the ring already holds `entries` buffers.
  void give_back(std::uint16_t bid);

 private:
  std::vector<std::uint16_t> slots_;
  std::uint32_t head_ = 0, tail_ = 0;  // free-running, as the kernel's; masked on access
};

}  // namespace uringsim::models
