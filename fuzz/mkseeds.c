/*
 * mkseeds: writes the seed corpora of the msg, imsg and ctl targets
 * (fuzz/corpus/{msg,imsg,ctl}/) with the project's own encoders, so the
 * seeds are what the daemon really sends.  Built and run by
 * `sh scripts/fuzz.sh BUILD seeds`; the output is committed.
 *
 *	mkseeds DIR
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "imsg.h"
#include "msg.h"
#include "probe_expect.h"

void	config_defaults(struct fenced_config *);

/* The selectors of fuzz/msg_fuzz.c, in its order. */
enum {
	FK_EMPTY, FK_U32, FK_I32, FK_CONFIG, FK_PROCINFO, FK_ERROR,
	FK_STATS, FK_VERDICT, FK_PROBE_REPORT, FK_BOOT, FK_FENCE_REQ,
	FK_FENCE, FK_TOKEN, FK_HOSTTOKEN, FK_HELLO, FK_EXEC, FK_RESULT,
	FK_GITCONFIG, FK_GITINIT, FK_TUNNEL_OPEN, FK_TUNNEL, FK_TUNNEL_DATA,
	FK_TUNNEL_CREDIT, FK_TUNNEL_CLOSE, FK_PORTS_REQ, FK_PORTLIST,
	FK_PORT_TICKET, FK_SNAP, FK_SNAP_INFO, FK_USAGE, FK_CHECK, FK_AUDIT,
	FK_AUDIT_READ, FK_AUDIT_LINE, FK_DENIAL, FK_TERM
};

static const char *dir;

static void
put(const char *sub, const char *name, int sel, const void *p, size_t n)
{
	char	 path[1024];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (mkdir(path, 0755) == -1 && errno != EEXIST)
		err(1, "%s", path);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	if ((f = fopen(path, "w")) == NULL)
		err(1, "%s", path);
	if (sel >= 0)
		fputc(sel, f);
	if (n > 0 && fwrite(p, 1, n, f) != n)
		err(1, "%s", path);
	fclose(f);
}

/* One imsg frame as imsgbuf_compose() would queue it. */
static void
frame(unsigned char **buf, size_t *len, uint32_t type, uint32_t peerid,
    int hasfd, const void *p, size_t n)
{
	struct imsg_hdr	 h;

	memset(&h, 0, sizeof(h));
	h.ih_type = type;
	h.ih_len = (uint32_t)(IMSG_HDR_SIZE + n);
	h.ih_peerid = peerid;
	h.ih_pid = 4242;
	h.ih_flags = hasfd ? IMSGF_HASFD : 0;
	if ((*buf = realloc(*buf, *len + h.ih_len)) == NULL)
		err(1, NULL);
	memcpy(*buf + *len, &h, sizeof(h));
	if (n > 0)
		memcpy(*buf + *len + sizeof(h), p, n);
	*len += h.ih_len;
}

#define ENC(call) do { if ((call) == -1) err(1, "%s", #call); } while (0)

int
main(int argc, char *argv[])
{
	struct fenced_config	 c;
	struct msg_procinfo	 pi;
	struct msg_error	 e;
	struct msg_stats	 st;
	struct msg_verdict	 v;
	struct msg_probe_report	 pr;
	struct probe_expect	 pe;
	struct msg_boot		 b;
	struct msg_fence_req	 r;
	struct msg_fence	 f;
	struct msg_token	 tk;
	struct msg_hosttoken	 ht;
	struct msg_hello	 h;
	struct msg_exec		 x;
	struct msg_result	 rs;
	struct msg_gitconfig	 g;
	struct msg_gitinit	 gi;
	char			*xargv[] = { "ls", "-l", "/", NULL };
	void			*p;
	size_t			 n;
	unsigned char		*s = NULL;
	size_t			 sl = 0;

	if (argc != 2)
		errx(2, "usage: mkseeds DIR");
	dir = argv[1];

	put("msg", "empty", FK_EMPTY, NULL, 0);
	ENC(msg_u32_encode(2, &p, &n));
	put("msg", "u32", FK_U32, p, n);
	free(p);
	ENC(msg_i32_encode(-1, &p, &n));
	put("msg", "i32", FK_I32, p, n);
	free(p);

	config_defaults(&c);
	c.c_uid = 999;
	c.c_gid = 998;
	ENC(msg_config_encode(&c, &p, &n));
	put("msg", "config", FK_CONFIG, p, n);
	free(p);
	c.c_backend = BACKEND_VM;
	c.c_vm_inner = 1;
	strlcpy(c.c_vm_path[VM_FILE_KERNEL], "/usr/lib/fenced/vmlinuz",
	    sizeof(c.c_vm_path[0]));
	strlcpy(c.c_vm_sha256[VM_FILE_KERNEL],
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    sizeof(c.c_vm_sha256[0]));
	if (msg_config_encode(&c, &p, &n) == 0) {
		put("msg", "config-vm", FK_CONFIG, p, n);
		free(p);
	} else
		warn("config-vm");

	memset(&pi, 0, sizeof(pi));
	pi.pi_pid[PROC_PARENT] = 100;
	pi.pi_pid[PROC_BROKER] = 101;
	pi.pi_pid[PROC_FENCER] = 102;
	pi.pi_started = 1700000000;
	ENC(msg_procinfo_encode(&pi, &p, &n));
	put("msg", "procinfo", FK_PROCINFO, p, n);
	free(p);

	memset(&e, 0, sizeof(e));
	strlcpy(e.e_code, "bad-key", sizeof(e.e_code));
	strlcpy(e.e_message, "no fence named x", sizeof(e.e_message));
	ENC(msg_error_encode(&e, &p, &n));
	put("msg", "error", FK_ERROR, p, n);
	free(p);

	memset(&st, 0, sizeof(st));
	st.st_pid[PROC_PARENT] = 100;
	st.st_started = 1700000000;
	st.st_now = 1700000100;
	st.st_ctl_conns = 7;
	st.st_fences = 2;
	st.st_verbose = 1;
	ENC(msg_stats_encode(&st, &p, &n));
	put("msg", "stats", FK_STATS, p, n);
	free(p);

	memset(&v, 0, sizeof(v));
	strlcpy(v.v_key, "work", sizeof(v.v_key));
	v.v_level = LEVEL_L2;
	v.v_json = "{\"level\":\"L2\",\"axes\":{}}";
	v.v_kernel = MSG_KERNEL_SHARED;
	strlcpy(v.v_kernel_release, "6.1.0", sizeof(v.v_kernel_release));
	v.v_naxes = 2;
	strlcpy(v.v_axes[0].va_name, "network", sizeof(v.v_axes[0].va_name));
	strlcpy(v.v_axes[0].va_verdict, "not-fenced",
	    sizeof(v.v_axes[0].va_verdict));
	strlcpy(v.v_axes[1].va_name, "kernel", sizeof(v.v_axes[1].va_name));
	strlcpy(v.v_axes[1].va_verdict, "shared",
	    sizeof(v.v_axes[1].va_verdict));
	v.v_nviolations = 1;
	strlcpy(v.v_violations[0], "network: reached 192.0.2.1",
	    sizeof(v.v_violations[0]));
	strlcpy(v.v_surface, "not-fenced, the host's kernel: io_uring",
	    sizeof(v.v_surface));
	ENC(msg_verdict_encode(&v, &p, &n));
	put("msg", "verdict", FK_VERDICT, p, n);
	free(p);

	memset(&pe, 0, sizeof(pe));
	pe.pe_tier = TIER_L15;
	pe.pe_backend = BACKEND_NATIVE;
	pe.pe_traits.pt_egress = 1;
	strlcpy(pe.pe_traits.pt_home, "bind mount of the host folder",
	    sizeof(pe.pe_traits.pt_home));
	strlcpy(pe.pe_boot_id, "00000000-1111-2222-3333-444444444444",
	    sizeof(pe.pe_boot_id));
	pe.pe_host_pid = 4242;
	memset(&pr, 0, sizeof(pr));
	strlcpy(pr.pr_key, "work", sizeof(pr.pr_key));
	pr.pr_expect = &pe;
	pr.pr_report = (uint8_t *)"{\"probe\":\"sandbox-probe/1\"}";
	pr.pr_report_len = strlen((char *)pr.pr_report);
	if (msg_probe_report_encode(&pr, &p, &n) == 0) {
		put("msg", "probe_report", FK_PROBE_REPORT, p, n);
		free(p);
	} else
		warn("probe_report");

	memset(&b, 0, sizeof(b));
	strlcpy(b.b_key, "work", sizeof(b.b_key));
	b.b_owner = 1000;
	b.b_tier = TIER_L2;
	b.b_lifetime = 600;
	b.b_limits.fl_memory = 256ULL << 20;
	b.b_limits.fl_pids = 64;
	b.b_limits.fl_cpu_milli = 500;
	ENC(msg_boot_encode(&b, &p, &n));
	put("msg", "boot", FK_BOOT, p, n);
	free(p);
	/* A vm fence with the inner boundary (docs/vm.md). */
	b.b_backend = BACKEND_VM;
	b.b_inner = INNER_RUNSC;
	ENC(msg_boot_encode(&b, &p, &n));
	put("msg", "boot-inner", FK_BOOT, p, n);
	free(p);
	b.b_backend = 0;
	b.b_inner = 0;

	memset(&r, 0, sizeof(r));
	strlcpy(r.r_key, "work", sizeof(r.r_key));
	r.r_owner = MSG_OWNER_NONE;
	r.r_uid = 1000;
	ENC(msg_fence_req_encode(&r, &p, &n));
	put("msg", "fence_req", FK_FENCE_REQ, p, n);
	free(p);

	memset(&f, 0, sizeof(f));
	strlcpy(f.f_key, "work", sizeof(f.f_key));
	f.f_owner = 1000;
	f.f_uid = 61001;
	f.f_tier = TIER_L15;
	f.f_backend = BACKEND_NATIVE;
	f.f_state = FENCE_RUNNING;
	f.f_pid = 31337;
	strlcpy(f.f_home, "/home/u/sandbox-homes/work", sizeof(f.f_home));
	f.f_started = 1700000000;
	f.f_deadline = 1700001800;
	f.f_limits = b.b_limits;
	f.f_level = LEVEL_L15;
	f.f_kernel = MSG_KERNEL_SHARED;
	strlcpy(f.f_kernel_release, "6.1.0-13-amd64",
	    sizeof(f.f_kernel_release));
	strlcpy(f.f_surface, "fenced, the host's kernel: none reachable",
	    sizeof(f.f_surface));
	memset(f.f_bearer, 0x5a, sizeof(f.f_bearer));
	f.f_home_used = 4096;
	strlcpy(f.f_owner_name, "alice", sizeof(f.f_owner_name));
	ENC(msg_fence_encode(&f, &p, &n));
	put("msg", "fence", FK_FENCE, p, n);
	free(p);
	f.f_backend = BACKEND_VM;
	f.f_tier = TIER_L2;
	f.f_inner = 1;
	f.f_accel = MSG_ACCEL_TCG;
	ENC(msg_fence_encode(&f, &p, &n));
	put("msg", "fence-inner", FK_FENCE, p, n);
	free(p);
	f.f_backend = BACKEND_NATIVE;
	f.f_tier = TIER_L15;
	f.f_inner = 0;
	f.f_accel = MSG_ACCEL_NONE;

	memset(&tk, 0, sizeof(tk));
	tk.tk_uid = 1000;
	strlcpy(tk.tk_name, "default", sizeof(tk.tk_name));
	tk.tk_created = 1700000000;
	memset(tk.tk_hash, 0xab, sizeof(tk.tk_hash));
	ENC(msg_token_encode(&tk, &p, &n));
	put("msg", "token", FK_TOKEN, p, n);
	free(p);

	memset(&ht, 0, sizeof(ht));
	ht.ht_uid = 1000;
	strlcpy(ht.ht_name, "default", sizeof(ht.ht_name));
	memset(ht.ht_token, 'a', HOSTTOKEN_TEXT);
	ENC(msg_hosttoken_encode(&ht, &p, &n));
	put("msg", "hosttoken", FK_HOSTTOKEN, p, n);
	free(p);

	memset(&h, 0, sizeof(h));
	memset(h.h_bearer, 0x5a, sizeof(h.h_bearer));
	strlcpy(h.h_key, "work", sizeof(h.h_key));
	strlcpy(h.h_user, "u", sizeof(h.h_user));
	strlcpy(h.h_home, "/home/u", sizeof(h.h_home));
	h.h_timeout_def = 10000;
	h.h_timeout_max = 60000;
	h.h_output_def = 262144;
	h.h_output_max = 1048576;
	ENC(msg_hello_encode(&h, &p, &n));
	put("msg", "hello", FK_HELLO, p, n);
	free(p);

	memset(&x, 0, sizeof(x));
	memset(x.x_bearer, 0x5a, sizeof(x.x_bearer));
	x.x_owner = MSG_OWNER_NONE;
	x.x_argv = xargv;
	x.x_argc = 3;
	x.x_timeout_ms = 5000;
	ENC(msg_exec_encode(&x, &p, &n));
	put("msg", "exec-argv", FK_EXEC, p, n);
	free(p);
	x.x_argv = NULL;
	x.x_argc = 0;
	x.x_command = "echo hi | wc -c";
	strlcpy(x.x_cwd, "src", sizeof(x.x_cwd));
	x.x_stdin = (uint8_t *)"input\n";
	x.x_stdin_len = 6;
	strlcpy(x.x_key, "work", sizeof(x.x_key));
	ENC(msg_exec_encode(&x, &p, &n));
	put("msg", "exec-command", FK_EXEC, p, n);
	free(p);

	memset(&rs, 0, sizeof(rs));
	rs.rs_exit = 0;
	rs.rs_stdout = (uint8_t *)"hello\n";
	rs.rs_stdout_len = 6;
	rs.rs_stderr = (uint8_t *)"warn\n";
	rs.rs_stderr_len = 5;
	rs.rs_duration_ms = 12;
	ENC(msg_result_encode(&rs, &p, &n));
	put("msg", "result", FK_RESULT, p, n);
	free(p);
	memset(&rs, 0, sizeof(rs));
	strlcpy(rs.rs_error, "exec-timeout", sizeof(rs.rs_error));
	strlcpy(rs.rs_message, "killed after 5000 ms",
	    sizeof(rs.rs_message));
	rs.rs_exit = -1;
	rs.rs_signal = 9;
	rs.rs_truncated = 1;
	ENC(msg_result_encode(&rs, &p, &n));
	put("msg", "result-killed", FK_RESULT, p, n);
	free(p);
	memset(&rs, 0, sizeof(rs));
	rs.rs_super = 7;
	rs.rs_denials = (char *)"seccomp\t3\tunshare(CLONE_NEWUSER)\t"
	    "tier L1 does not refuse it\nlimit\t1\tpids\t\n";
	rs.rs_denials_dropped = 2;
	ENC(msg_result_encode(&rs, &p, &n));
	put("msg", "result-denials", FK_RESULT, p, n);
	free(p);
	{
		struct msg_denial dn;

		memset(&dn, 0, sizeof(dn));
		dn.dn_owner = 1000;
		strlcpy(dn.dn_key, "default", sizeof(dn.dn_key));
		dn.dn_boot = 4242;
		dn.dn_layer = DENIAL_SECCOMP;
		dn.dn_count = 1;
		strlcpy(dn.dn_what, "socket(AF_ALG, SOCK_SEQPACKET)",
		    sizeof(dn.dn_what));
		strlcpy(dn.dn_remedy, "tier L1 does not refuse it",
		    sizeof(dn.dn_remedy));
		strlcpy(dn.dn_chain, "9 4 2 1", sizeof(dn.dn_chain));
		ENC(msg_denial_encode(&dn, &p, &n));
		put("msg", "denial", FK_DENIAL, p, n);
		free(p);
	}
	{
		struct msg_term t;

		memset(&t, 0, sizeof(t));
		t.t_id = 2;
		t.t_exit = -1;
		t.t_signal = 9;
		strlcpy(t.t_why, "killed", sizeof(t.t_why));
		t.t_cols = 80;
		t.t_rows = 24;
		t.t_idle_s = 600;
		t.t_count = 1;
		strlcpy(t.t_program, "python3 u.py", sizeof(t.t_program));
		t.t_super = 7;
		strlcpy(t.t_denials, "seccomp\t3\tunshare(CLONE_NEWUSER)\t"
		    "tier L1 does not refuse it\n", sizeof(t.t_denials));
		t.t_denials_dropped = 1;
		ENC(msg_term_encode(&t, &p, &n));
		put("msg", "term-denials", FK_TERM, p, n);
		free(p);
	}

	memset(&g, 0, sizeof(g));
	memset(g.g_bearer, 0x5a, sizeof(g.g_bearer));
	g.g_set_name = 1;
	g.g_set_email = 1;
	strlcpy(g.g_name, "A U Thor", sizeof(g.g_name));
	strlcpy(g.g_email, "author@example.org", sizeof(g.g_email));
	ENC(msg_gitconfig_encode(&g, &p, &n));
	put("msg", "gitconfig", FK_GITCONFIG, p, n);
	free(p);

	memset(&gi, 0, sizeof(gi));
	memset(gi.gi_bearer, 0x5a, sizeof(gi.gi_bearer));
	gi.gi_owner = MSG_OWNER_NONE;
	strlcpy(gi.gi_path, "proj", sizeof(gi.gi_path));
	ENC(msg_gitinit_encode(&gi, &p, &n));
	put("msg", "gitinit", FK_GITINIT, p, n);
	free(p);

	/* Tunnels (imsg/msg_tunnel.c). */
	{
		struct msg_tunnel_open to;
		struct msg_tunnel tn;
		struct msg_tunnel_data td;
		struct msg_tunnel_credit tc;
		struct msg_tunnel_close tl;
		struct msg_ports_req ps;
		struct msg_portlist pl;
		uint8_t		 bytes[] = "GET / HTTP/1.1\r\n\r\n";

		memset(&to, 0, sizeof(to));
		strlcpy(to.to_key, "web", sizeof(to.to_key));
		to.to_owner = MSG_OWNER_NONE;
		memset(to.to_bearer, 0x5a, sizeof(to.to_bearer));
		to.to_kind = MSG_TUNNEL_PORT;
		to.to_port = 8000;
		ENC(msg_tunnel_open_encode(&to, &p, &n));
		put("msg", "tunnel-open", FK_TUNNEL_OPEN, p, n);
		free(p);
		tn.tn_mode = MSG_TUNNEL_FRAMED;
		ENC(msg_tunnel_encode(&tn, &p, &n));
		put("msg", "tunnel", FK_TUNNEL, p, n);
		free(p);
		memset(&td, 0, sizeof(td));
		td.td_data = bytes;
		td.td_len = sizeof(bytes) - 1;
		ENC(msg_tunnel_data_encode(&td, &p, &n));
		put("msg", "tunnel-data", FK_TUNNEL_DATA, p, n);
		free(p);
		memset(&tc, 0, sizeof(tc));
		tc.tc_bytes = 32768;
		ENC(msg_tunnel_credit_encode(&tc, &p, &n));
		put("msg", "tunnel-credit", FK_TUNNEL_CREDIT, p, n);
		free(p);
		memset(&tl, 0, sizeof(tl));
		tl.tl_how = MSG_TUNNEL_SHUT;
		ENC(msg_tunnel_close_encode(&tl, &p, &n));
		put("msg", "tunnel-close", FK_TUNNEL_CLOSE, p, n);
		free(p);
		memset(&ps, 0, sizeof(ps));
		strlcpy(ps.ps_key, "web", sizeof(ps.ps_key));
		ps.ps_owner = MSG_OWNER_NONE;
		ENC(msg_ports_req_encode(&ps, &p, &n));
		put("msg", "ports-req", FK_PORTS_REQ, p, n);
		free(p);
		memset(&pl, 0, sizeof(pl));
		pl.pl_count = 2;
		pl.pl_ports[0] = 22;
		pl.pl_ports[1] = 8000;
		ENC(msg_portlist_encode(&pl, &p, &n));
		put("msg", "portlist", FK_PORTLIST, p, n);
		free(p);
	}
	/* fencectl port (imsg/msg_port.c). */
	{
		struct msg_port_ticket pk;

		memset(&pk, 0, sizeof(pk));
		strlcpy(pk.pk_key, "web", sizeof(pk.pk_key));
		pk.pk_owner = MSG_OWNER_NONE;
		pk.pk_port = 8000;
		strlcpy(pk.pk_path, "http://127.0.0.1:7700/api/environments/"
		    "web/ports/8000/", sizeof(pk.pk_path));
		strlcpy(pk.pk_url, "http://8000-0123456789abcdef.web."
		    "localhost:7700/.fenced/ticket?t=00", sizeof(pk.pk_url));
		pk.pk_expires_ms = 60000;
		ENC(msg_port_ticket_encode(&pk, &p, &n));
		put("msg", "port-ticket", FK_PORT_TICKET, p, n);
		free(p);
	}
	{
		struct msg_check hc;

		memset(&hc, 0, sizeof(hc));
		hc.hc_kind = CHECK_TIER;
		strlcpy(hc.hc_name, "L1.5", sizeof(hc.hc_name));
		hc.hc_status = CHECK_FAIL;
		hc.hc_default = 1;
		strlcpy(hc.hc_reason, "tier L1.5, backend native: no-cgroups",
		    sizeof(hc.hc_reason));
		strlcpy(hc.hc_fix, "let fenced make cgroups",
		    sizeof(hc.hc_fix));
		strlcpy(hc.hc_detail, "v2; memory: /sys/fs/cgroup/x",
		    sizeof(hc.hc_detail));
		ENC(msg_check_encode(&hc, &p, &n));
		put("msg", "check", FK_CHECK, p, n);
		free(p);
	}

	/* The fencer's usage answer (imsg/msg_usage.c): two fences. */
	{
		struct msg_usage *u;

		if ((u = calloc(1, sizeof(*u))) == NULL)
			err(1, "calloc");
		u->u_boots_queued = 1;
		u->u_probe_slots = 4;
		u->u_fences = 2;
		u->u_nfences = 2;
		strlcpy(u->u_fence[0].uf_key, "work",
		    sizeof(u->u_fence[0].uf_key));
		u->u_fence[0].uf_owner = 1000;
		u->u_fence[0].uf_have = MSG_USAGE_ALL;
		u->u_fence[0].uf_cpu_usec = 123456;
		u->u_fence[0].uf_mem_bytes = 1 << 20;
		u->u_fence[0].uf_mem_peak = 4 << 20;
		u->u_fence[0].uf_pids = 2;
		u->u_fence[0].uf_pids_peak = 9;
		strlcpy(u->u_fence[1].uf_key, "web",
		    sizeof(u->u_fence[1].uf_key));
		u->u_fence[1].uf_have = MSG_USAGE_MEM | MSG_USAGE_PIDS;
		ENC(msg_usage_encode(u, &p, &n));
		put("msg", "usage", FK_USAGE, p, n);
		free(p);
		free(u);
	}

	/*
	 * imsg: streams of frames.  The imsg target's first byte is its
	 * own (how the stream is cut, where descriptors ride); the rest
	 * is the stream.
	 */
	ENC(msg_fence_req_encode(&r, &p, &n));
	frame(&s, &sl, IMSG_CTL_LIST, 0, 0, p, n);
	free(p);
	frame(&s, &sl, IMSG_CTL_SHOW_STATS, 0, 0, NULL, 0);
	ENC(msg_fence_encode(&f, &p, &n));
	frame(&s, &sl, IMSG_FENCE_BOOTED, 7, 1, p, n);
	free(p);
	put("imsg", "stream", 0x11, s, sl);
	free(s);
	s = NULL;
	sl = 0;
	frame(&s, &sl, IMSG_START, 0, 0, NULL, 0);
	put("imsg", "start", 0x00, s, sl);
	free(s);
	s = NULL;
	sl = 0;

	/*
	 * ctl: one request each, as fencectl frames them, from root (the
	 * target's first byte 0); then all of them on one connection from
	 * a plain user (2) and from an admin answered with errors (5).
	 */
	{
		unsigned char	*all = NULL;
		size_t		 alll = 0;

		static const struct { const char *name; uint32_t type; }
		    ctl[] = {
			{ "show-stats", IMSG_CTL_SHOW_STATS },
			{ "doctor", IMSG_CTL_DOCTOR },
			{ "reload", IMSG_CTL_RELOAD },
			{ "log-verbose", IMSG_CTL_LOG_VERBOSE },
			{ "token", IMSG_CTL_TOKEN },
			{ "boot", IMSG_CTL_BOOT },
			{ "stop", IMSG_CTL_STOP },
			{ "list", IMSG_CTL_LIST },
			{ "exec", IMSG_CTL_EXEC },
			{ "git-config", IMSG_CTL_GIT_CONFIG },
			{ "git-init", IMSG_CTL_GIT_INIT },
			{ "probe", IMSG_CTL_PROBE },
			{ "metrics", IMSG_CTL_METRICS },
		};
		size_t	 i;

		for (i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
			p = NULL;
			n = 0;
			switch (ctl[i].type) {
			case IMSG_CTL_LOG_VERBOSE:
				ENC(msg_i32_encode(2, &p, &n));
				break;
			case IMSG_CTL_TOKEN:
				ENC(msg_u32_encode(1, &p, &n));
				break;
			case IMSG_CTL_BOOT:
				ENC(msg_boot_encode(&b, &p, &n));
				break;
			case IMSG_CTL_STOP:
			case IMSG_CTL_LIST:
			case IMSG_CTL_PROBE:
				ENC(msg_fence_req_encode(&r, &p, &n));
				break;
			case IMSG_CTL_EXEC:
				x.x_stdin = NULL;
				x.x_stdin_len = 0;
				ENC(msg_exec_encode(&x, &p, &n));
				break;
			case IMSG_CTL_GIT_CONFIG:
				strlcpy(g.g_key, "work", sizeof(g.g_key));
				ENC(msg_gitconfig_encode(&g, &p, &n));
				break;
			case IMSG_CTL_GIT_INIT:
				strlcpy(gi.gi_key, "work", sizeof(gi.gi_key));
				ENC(msg_gitinit_encode(&gi, &p, &n));
				break;
			}
			frame(&s, &sl, ctl[i].type, 0, 0, p, n);
			frame(&all, &alll, ctl[i].type, 0, 0, p, n);
			free(p);
			put("ctl", ctl[i].name, 0, s, sl);
			free(s);
			s = NULL;
			sl = 0;
		}
		put("ctl", "all-user", 2, all, alll);
		put("ctl", "all-admin-errors", 5, all, alll);
		free(all);
	}
	return (0);
}
