// SPDX-License-Identifier: GPL-2.0-or-later
// job_submit/pollux: the companion of sched/pollux (JobSubmitPlugins=pollux).
//
// job_submit(): holds every elastic job (rules: sched/elastic.h) at
// submission, before slurmctld's main loop could start it at a size of its
// own choosing; sched/pollux releases it at the size the policy decides.
// job_modify(): keeps that promise afterwards: only sched/pollux (and
// SlurmUser/root) may release a Pollux hold or change an elastic job's
// size; an administrator's own hold (scontrol hold) is recorded as theirs,
// so that sched/pollux leaves the job alone until they release it.
// Does nothing unless SchedulerType=sched/pollux. Keeps no state of its
// own, so hooks that slurmctld runs concurrently (23.02+) share nothing
// mutable; refusals reach the user through err_msg (compat_job_submit.h).
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "common/compat_job_submit.h"
#include "common/job_record.h"
#include "common/slurm_api.h"
#include "common/submit_fit.h"
#include "sched/job_transitions.h"

#define POLLUX_EXPORT __attribute__((visibility("default")))

namespace {

bool pollux_scheduler() { return xstrcmp(slurm_conf.schedtype, "sched/pollux") == 0; }

// The state of an elastic job adopted before sched/pollux's first round
// saw it: held, waiting for GPUs, since now.
pollux::sched::JobState adopted(const job_record_t* job) {
  using namespace pollux::sched;
  const auto now = static_cast<double>(time(nullptr));
  return adopted_state(*classify(shape_of(job)), now,
                       job->details != nullptr ? static_cast<double>(job->details->submit_time) : now, Why::kWait);
}

bool changes_size(const job_desc_msg_t* d) {
  return d->min_nodes != NO_VAL || d->max_nodes != NO_VAL || d->num_tasks != NO_VAL ||
         d->ntasks_per_node != NO_VAL16 || d->tres_per_node != nullptr || d->tres_per_job != nullptr ||
         (d->tres_per_task != nullptr && pollux::sched::asks_beyond_cpus(d->tres_per_task)) ||
         d->tres_per_socket != nullptr || d->req_nodes != nullptr ||
         d->exc_nodes != nullptr;
}

// A range as users are told it: "1-4 nodes x <= 4 GPUs per node".
std::string range_words(const pollux::sched::ElasticRange& range) {
  return std::to_string(range.min_nodes) + "-" + std::to_string(range.max_nodes) + " nodes x <= " +
         std::to_string(range.gpus_per_node) + " GPUs per node";
}

// What the submitter is told (sbatch prints it: "sbatch: elastic job: ..."):
// whether sched/pollux sizes the job, and if not, why, for every job that
// asks for GPUs or a node range (the jobs that may have been meant elastic).
void tell_user(const pollux::sched::JobShape& shape, const std::optional<pollux::sched::ElasticRange>& range,
               const std::string& why, const std::string& note, char** err_msg) {
  if (err_msg == nullptr || *err_msg != nullptr) return;  // never hide another plugin's message
  std::string text;
  if (range) {
    text = "elastic job: " + range_words(*range) +
           ", sized by sched/pollux when it starts (held until it gives the job GPUs); resized "
           "while it runs only once its program's agent listens for resizes (SystemComment kind=elastic), else "
           "left at that size (kind=moldable)" + note;
  } else {
    const bool gpus = !shape.tres_per_node.empty() || !shape.tres_per_job.empty() ||
                      pollux::sched::asks_beyond_cpus(shape.tres_per_task) || !shape.tres_per_socket.empty();
    const bool node_range = shape.min_nodes >= 1 && shape.max_nodes > shape.min_nodes &&
                            shape.max_nodes <= pollux::sched::kMaxNodes;
    if (!gpus && !node_range) return;
    text = "rigid job (Slurm sizes it as asked, sched/pollux does not resize it): " + why;
  }
  *err_msg = xstrdup(text.c_str());
}

int submit(job_desc_msg_t* desc, uint32_t uid, char** err_msg) {
  if (!pollux_scheduler()) return SLURM_SUCCESS;
  // A partition Slurm refuses (it checks that first, after this plugin):
  // nothing said, nothing changed, so that Slurm's refusal comes alone.
  if (pollux::sched::slurm_refuses_partition(desc)) return SLURM_SUCCESS;
  std::string why;
  const pollux::sched::JobShape shape = pollux::sched::shape_of(desc);
  const auto range = pollux::sched::classify(shape, &why);
  // --no-kill would have Slurm keep an elastic job running on the nodes
  // left when one fails, its step short of the ranks that were there; it
  // is requeued instead and placed afresh on nodes that work, where its
  // agent resumes from its last checkpoint (a program without an agent
  // starts over: sched/pollux: requeued_by_others()).
  // What Slurm refuses at sbatch for a rigid job (no node could ever hold
  // it) it would refuse for this one at its smallest size: refused alike,
  // in Slurm's words, rather than held for ever.
  // Slurm's own refusals after this plugin (unknown features, too many
  // nodes) would be worded by the message below: an elastic job is refused
  // here in Slurm's words, and a rigid one gets no message, so that
  // Slurm's reach the user.
  const int fewest = range ? range->min_nodes : static_cast<int>(desc->min_nodes == NO_VAL ? 1 : desc->min_nodes);
  const auto create_refusal = pollux::sched::slurm_create_refusal(desc, fewest);
  if (create_refusal && !range) return SLURM_SUCCESS;
  if (range) {
    auto refusal = create_refusal ? create_refusal : pollux::sched::smallest_size_refusal(desc, range->min_nodes);
    if (refusal) {
      info("job_submit/pollux: elastic job from uid %u refused: %s (its smallest size, %d node(s) x 1 GPU)", uid,
           refusal->message.c_str(), range->min_nodes);
      if (err_msg != nullptr) {
        xfree(*err_msg);
        *err_msg = xstrdup(refusal->message.c_str());
      }
      return refusal->rc;
    }
  }
  const bool no_kill = range && desc->kill_on_node_fail == 0;
  tell_user(shape, range, why,
            no_kill ? "; --no-kill ignored: requeued when a node fails, to restart from its last checkpoint "
                      "(from the beginning if its program runs no agent)"
                    : "",
            err_msg);
  if (!range) {
    debug("job_submit/pollux: rigid job from uid %u: %s", uid, why.c_str());
    return SLURM_SUCCESS;
  }
  if (no_kill) desc->kill_on_node_fail = 1;
  desc->priority = 0;  // released by sched/pollux at its decided size
  debug("job_submit/pollux: elastic job from uid %u (-N %d-%d, up to %d GPUs per node): held until sched/pollux "
        "sizes it", uid, range->min_nodes, range->max_nodes, range->gpus_per_node);
  return SLURM_SUCCESS;
}

// Refuses a modification: one log line, and the same text to the user
// (err_msg, 23.02+: scontrol prints "scontrol: error: TEXT" before rc's
// own words). 22.05 passes no err_msg: the user sees rc's words alone
// ("... for job N"), so rc is the Slurm error that says most.
int refuse(char** err_msg, const std::string& why, int rc) {
  info("job_submit/pollux: %s", why.c_str());
  if (err_msg != nullptr) {
    xfree(*err_msg);
    *err_msg = xstrdup(why.c_str());
  }
  return rc;
}

// An administrator's size update (NumNodes, TresPerNode) on an elastic job
// becomes its range, which sched/pollux keeps to from its next round: the
// update's own size fields are taken out, so that Slurm neither sets a size
// of its own on a pending job nor shrinks a running one under its ranks
// (sched/pollux resizes it through a checkpoint instead).
int adopt_range_update(job_desc_msg_t* desc, job_record_t* job, uint32_t uid, char** err_msg) {
  using namespace pollux::sched;
  std::optional<JobState> state = pollux_state(job);
  if (!state) state = adopted(job);  // not adopted yet
  std::string why;
  const auto range = updated_range(state->range, desc->min_nodes, desc->max_nodes,
                                   desc->tres_per_node != nullptr ? desc->tres_per_node : "", &why);
  if (!range) {
    return refuse(err_msg,
                  "JobId=" + std::to_string(job->job_id) + ": size update by uid " + std::to_string(uid) + " refused: " + why,
                  ESLURM_INVALID_NODE_COUNT);
  }
  if (desc->req_nodes != nullptr || desc->tres_per_job != nullptr ||
      (desc->tres_per_task != nullptr && pollux::sched::asks_beyond_cpus(desc->tres_per_task)) ||
      desc->tres_per_socket != nullptr) {
    return refuse(err_msg, "JobId=" + std::to_string(job->job_id) + ": size update by uid " + std::to_string(uid) +
                               " refused: sched/pollux chooses an elastic job's nodes and gives GPUs per node "
                               "(set NumNodes=MIN-MAX or TresPerNode=gres:gpu:G)",
                  ESLURM_ACCESS_DENIED);
  }
  info("job_submit/pollux: JobId=%u: uid %u set its range to %s (was %s): sched/pollux sizes it within it",
       job->job_id, uid, format_range(*range).c_str(), format_range(state->range).c_str());
  state->range = *range;
  set_string(&job->system_comment, format_comment(JobView{}, *state));
  desc->min_nodes = desc->max_nodes = desc->num_tasks = NO_VAL;
  desc->ntasks_per_node = NO_VAL16;
  xfree(desc->tres_per_node);
  last_job_update = time(nullptr);
  return SLURM_SUCCESS;
}

// A time limit update on an elastic job sets its whole-life limit (Slurm's
// own counts per run, and each requeue would restart it): Slurm is given
// what is left of it for the current or next run.
void adopt_time_limit(job_desc_msg_t* desc, job_record_t* job, uint32_t uid) {
  using namespace pollux::sched;
  std::optional<JobState> state = pollux_state(job);
  if (!state || desc->time_limit == INFINITE || desc->time_limit == 0) return;
  state->limit = desc->time_limit;
  desc->time_limit = static_cast<uint32_t>(next_run_limit(*state));
  set_string(&job->system_comment, format_comment(JobView{}, *state));
  info("job_submit/pollux: JobId=%u: uid %u set its time limit to %lld min over its whole life (%lld s used by "
       "earlier runs): this run's limit is %u min", job->job_id, uid, state->limit, state->used, desc->time_limit);
}

int modify(job_desc_msg_t* desc, job_record_t* job, uint32_t uid, char** err_msg) {
  using namespace pollux::sched;
  if (!pollux_scheduler()) return SLURM_SUCCESS;
  if (xstrcmp(desc->alloc_node, kInternalUpdate) == 0) return SLURM_SUCCESS;  // sched/pollux itself
  const bool managed = pollux_state(job).has_value() || new_elastic_job(job);
  if (!managed || (!IS_JOB_PENDING(job) && !IS_JOB_RUNNING(job))) return SLURM_SUCCESS;
  const bool slurm_user = uid == 0 || uid == slurm_conf.slurm_user_id;
  if (changes_size(desc) && (slurm_user || validate_operator(uid))) {
    const int rc = adopt_range_update(desc, job, uid, err_msg);
    if (rc != SLURM_SUCCESS) return rc;
  } else if (changes_size(desc)) {
    const std::optional<JobState> state = pollux_state(job);
    const ElasticRange range = state ? state->range : adopted(job).range;
    return refuse(err_msg,
                  "JobId=" + std::to_string(job->job_id) + ": uid " + std::to_string(uid) +
                      " may not change the size of an elastic job: sched/pollux sizes it within its range (" +
                      range_words(range) + "), which only an operator may change",
                  ESLURM_ACCESS_DENIED);
  }
  if (desc->time_limit != NO_VAL) adopt_time_limit(desc, job, uid);
  if (held_by_pollux(job)) {
    if (desc->priority == INFINITE && !slurm_user) {
      // ESLURM_JOB_HELD: "Job is in held state, pending scheduler release".
      return refuse(err_msg,
                    "JobId=" + std::to_string(job->job_id) +
                        ": held by sched/pollux until a round gives it GPUs: release refused for uid " +
                        std::to_string(uid),
                    ESLURM_JOB_HELD);
    }
    if (desc->priority == 0 && validate_operator(uid)) {  // an administrator's hold: theirs from now on
      if (!pollux_state(job)) {  // not adopted yet: adopt it now, or the first round would take the hold over
        set_string(&job->system_comment, format_comment(JobView{}, adopted(job)));
      }
      xfree(job->state_desc);
      job->state_reason = WAIT_HELD;
    }
  } else if (desc->priority == INFINITE && IS_JOB_PENDING(job) && job->priority == 0) {
    // Releasing someone's hold on an elastic job hands it back to
    // sched/pollux, which releases it at its decided size: Slurm's own
    // release would let its main loop start the job at a size of its own.
    const bool may = validate_operator(uid) || (job->state_reason == WAIT_HELD_USER && uid == job->user_id);
    if (may) {
      set_pollux_hold(job, hold_reason_for(Why::kWait).c_str());
      desc->priority = NO_VAL;
      last_job_update = time(nullptr);
      info("job_submit/pollux: JobId=%u: hold released by uid %u: sched/pollux starts it at its size", job->job_id,
           uid);
    }
  }
  return SLURM_SUCCESS;
}

}  // namespace

extern "C" {

POLLUX_EXPORT extern const char plugin_name[] = "Pollux elastic job submit plugin";
POLLUX_EXPORT extern const char plugin_type[] = "job_submit/pollux";
POLLUX_EXPORT extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;

POLLUX_EXPORT int init(void) { return SLURM_SUCCESS; }
POLLUX_EXPORT void fini(void) {}

POLLUX_EXPORT int job_submit(job_desc_msg_t* desc, uint32_t submit_uid, char** err_msg) {
  try {
    return submit(desc, submit_uid, err_msg);
  } catch (const std::exception& e) {
    error("job_submit/pollux: %s", e.what());
  } catch (...) {
    error("job_submit/pollux: unknown exception");
  }
  return SLURM_SUCCESS;  // never refuse a job because of the plugin's own failure
}

POLLUX_EXPORT int job_modify(POLLUX_JOB_MODIFY_PARAMS) {
  try {
    return modify(desc, job, submit_uid, POLLUX_JOB_MODIFY_ERR_MSG);
  } catch (const std::exception& e) {
    error("job_submit/pollux: %s", e.what());
  } catch (...) {
    error("job_submit/pollux: unknown exception");
  }
  return SLURM_SUCCESS;
}

}  // extern "C"
