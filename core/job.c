/* SPDX-License-Identifier: MIT */
/*
 * The launcher's identity of this process's job: the one place weft reads
 * the variables that launchers set for every process of a job. Every
 * process of one job sees the same value, processes of two jobs see two
 * values, and a process nobody launched sees none.
 */
#include "weft/compat.h"

#include <stdio.h>
#include <stdlib.h>

#include "weft/core.h"

/* In this order; the first that is set and not empty names the job. A
 * launcher sets one or more of them for all the processes of a job alike,
 * so the order only has to be the same everywhere. */
static const char *const job_vars[] = {
	"PMIX_NAMESPACE",		/* PMIx: Open MPI 4-5, PRRTE, srun --mpi=pmix */
	"OMPI_MCA_ess_base_jobid",	/* Open MPI 3-4's mpirun */
	"OMPI_MCA_orte_ess_jobid",	/* Open MPI 1-2's mpirun */
	"FLUX_JOB_ID",			/* Flux */
};

static const char *job_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

const char *weft_job_identity(char *buf, size_t size)
{
	const char *job, *step;
	size_t i;

	for (i = 0; i < WEFT_ARRAY_SIZE(job_vars); i++) {
		job = job_env(job_vars[i]);
		if (!job)
			continue;
		snprintf(buf, size, "%s", job);
		return job_vars[i];
	}
	/* Slurm: the step, not the allocation. salloc and sbatch set
	 * SLURM_JOB_ID in the shell that starts processes by hand, but
	 * only srun starts a step, and two sruns of one allocation are
	 * two jobs to their processes. */
	job = job_env("SLURM_JOB_ID");
	step = job_env("SLURM_STEP_ID");
	if (job && step) {
		snprintf(buf, size, "%s.%s", job, step);
		return "SLURM_JOB_ID.SLURM_STEP_ID";
	}
	return NULL;
}
