/*
 * What the fuzz targets share: FUZZ_CHECK(cond) and FUZZ_FAIL() stop
 * the run, naming the broken invariant, so libFuzzer keeps the input as
 * a crash.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: invariant broken: %s\n",	\
		    __FILE__, __LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

/* The same where the test reads better as an if. */
#define FUZZ_FAIL() do {						\
	fprintf(stderr, "%s:%d: invariant broken\n", __FILE__, __LINE__); \
	abort();							\
} while (0)

/* Which of the first 64 descriptors are open: compared for leaks. */
static inline uint64_t
fuzz_open_fds(void)
{
	uint64_t	 set = 0;
	int		 fd;

	for (fd = 0; fd < 64; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			set |= 1ULL << fd;
	return (set);
}

#endif /* FUZZ_H */
