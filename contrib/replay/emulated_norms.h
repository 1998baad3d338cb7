// The gradient norms an emulated trainer reports to the agent
// (framework-neutral mode, pollux/agent.h GradientNorms) so that the
// agent's gradient-noise estimate equals given statistics exactly.
#ifndef POLLUX_REPLAY_EMULATED_NORMS_H
#define POLLUX_REPLAY_EMULATED_NORMS_H

#include "pollux/agent.h"
#include "pollux/efficiency.h"

namespace pollux::replay {

/// The expected squared norms of one optimizer step of a trainer whose
/// true gradient statistics are `g` (|G|^2 and tr(Sigma)/M0), on
/// `replicas` ranks at per-rank batch `atomic` x (`accum` + 1), as one
/// rank reports them (each rank reports its whole step: local_grads = 1).
/// With one replica the agent pairs steps (TwoStep): `phase` is the
/// step's phase and `kept_sqr` the sync_sqr of the kKeep step it is
/// compared with. See the derivation in emulated_norms.cc.
GradientNorms emulated_norms(const GradStats& g, double init_batch, int replicas, int atomic, int accum,
                             TwoStep phase, double kept_sqr);

}  // namespace pollux::replay

#endif  // POLLUX_REPLAY_EMULATED_NORMS_H
