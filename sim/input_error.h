// Errors in the simulator's inputs (command line, workloads, traces).
//
// Every bad input ends the program with exit status 2 and one line that
// names what was wrong and where ("FILE:LINE: ..."). Code that reads input
// throws InputError; main() turns it into that line.
#ifndef POLLUX_SIM_INPUT_ERROR_H
#define POLLUX_SIM_INPUT_ERROR_H

#include <stdexcept>
#include <string>

namespace pollux::sim {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
  /// "FILE:LINE: what" (LINE counts from 1; 0 = the file as a whole).
  InputError(const std::string& file, int line, const std::string& what)
      : std::runtime_error(line > 0 ? file + ":" + std::to_string(line) + ": " + what : file + ": " + what) {}
};

/// Exit status for bad input (and bad usage).
inline constexpr int kExitBadInput = 2;

}  // namespace pollux::sim

#endif  // POLLUX_SIM_INPUT_ERROR_H
