// The per-step packet: one small vector every rank contributes to a SUM
// all-reduce that overlaps the gradient all-reduce. It carries the previous
// step's measurements (so that a GPU backend never has to wait for the
// current step's), the resize flag raised by the scheduler's signal, and
// rank 0's checkpoint and batch-size decisions. All ranks thus see the same
// numbers and take the same decisions at the same step boundary, without
// any extra collective.
#ifndef POLLUX_AGENT_STEP_PACKET_H
#define POLLUX_AGENT_STEP_PACKET_H

namespace pollux::agent_detail {

enum Packet {
  kResize,       // ranks that saw the resize signal
  kValid,        // ranks with a valid record of the previous step
  kLocalSqr,     // sum of |local micro-gradient|^2
  kMicroSteps,   // micro-steps in the step (R * (s + 1))
  kLocalGrads,   // local gradients kLocalSqr sums (R * (s + 1), or R in the framework-neutral mode)
  kGradTime,     // sum of micro-step seconds
  kStepTime,     // sum over ranks of the step's seconds
  kCheckpoint,   // rank 0: 1 if a periodic checkpoint is due
  kPropose,      // rank 0: 1 if a new configuration follows
  kAtomic,
  kAccum,
  kPacketSize
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_STEP_PACKET_H
