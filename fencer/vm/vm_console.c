/*
 * vm_console: the guest's serial console as the fencer reads it, apart
 * from the reading so that it can be tested alone (fuzz/vmconsole_fuzz.c).
 * Whatever the guest writes, each line goes to the debug log cut to
 * VM_CONSOLE_LINE - 1 bytes, anything but printable ASCII as '?', and
 * the last whole one is kept for the log when the fence stops, and the
 * last of vminit's (a failed step's reason, which the kernel's power-off
 * line follows); the KVM try's line (VM_TRY_MARK) is noted.
 */
#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include "log.h"
#include "vm.h"

void
vm_console_feed(struct vm_console *vc, const char *buf, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch == '\n' || vc->vc_linelen == sizeof(vc->vc_line) - 1) {
			vc->vc_line[vc->vc_linelen] = '\0';
			if (vc->vc_linelen > 0) {
				log_debug("vm console: %s", vc->vc_line);
				if (strcmp(vc->vc_line, VM_TRY_MARK) == 0)
					vc->vc_try_ok = 1;
				strlcpy(vc->vc_last, vc->vc_line,
				    sizeof(vc->vc_last));
				if (strncmp(vc->vc_line, VM_INIT_MARK,
				    strlen(VM_INIT_MARK)) == 0)
					strlcpy(vc->vc_init, vc->vc_line,
					    sizeof(vc->vc_init));
			}
			vc->vc_linelen = 0;
			if (ch == '\n')
				continue;
		}
		if (ch == '\r')
			continue;
		vc->vc_line[vc->vc_linelen++] = ch < 0x20 || ch > 0x7e ?
		    '?' : (char)ch;
	}
}
