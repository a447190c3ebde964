#include <string.h>

#include "fenced.h"

/* [a-z0-9][a-z0-9_-]{0,62}, and nothing else, ever. */
int
fence_key_valid(const char *key)
{
	size_t	 i, len;

	if (key == NULL)
		return (0);
	len = strnlen(key, FENCE_KEY_SIZE);
	if (len == 0 || len > FENCE_KEY_MAX)
		return (0);
	for (i = 0; i < len; i++) {
		char c = key[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			continue;
		if (i > 0 && (c == '_' || c == '-'))
			continue;
		return (0);
	}
	return (1);
}

const char *
proc_name(enum fenced_proc p)
{
	switch (p) {
	case PROC_PARENT:
		return ("parent");
	case PROC_BROKER:
		return ("broker");
	case PROC_FENCER:
		return ("fencer");
	case PROC_PROBER:
		return ("prober");
	default:
		return ("unknown");
	}
}
