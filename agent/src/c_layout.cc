// pollux_agent_struct_layout (pollux/agent_c.h): the C structs' layout as
// this library was compiled, from the same field lists that declare them,
// for bindings to check their own declarations against.
#include "pollux/agent_c.h"

#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>

namespace {

template <typename T>
constexpr char kind() {
  if constexpr (std::is_same_v<T, double>) return 'd';
  else if constexpr (std::is_same_v<T, int>) return 'i';
  else if constexpr (std::is_same_v<T, long long>) return 'q';
  else if constexpr (std::is_class_v<T>) return 's';  // a struct of agent_c.h, itself reported
  else {
    static_assert(std::is_pointer_v<T>, "a C struct field of a kind the layout report does not name");
    return 'p';
  }
}

std::string entry(const char* name, char k, std::size_t offset, std::size_t size) {
  return std::string(";") + name + ":" + k + ":" + std::to_string(offset) + ":" + std::to_string(size);
}

#define POLLUX_LAYOUT_FIELD(type, name) out += entry(#name, kind<type>(), offsetof(Struct, name), sizeof(type));
#define POLLUX_LAYOUT_OPTION(type, name, member, env, read, lo, hi) POLLUX_LAYOUT_FIELD(type, name)
#define POLLUX_LAYOUT_AS(S, FIELDS, FIELD)          \
  [] {                                              \
    using Struct = S;                               \
    std::string out = std::to_string(sizeof(S));    \
    FIELDS(FIELD)                                   \
    return out;                                     \
  }()
#define POLLUX_LAYOUT(S, FIELDS) POLLUX_LAYOUT_AS(S, FIELDS, POLLUX_LAYOUT_FIELD)

struct Layout {
  const char* name;
  std::string text;
};

const Layout kLayouts[] = {
    {"pollux_agent_options", POLLUX_LAYOUT_AS(pollux_agent_options, POLLUX_AGENT_OPTIONS_FIELDS, POLLUX_LAYOUT_OPTION)},
    {"pollux_communicator", POLLUX_LAYOUT(pollux_communicator, POLLUX_COMMUNICATOR_FIELDS)},
    {"pollux_gradient_norms", POLLUX_LAYOUT(pollux_gradient_norms, POLLUX_GRADIENT_NORMS_FIELDS)},
    {"pollux_profile_sample", POLLUX_LAYOUT(pollux_profile_sample, POLLUX_PROFILE_SAMPLE_FIELDS)},
    {"pollux_step_measurement", POLLUX_LAYOUT(pollux_step_measurement, POLLUX_STEP_MEASUREMENT_FIELDS)},
};

}  // namespace

extern "C" const char* pollux_agent_struct_layout(const char* name) {
  if (name == nullptr) return nullptr;
  for (const Layout& l : kLayouts)
    if (std::strcmp(l.name, name) == 0) return l.text.c_str();
  return nullptr;
}
