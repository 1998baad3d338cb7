// The classifier on the CPU, with Eigen (see model.h).
#ifndef POLLUX_EXAMPLES_MLP_CPU_H
#define POLLUX_EXAMPLES_MLP_CPU_H

#include <memory>

#include "dataset.h"
#include "model.h"

namespace digits {

std::unique_ptr<Model> make_cpu_mlp(const Dataset& data, const Layout& layout, std::uint64_t seed);

}  // namespace digits

#endif  // POLLUX_EXAMPLES_MLP_CPU_H
