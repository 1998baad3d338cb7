// Framework-neutral mode: steady-clock timing of the boundaries the
// application marks, and the norms it reports in place of a buffer; or
// (synchronized_late()) the application's own record of the previous step,
// measured on its device.
#include "external_backend.h"

#include "host_step_record.h"

namespace pollux::agent_detail {
namespace {

class External final : public ExternalBackend {
 public:
  void micro_begin() override { record_.micro_begin(); }

  // The buffer is empty in this mode: the norms come with stage().
  void micro_end(const GradientBuffer&, bool) override { record_.micro_end(); }

  void stage(const GradientNorms& n) override { staged_ = n; }

  // The application's own record of the previous step replaces the clock's:
  // take_record() returns it, and this step's comes with the next call.
  void stage_previous(const StepRecord& previous) override {
    record_.hand_over(previous);
    late_ = true;
  }

  void synchronize(GradientBuffer&, int, TwoStep two_step, Communicator&) override {
    if (late_) {
      late_ = false;
      record_.reset();
      staged_ = GradientNorms{};
      return;
    }
    StepRecord& cur = record_.current();
    cur.local_sqr_sum = staged_.local_sqr;
    cur.local_grads = staged_.local_grads;
    cur.sync_sqr = staged_.sync_sqr;
    if (two_step == TwoStep::kCompare && staged_.has_prev) {
      cur.has_prev = true;
      cur.prev_sqr = staged_.prev_sqr;
      cur.dot_prev = staged_.dot_prev;
    }
    record_.finish();
    staged_ = GradientNorms{};
  }

  StepRecord take_record() override { return record_.take(); }

  void reset() override {
    record_.reset();
    late_ = false;
  }

 private:
  HostStepRecord record_;
  GradientNorms staged_;
  bool late_ = false;
};

}  // namespace

std::unique_ptr<ExternalBackend> make_external_backend() { return std::make_unique<External>(); }

}  // namespace pollux::agent_detail
