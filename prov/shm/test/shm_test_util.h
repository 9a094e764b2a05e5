/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the shm transport tests: child processes that talk to
 * the parent over a pipe pair, and deterministic data patterns.
 */
#ifndef SHM_TEST_UTIL_H
#define SHM_TEST_UTIL_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

struct shm_test_child {
	pid_t pid;
	int to_child;	/* parent writes */
	int from_child;	/* parent reads */
};

/* Fork; in the child run fn(rd, wr, arg) and _exit with its result (no
 * atexit handlers: a child never unlinks what the parent owns). */
static inline int shm_test_fork(struct shm_test_child *c,
				int (*fn)(int rd, int wr, void *arg), void *arg)
{
	int down[2], up[2];

	*c = (struct shm_test_child){ .pid = -1, .to_child = -1,
				      .from_child = -1 };
	if (pipe(down) || pipe(up))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		close(down[1]);
		close(up[0]);
		_exit(fn(down[0], up[1], arg));
	}
	close(down[0]);
	close(up[1]);
	c->to_child = down[1];
	c->from_child = up[0];
	return 0;
}

static inline int shm_test_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static inline int shm_test_read(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Child's exit status (0..255), or -1 when it died by a signal. */
static inline int shm_test_wait(struct shm_test_child *c)
{
	int status;

	close(c->to_child);
	close(c->from_child);
	while (waitpid(c->pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline uint8_t shm_test_byte(uint64_t seed, uint64_t i)
{
	uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 31;
	return (uint8_t)(x ^ (x >> 17));
}

static inline void shm_test_fill(void *buf, size_t len, uint64_t seed,
				 uint64_t start)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = shm_test_byte(seed, start + i);
}

/* Index of the first wrong byte, or len when all match. */
static inline size_t shm_test_check(const void *buf, size_t len,
				    uint64_t seed, uint64_t start)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != shm_test_byte(seed, start + i))
			return i;
	return len;
}

static inline int shm_test_shm_exists(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm%s", name);
	return stat(path, &st) == 0;
}

#endif /* SHM_TEST_UTIL_H */
