/*
 * The host doctor, as the fence service asks the fencer for it
 * (docs/doctor.md): the fencer's rows, each handed to the front end,
 * with what only root and the admin group may see (hc_detail: paths,
 * versions, hashes, cgroup folders) wiped for anyone else.  This is the
 * one place that decides it; the front ends render what they get.
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "proc.h"
#include "broker.h"
#include "svc.h"

static void
svc_doctor_answer(struct breq *r, const struct svc_msg *m)
{
	struct svc_answer a;
	struct msg_check c;

	memset(&a, 0, sizeof(a));
	switch (m->m_type) {
	case IMSG_HOST_CHECK:
		c = *m->m_check;
		if (!r->r_admin)
			memset(c.hc_detail, 0, sizeof(c.hc_detail));
		a.a_what = SVC_CHECK;
		a.a_check = &c;
		breq_reply(r, &a);
		return;
	case IMSG_FENCE_END:
		a.a_what = SVC_END;
		a.a_last = 1;
		breq_reply(r, &a);
		return;
	}
	fatalx("%s: %s to the doctor", __func__, msg_type_name(m->m_type));
}

/* Anyone may ask; w's admin flag says whether the details come too. */
void
svc_doctor(const struct svc_who *w, svc_cb cb, void *arg)
{
	struct breq	*r;

	r = breq_new(BREQ_FENCER, w->w_uid, "", svc_doctor_answer, w, 0, cb,
	    arg);
	r->r_list = 1;
	r->r_admin = w->w_admin;
	svc_to_fencer(r, IMSG_HOST_DOCTOR, NULL, 0);
}
