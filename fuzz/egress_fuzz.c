/*
 * libFuzzer target for egress/: the first byte chooses the request
 * parser or the DNS answer codec, the rest is the input.  Neither may
 * crash, read past the input or hang, and what they hand back must
 * hold together.  Built and run by scripts/fuzz.sh.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct egress_req	 r;
	struct sockaddr_storage	 ss[8];
	const char		*code, *why;
	char			*copy;
	size_t			 n;
	int			 rc;

	if (size < 1)
		return (0);
	if (data[0] & 1) {
		copy = malloc(size - 1 + 1);
		if (copy == NULL)
			return (0);
		memcpy(copy, data + 1, size - 1);
		rc = egress_req_parse(copy, size - 1, &r, &code);
		if (rc == 1 && (r.er_head_len > size - 1 ||
		    r.er_hdr_off + r.er_hdr_len != r.er_head_len ||
		    r.er_host[0] == '\0' || r.er_port == 0 ||
		    memchr(r.er_host, '\0', sizeof(r.er_host)) == NULL))
			__builtin_trap();
		if (rc == -1 && strcmp(code, "bad-request") != 0 &&
		    strcmp(code, "bad-method") != 0)
			__builtin_trap();
		free(copy);
	} else {
		rc = egress_dns_answer(data + 1, size - 1,
		    size > 2 ? (data[1] << 8 | data[2]) : 0, "www.example.com",
		    data[0] & 2 ? EGRESS_DNS_AAAA : EGRESS_DNS_A, ss, 8, &n,
		    &why);
		if (n > 8 || (rc == 1 && n == 0))
			__builtin_trap();
		for (size_t i = 0; i < n; i++)
			(void)egress_addr_class((struct sockaddr *)&ss[i]);
	}
	return (0);
}
