/* SPDX-License-Identifier: MIT */
/*
 * Test helper: capture what the library writes to stderr (its log) into
 * a temporary file, then read it back as a string.
 */
#ifndef WEFT_TEST_CAPTURE_H
#define WEFT_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct capture {
	FILE *file;
	int saved_fd;
	char *text;
};

static inline void capture_start(struct capture *cap)
{
	fflush(stderr);
	cap->text = NULL;
	cap->file = tmpfile();
	cap->saved_fd = dup(STDERR_FILENO);
	if (cap->file && cap->saved_fd >= 0)
		dup2(fileno(cap->file), STDERR_FILENO);
}

/* Returns the captured text (owned by cap until capture_free). */
static inline const char *capture_stop(struct capture *cap)
{
	long len;

	fflush(stderr);
	if (cap->saved_fd >= 0) {
		dup2(cap->saved_fd, STDERR_FILENO);
		close(cap->saved_fd);
	}
	if (!cap->file)
		return "";
	len = ftell(cap->file);
	cap->text = calloc(1, len > 0 ? (size_t)len + 1 : 1);
	if (cap->text && len > 0) {
		rewind(cap->file);
		if (fread(cap->text, 1, (size_t)len, cap->file) != (size_t)len)
			cap->text[0] = '\0';
	}
	fclose(cap->file);
	cap->file = NULL;
	return cap->text ? cap->text : "";
}

static inline void capture_free(struct capture *cap)
{
	free(cap->text);
	cap->text = NULL;
}

/* Number of lines of text that contain needle. */
static inline int capture_count(const char *text, const char *needle)
{
	int count = 0;
	const char *line = text, *end;

	while (line && *line) {
		end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *copy = strndup(line, len);

		if (copy && strstr(copy, needle))
			count++;
		free(copy);
		line = end ? end + 1 : NULL;
	}
	return count;
}

#endif /* WEFT_TEST_CAPTURE_H */
