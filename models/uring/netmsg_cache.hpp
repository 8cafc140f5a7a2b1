#pragma once
// The ring's cache of net async headers (ctx->netmsg_cache, an io_alloc_cache; 6.10+): a send's
// or recv's prep takes its struct io_async_msghdr from here, or kmallocs one when it is empty. An
// issue under uring_lock puts the header back (io_netmsg_recycle), up to the cache's size; io-wq's
// issue cannot (IO_URING_F_UNLOCKED), and the header is kfree'd when the request is freed.
namespace uringsim::models {

class NetMsgCache {
 public:
  static constexpr int kMax = 128;  // IO_ALLOC_CACHE_MAX
  bool take() {
    if (n_ == 0) return false;
    --n_;
    return true;
  }
  bool put() {
    if (n_ >= kMax) return false;
    ++n_;
    return true;
  }
  int size() const { return n_; }

 private:
  int n_ = 0;
};

}  // namespace uringsim::models
