// The step backend of the framework-neutral mode: the framework owns and
// all-reduces the gradients; this backend only times the step boundaries
// and carries the squared norms the application reports (GradientNorms).
#ifndef POLLUX_AGENT_EXTERNAL_BACKEND_H
#define POLLUX_AGENT_EXTERNAL_BACKEND_H

#include <memory>

#include "pollux/agent_backend.h"

namespace pollux::agent_detail {

class ExternalBackend : public StepBackend {
 public:
  /// The norms the next synchronize() records (validated by the agent).
  virtual void stage(const GradientNorms& norms) = 0;
  /// The previous step's record as the application measured it (a step
  /// late): the next take_record() returns it, and the next synchronize()
  /// records nothing of its own.
  virtual void stage_previous(const StepRecord& previous) = 0;
};

std::unique_ptr<ExternalBackend> make_external_backend();

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_EXTERNAL_BACKEND_H
