#!/bin/bash
# The soak's short version (label soak): contrib/soak/pollux-soak with tens
# of resizes of real elastic training jobs (pollux-digits) and every kind of
# fault at least once (a rank SIGKILLed during a checkpoint, a node failing
# and coming back, a slurmd crashing, slurmctld restarted mid-resize, the
# hint spool and the checkpoint directory full and read-only). It passes
# when every job COMPLETED with continuous steps, no half-written checkpoint
# was ever the latest, slurmctld never crashed and every fault was logged.
# POLLUX_SOAK_SEED picks another seed (default 1); the soak's directory is
# kept when it fails (its path is printed last).
source "$POLLUX_SRC/testsuite/e2e/lib.sh"
command -v mount >/dev/null || skip "mount not installed"
exec "$POLLUX_SRC/contrib/soak/pollux-soak" --build "$POLLUX_BUILD" --seed "${POLLUX_SOAK_SEED:-1}" \
  --resizes 20 --warmup 15 \
  --faults rank-kill:2,node:1,slurmd:1,ctld:2,spool-full:1,spool-ro:1,ckpt-full:1,ckpt-ro:1 \
  --fault-gap 2-6 --fault-wait 60 --fault-hold 30 --time-limit 480
