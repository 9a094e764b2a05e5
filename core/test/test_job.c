/* SPDX-License-Identifier: MIT */
/*
 * weft_job_identity: which launcher variable names the job, in which
 * order, and what a process started by hand gets (nothing).
 */
#include "weft/compat.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "weft/core.h"

static const char *const vars[] = {
	"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid",
	"FLUX_JOB_ID", "SLURM_JOB_ID", "SLURM_STEP_ID",
};

static int clear_env(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	return 0;
}

static void expect_job(const char *src, const char *value)
{
	char buf[64] = "untouched";
	const char *got = weft_job_identity(buf, sizeof(buf));

	if (!src) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, src);
	assert_string_equal(buf, value);
}

static void test_started_by_hand(void **state)
{
	(void)state;
	expect_job(NULL, NULL);
	/* Empty is unset. */
	setenv("PMIX_NAMESPACE", "", 1);
	expect_job(NULL, NULL);
}

static void test_each_launcher(void **state)
{
	(void)state;
	setenv("FLUX_JOB_ID", "f1", 1);
	expect_job("FLUX_JOB_ID", "f1");
	setenv("OMPI_MCA_orte_ess_jobid", "12", 1);
	expect_job("OMPI_MCA_orte_ess_jobid", "12");
	setenv("OMPI_MCA_ess_base_jobid", "902168577", 1);
	expect_job("OMPI_MCA_ess_base_jobid", "902168577");
	setenv("PMIX_NAMESPACE", "prterun-h-1@1", 1);
	expect_job("PMIX_NAMESPACE", "prterun-h-1@1");
}

/* An allocation's shell has SLURM_JOB_ID; only srun's step is a job. */
static void test_slurm_step(void **state)
{
	(void)state;
	setenv("SLURM_JOB_ID", "77", 1);
	expect_job(NULL, NULL);
	setenv("SLURM_STEP_ID", "3", 1);
	expect_job("SLURM_JOB_ID.SLURM_STEP_ID", "77.3");
	/* srun --mpi=pmix sets both; PMIx comes first everywhere. */
	setenv("PMIX_NAMESPACE", "slurm.pmix.77.3", 1);
	expect_job("PMIX_NAMESPACE", "slurm.pmix.77.3");
}

/* Cut to fit, the same in every process of the job. */
static void test_long_identity(void **state)
{
	char buf[8];

	(void)state;
	setenv("PMIX_NAMESPACE", "0123456789abcdef", 1);
	assert_string_equal(weft_job_identity(buf, sizeof(buf)),
			    "PMIX_NAMESPACE");
	assert_string_equal(buf, "0123456");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_started_by_hand, clear_env),
		cmocka_unit_test_setup(test_each_launcher, clear_env),
		cmocka_unit_test_setup(test_slurm_step, clear_env),
		cmocka_unit_test_setup(test_long_identity, clear_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
