#include "tools/app/read_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/input_error.hpp"

namespace uringsim::app {

std::string read_text_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw config::InputError("cannot read " + name + ": is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw config::InputError("cannot read " + name + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw config::InputError("cannot read " + name + ": read error");
  return ss.str();
}

}  // namespace uringsim::app
