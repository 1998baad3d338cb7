#!/bin/bash
# QOS and association limits bound elastic jobs (issue 13, Deliver 1): on
# a cluster with accounting (a real slurmdbd and MariaDB, limits
# enforced), an elastic job in a QOS with MaxTRESPerJob=gres/gpu=2,node=1
# that would otherwise grow to 16 GPUs runs at the most the QOS allows and
# keeps running there (never requeued into a size Slurm leaves pending with
# QOSMaxGRESPerJob); a job whose smallest size the QOS refuses (-N 2-4
# under node=1) gets no GPUs and says why (why=limits), once. Then a
# per-user limit (MaxTRESPerUser=gres/gpu=3): the running job grows to it,
# counting its own GPUs once, and the user's next job waits, why=limits.
source "$(dirname "$0")/lib.sh"
# A Slurm built from source (the matrix's 26.05 in /usr/local) has no
# slurmdbd of its own version in its root file system: not a broken setup.
if ! PATH=$PATH:/usr/sbin command -v slurmdbd >/dev/null && [[ $(PATH=$PATH:/usr/sbin command -v slurmctld) == /usr/local/* ]]; then
  echo "SKIPPED: $test_name: no slurmdbd for the Slurm built from source"; exit 77
fi
for c in mariadbd mariadb-install-db slurmdbd sacctmgr; do
  PATH=$PATH:/usr/sbin command -v "$c" >/dev/null || skip "$c not installed (Debian packages mariadb-server slurmdbd)"
done
start_cluster "" --accounting
rounds() { log_count "sched/pollux: round:"; }
wait_rounds() { local r0; r0=$(rounds); wait_until 60 "$1 more rounds" bash -c "(( \$(grep -c 'sched/pollux: round:' $CLUSTER_DIR/log/slurmctld.log) >= $r0 + $1 ))"; }

sacctmgr -i add qos gpu2 MaxTRESPerJob=gres/gpu=2,node=1 >/dev/null || fail "sacctmgr add qos"
sacctmgr -i modify user root set qos+=gpu2 >/dev/null || fail "sacctmgr modify user"
qos_known() { scontrol show assoc_mgr flags=qos qos=gpu2 2>/dev/null | grep >/dev/null "MaxTRESPJ=.*gres/gpu=2"; }
wait_until 30 "slurmctld to learn QOS gpu2 from slurmdbd" qos_known

export POLLUX_TEST_PROFILED=16  # each job would take every GPU it may
a=$(submit_elastic a -N 1-4 --gpus-per-node=4 --qos=gpu2)
b=$(submit_elastic b -N 2-4 --gpus-per-node=1 --qos=gpu2)
within_limit() {
  (($(gpus_of "$a") <= 2)) || fail "job $a granted $(granted "$a") despite MaxTRESPerJob=gres/gpu=2: $(system_comment "$a")"
  runs_as_decided "$a" && (($(gpus_of "$a") == 2))
}
wait_until 60 "job $a running at the QOS's 2 GPUs" within_limit
blocked() { [[ $(job_state "$b") == PENDING && $(comment_key "$b" why) == limits && $(comment_key "$b" alloc) == 0 ]]; }
wait_until 30 "job $b held for its limits" blocked
note "job $a: $(granted "$a"); job $b: $(squeue -h -j "$b" -o %r), $(system_comment "$b")"
restarts0=$(restarts "$a")
wait_rounds 3
within_limit || fail "job $a left its size: $(job_state "$a") $(squeue -h -j "$a" -o %r) $(granted "$a"): $(system_comment "$a")"
[[ $(restarts "$a") == "$restarts0" ]] || fail "job $a was requeued $(($(restarts "$a") - restarts0)) more times at the limit"
blocked || fail "job $b: $(job_state "$b") $(system_comment "$b")"
holds=$(log_count "JobId=$b: hold .*why=limits limit=QOSMaxNode")
((holds == 1)) || fail "job $b's hold for its limits (QOSMaxNode...) logged $holds times: $(grep "JobId=$b:" "$CLUSTER_DIR/log/slurmctld.log" | tail -3)"
[[ $(squeue -h -j "$b" -o %r) == *"no size Slurm allows (QOSMaxNode"* ]] || fail "job $b's reason: $(squeue -h -j "$b" -o %r)"
note "QOS limits bound job $a at 2 GPUs; job $b held, why=limits"

# A per-user limit counts the user's running jobs: job a (running at 2)
# grows to what is left of MaxTRESPerUser=gres/gpu=3 besides its own, 3,
# not 4; a new job of the same user then gets nothing while a holds all 3.
sacctmgr -i modify qos gpu2 set MaxTRESPerJob=gres/gpu=4 MaxTRESPerUser=gres/gpu=3 >/dev/null || fail "sacctmgr modify qos"
user_limit_known() { scontrol show assoc_mgr flags=qos qos=gpu2 2>/dev/null | grep >/dev/null "MaxTRESPU=.*gres/gpu=3"; }
wait_until 30 "slurmctld to learn MaxTRESPerUser=gres/gpu=3" user_limit_known
at_user_limit() {
  (($(gpus_of "$a") <= 3)) || fail "job $a granted $(granted "$a") despite MaxTRESPerUser=gres/gpu=3: $(system_comment "$a")"
  runs_as_decided "$a" && (($(gpus_of "$a") == 3))
}
wait_until 90 "job $a grown to the user's 3 GPUs" at_user_limit
c=$(submit_elastic c -N 1-2 --gpus-per-node=1 --qos=gpu2)
c_blocked() {
  [[ $(job_state "$c") == PENDING && $(comment_key "$c" why) == limits && $(comment_key "$c" alloc) == 0 ]] &&
    (($(log_count "JobId=$c: hold .*why=limits limit=QOSMaxGRESPerUser") == 1))
}
wait_until 30 "job $c held for the user's limit" c_blocked
wait_rounds 2
at_user_limit || fail "job $a left the user's limit: $(job_state "$a") $(squeue -h -j "$a" -o %r) $(granted "$a"): $(system_comment "$a")"
c_blocked || fail "job $c: $(job_state "$c") $(squeue -h -j "$c" -o %r): $(system_comment "$c")"
note "PASSED: job $a at MaxTRESPerUser's 3 GPUs, job $c held (why=limits), job $b held"
