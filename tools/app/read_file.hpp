#pragma once
// Reading a whole input file (job files, CSVs, specs, SVGs) for the commands.
#include <filesystem>
#include <string>

namespace uringsim::app {

// The file's bytes; config::InputError "cannot read PATH: why" for a directory, a missing or
// unreadable path, or a read error.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace uringsim::app
