/*
 * libFuzzer target for the vm backend's reading of the guest's serial
 * console (fencer/vm/vm_console.c), which the guest writes as it likes.
 * The first byte seeds how the rest is cut into reads.  Invariants:
 * the line being gathered stays within its buffer; it and the last
 * whole line hold printable ASCII alone, terminated; and how the bytes
 * were cut changes nothing: fed at once, the same state results.
 */
#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include "log.h"
#include "vm.h"
#include "fuzz.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);
int	LLVMFuzzerInitialize(int *, char ***);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_init(1, 0);		/* log_debug is quiet at verbosity 0 */
	return (0);
}

static void
fz_printable(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		FUZZ_CHECK(s[i] >= 0x20 && s[i] <= 0x7e);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vm_console a, b;
	const char	*p;
	size_t		 n, off, chunk;
	uint32_t	 st;

	if (size < 1)
		return (0);
	st = data[0];
	p = (const char *)data + 1;
	n = size - 1;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));

	/* Cut as reads of at most 1024 bytes might. */
	for (off = 0; off < n; off += chunk) {
		st = st * 1103515245U + 12345U;
		chunk = 1 + (st >> 16) % 1024;
		if (chunk > n - off)
			chunk = n - off;
		vm_console_feed(&a, p + off, chunk);
		FUZZ_CHECK(a.vc_linelen < sizeof(a.vc_line));
	}
	vm_console_feed(&b, p, n);

	FUZZ_CHECK(a.vc_linelen == b.vc_linelen);
	FUZZ_CHECK(memcmp(a.vc_line, b.vc_line, a.vc_linelen) == 0);
	fz_printable(a.vc_line, a.vc_linelen);
	FUZZ_CHECK(memchr(a.vc_last, '\0', sizeof(a.vc_last)) != NULL);
	fz_printable(a.vc_last, strlen(a.vc_last));
	FUZZ_CHECK(strcmp(a.vc_last, b.vc_last) == 0);
	FUZZ_CHECK(memchr(a.vc_init, '\0', sizeof(a.vc_init)) != NULL);
	fz_printable(a.vc_init, strlen(a.vc_init));
	FUZZ_CHECK(strcmp(a.vc_init, b.vc_init) == 0);
	FUZZ_CHECK(a.vc_init[0] == '\0' ||
	    strncmp(a.vc_init, VM_INIT_MARK, strlen(VM_INIT_MARK)) == 0);
	/* A last line only from a line the input ended or filled. */
	if (a.vc_last[0] != '\0')
		FUZZ_CHECK(memchr(p, '\n', n) != NULL ||
		    n >= sizeof(a.vc_line) - 1);
	return (0);
}
