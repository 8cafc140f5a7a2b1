#include "models/uring/buf_ring.hpp"

#include <stdexcept>
#include <string>

namespace uringsim::models {

BufRing::BufRing(int entries) {
  if (entries <= 0 || (entries & (entries - 1)) != 0)
    throw std::invalid_argument("buffer ring: entries must be a power of two, got " +
                                std::to_string(entries));
  slots_.resize(static_cast<std::size_t>(entries));
}

std::optional<std::uint16_t> BufRing::peek() const {
  if (head_ == tail_) return std::nullopt;
  return slots_[head_ & (slots_.size() - 1)];
}

void BufRing::commit() {
  if (head_ == tail_) throw std::logic_error("buffer ring: commit on an empty ring");
  ++head_;
}

void BufRing::give_back(std::uint16_t bid) {
  if (tail_ - head_ >= slots_.size())
    throw std::logic_error("buffer ring: a buffer given back to a full ring (given twice?)");
  slots_[tail_ & (slots_.size() - 1)] = bid;
  ++tail_;
}

}  // namespace uringsim::models
