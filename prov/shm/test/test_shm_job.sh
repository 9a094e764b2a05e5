#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Job namespaces of chosen shm names (fi_shm(7), FI_SHM_JOB): pairs of
# shm_job_peer on one service, each pair in its own "job", run at once and
# each client must get the answer of its own job's server; peers of one
# job find each other; processes that no launcher started find each other
# as before; a client of another job does not reach a server and says
# why. Jobs are what launchers put in the environment (PMIx, Open MPI's
# mpirun, srun) or FI_SHM_JOB.

: "${top_builddir:=$(cd "$(dirname "$0")/../../.." && pwd)}"
PROG=$top_builddir/prov/shm/test/shm_job_peer
NTESTS=8

echo "1..$NTESTS"
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/shm_job.XXXXXX") || exit 1
pids=
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# What this script runs under (make check inside an allocation or an
# mpirun) must not decide the jobs: every process starts from a clean
# slate and gets only the variables a case gives it.
CLEAN="-u FI_SHM_JOB -u PMIX_NAMESPACE -u OMPI_MCA_ess_base_jobid
	-u OMPI_MCA_orte_ess_jobid -u FLUX_JOB_ID -u SLURM_JOB_ID
	-u SLURM_STEP_ID"
# One service per run of this script, so that parallel runs do not meet.
SVC=jobtest$$

# server NAME SERVICE MARK ENV...: starts it in the background; waits for
# its endpoint (0) or its exit (1, with its log).
server() {
	name=$1 svc=$2 mark=$3
	shift 3
	rm -f "$TMP/$name.ready"
	# shellcheck disable=SC2086
	env $CLEAN "$@" "$PROG" server "$svc" "$mark" "$TMP/$name.ready" \
		>"$TMP/$name.out" 2>&1 &
	eval "pid_$name=$!"
	pids="$pids $!"
	i=0
	while [ ! -s "$TMP/$name.ready" ]; do
		if ! kill -0 "$(eval echo "\$pid_$name")" 2>/dev/null; then
			sed 's/^/#   server: /' "$TMP/$name.out" | tail -5
			return 1
		fi
		i=$((i + 1))
		[ "$i" -lt 300 ] || return 1
		sleep 0.1
	done
}

# client NAME SERVICE MARK WANT ENV...: 0 when the answer is WANT.
client() {
	name=$1 svc=$2 mark=$3 want=$4
	shift 4
	# shellcheck disable=SC2086
	env $CLEAN "$@" timeout 60 "$PROG" client "$svc" "$mark" \
		>"$TMP/$name.out" 2>&1
	if grep -qx "reply $want/$mark" "$TMP/$name.out"; then
		return 0
	fi
	sed 's/^/#   client: /' "$TMP/$name.out" | tail -5
	return 1
}

reap() { # NAME: 0 when that server exited 0
	wait "$(eval echo "\$pid_$1")"
}

# pair_of_jobs SERVICE "ENV of job A" "ENV of job B": both servers on one
# service at once, each client answered by its own job's server.
pair_of_jobs() {
	svc=$1 envA=$2 envB=$3
	# shellcheck disable=SC2086
	server a "$svc" A $envA && server b "$svc" B $envB &&
		client ca "$svc" ca A $envA && client cb "$svc" cb B $envB &&
		reap a && reap b
}

if pair_of_jobs "$SVC" "FI_SHM_JOB=alpha" "FI_SHM_JOB=beta"; then
	ok "two jobs (FI_SHM_JOB) on one service at once, each client its own server"
else
	notok "two jobs (FI_SHM_JOB) on one service at once, each client its own server"
fi

if pair_of_jobs "${SVC}p" \
	"PMIX_NAMESPACE=1001 OMPI_MCA_ess_base_jobid=1001" \
	"PMIX_NAMESPACE=1002 OMPI_MCA_ess_base_jobid=1002"; then
	ok "two Open MPI jobs (PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid) on one service"
else
	notok "two Open MPI jobs (PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid) on one service"
fi

if pair_of_jobs "${SVC}o" "OMPI_MCA_orte_ess_jobid=7" \
	"OMPI_MCA_orte_ess_jobid=8"; then
	ok "two older Open MPI jobs (OMPI_MCA_orte_ess_jobid) on one service"
else
	notok "two older Open MPI jobs (OMPI_MCA_orte_ess_jobid) on one service"
fi

if pair_of_jobs "${SVC}s" "SLURM_JOB_ID=77 SLURM_STEP_ID=0" \
	"SLURM_JOB_ID=77 SLURM_STEP_ID=1"; then
	ok "two srun steps of one allocation on one service"
else
	notok "two srun steps of one allocation on one service"
fi

if server j "${SVC}j" J PMIX_NAMESPACE=prterun-host-42@1 &&
	client cj "${SVC}j" cj J PMIX_NAMESPACE=prterun-host-42@1 && reap j; then
	ok "peers of one job find each other"
else
	notok "peers of one job find each other"
fi

# Started by hand: no launcher variables; FI_SHM_JOB=none and a shell of
# an allocation (SLURM_JOB_ID without a step) are the same namespace.
if server h "${SVC}h" H && client ch "${SVC}h" ch H && reap h &&
	server h2 "${SVC}h" H2 SLURM_JOB_ID=77 &&
	client ch2 "${SVC}h" ch2 H2 FI_SHM_JOB=none && reap h2; then
	ok "processes started by hand find each other"
else
	notok "processes started by hand find each other"
fi

# A client of job beta finds no server of job alpha: it fails at once
# and its warning names the namespace it looked in and where that came
# from.
if server x "${SVC}x" X FI_SHM_JOB=alpha; then
	# shellcheck disable=SC2086
	env $CLEAN FI_SHM_JOB=beta timeout 60 "$PROG" client "${SVC}x" cx \
		>"$TMP/cx.out" 2>&1
	rc=$?
	if [ "$rc" = 4 ] &&
	   grep -q "job namespace j[0-9a-f]* (FI_SHM_JOB=beta)" "$TMP/cx.out"; then
		ok "a client of another job does not reach the server, and says why"
	else
		notok "a client of another job does not reach the server, and says why (rc $rc)"
		sed 's/^/#   /' "$TMP/cx.out" | tail -5
	fi
	# Its own job's client lets the server go.
	if client cx2 "${SVC}x" cx2 X FI_SHM_JOB=alpha && reap x; then
		ok "the server of job alpha still serves its own job"
	else
		notok "the server of job alpha still serves its own job"
	fi
else
	notok "a client of another job does not reach the server (no server)"
	notok "the server of job alpha still serves its own job (no server)"
fi

exit $fail
