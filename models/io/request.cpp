#include "models/io/request.hpp"

namespace uringsim::models {

const char* op_name(Op op) {
  switch (op) {
    case Op::Recv:
      return "recv";
    case Op::Send:
      return "send";
    case Op::Read:
      return "read";
    case Op::Write:
      return "write";
    case Op::Nop:
      return "nop";
  }
  return "?";
}

}  // namespace uringsim::models
