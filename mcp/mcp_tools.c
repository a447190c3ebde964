/*
 * fence-mcp's tools (docs/mcp.md, "Tools"): each one request on the
 * control socket, as fencectl's command of the same name makes, and
 * its answer as an object; then the fence's state as show environment
 * gives it, so that every result carries its measured level and axis
 * verdicts.  The arguments are checked here, every field of its type
 * and within the bound the request's codec has; an argument no tool
 * knows is refused too (-32602), never ignored.
 */
#include <sys/types.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fenced.h"
#include "imsg.h"
#include "log.h"
#include "msg.h"
#include "names.h"
#include "mcp.h"

#define MCP_BOOT_WAIT_MS (BOOT_AGENT_WAIT_MAX * 1000 + PROBE_TIMEOUT_MS + \
			    MCP_WAIT_MS)
#define MCP_EXEC_WAIT_MS (EXEC_TIMEOUT_MAX + MCP_WAIT_MS)
#define MCP_VERDICT_WAIT_MS (PROBE_TIMEOUT_MS + 5000)
#define MCP_VERDICT_POLL_MS 50

struct mcp_tool {
	const char	*t_name;
	const char	*t_args[8];	/* the arguments it takes */
	int		(*t_fn)(struct mcp_call *);
};

static void	 mcp_show_once(struct mcp_call *, const char *);
static int	 mcp_boot(struct mcp_call *);
static int	 mcp_exec(struct mcp_call *);
static int	 mcp_read(struct mcp_call *);
static int	 mcp_write(struct mcp_call *);
static int	 mcp_list(struct mcp_call *);
static int	 mcp_stop(struct mcp_call *);
static int	 mcp_snap(struct mcp_call *);

static const struct mcp_tool mcp_tools[] = {
	{ "boot", { "key", "tier", "backend", "require", "egress", "inner" },
	    mcp_boot },
	{ "exec", { "key", "argv", "command", "cwd", "timeout_ms", "stdin" },
	    mcp_exec },
	{ "read_file", { "key", "path" }, mcp_read },
	{ "write_file", { "key", "path", "content" }, mcp_write },
	{ "list", { NULL }, mcp_list },
	{ "stop", { "key" }, mcp_stop },
	{ "snapshot", { "key", "name" }, mcp_snap },
	{ "restore", { "key", "name" }, mcp_snap },
	{ "port_open", { "key", "port" }, mcp_port_open },
	{ "port_list", { "key" }, mcp_port_list },
	{ "port_close", { "key", "port" }, mcp_port_close },
	{ "term_open", { "key", "argv", "command", "cols", "rows" },
	    mcp_term_open },
	{ "term_write", { "key", "id", "input" }, mcp_term_write },
	{ "term_read", { "key", "id", "wait_ms" }, mcp_term_read },
	{ "term_close", { "key", "id" }, mcp_term_close }
};

/* What tools/list shows: each tool's description and its arguments. */
static const char mcp_tools_json[] =
"[{\"name\":\"boot\",\"description\":\"Boot a fence (a sandbox) named key, "
"or find it running. tier: L1, L1.5 or L2; backend: native, runsc or vm; "
"require: the least level it must measure (L1 to L4, or L4+runsc: a vm "
"fence with gVisor inside), else it is refused; "
"egress: host:port names it may reach (an L2 fence behind fenced's proxy); "
"inner: runsc (a vm fence's commands in gVisor inside the guest) or none."
"\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"key\":{\"type\":\"string\"},\"tier\":{\"type\":\"string\"},"
"\"backend\":{\"type\":\"string\"},\"require\":{\"type\":\"string\"},"
"\"egress\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"\"inner\":{\"type\":\"string\"}},"
"\"required\":[\"key\"]}},"
"{\"name\":\"exec\",\"description\":\"Run a command in the fence key: argv "
"(a list, no shell) or command (sh -c); cwd in its home; timeout_ms; stdin "
"its input. Returns stdout, stderr, exit and what the fence refused it "
"(denials). Output comes as progress notifications too when a "
"progressToken is given.\",\"inputSchema\":{\"type\":\"object\","
"\"properties\":{\"key\":{\"type\":\"string\"},\"argv\":{\"type\":"
"\"array\",\"items\":{\"type\":\"string\"}},\"command\":{\"type\":"
"\"string\"},\"cwd\":{\"type\":\"string\"},\"timeout_ms\":{\"type\":"
"\"integer\"},\"stdin\":{\"type\":\"string\"}},\"required\":[\"key\"]}},"
"{\"name\":\"read_file\",\"description\":\"Read a file of the fence's home "
"(a path relative to it); a directory is listed.\",\"inputSchema\":{"
"\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"},"
"\"path\":{\"type\":\"string\"}},\"required\":[\"key\",\"path\"]}},"
"{\"name\":\"write_file\",\"description\":\"Write a file of the fence's "
"home, whole (at most 1 MiB of text).\",\"inputSchema\":{\"type\":"
"\"object\",\"properties\":{\"key\":{\"type\":\"string\"},\"path\":{"
"\"type\":\"string\"},\"content\":{\"type\":\"string\"}},\"required\":["
"\"key\",\"path\",\"content\"]}},"
"{\"name\":\"list\",\"description\":\"The caller's fences, each with its "
"state and measured level.\",\"inputSchema\":{\"type\":\"object\","
"\"properties\":{}}},"
"{\"name\":\"stop\",\"description\":\"Stop the fence key; its home goes "
"with it.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"key\":"
"{\"type\":\"string\"}},\"required\":[\"key\"]}},"
"{\"name\":\"snapshot\",\"description\":\"Keep the fence's home as "
"snapshot name.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"key\":{\"type\":\"string\"},\"name\":{\"type\":\"string\"}},"
"\"required\":[\"key\",\"name\"]}},"
"{\"name\":\"restore\",\"description\":\"Make the fence's home snapshot "
"name again.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"key\":{\"type\":\"string\"},\"name\":{\"type\":\"string\"}},"
"\"required\":[\"key\",\"name\"]}},"
"{\"name\":\"port_open\",\"description\":\"Reach a TCP port a program "
"listens on inside the fence (on 127.0.0.1 or any address there): "
"fence-mcp holds a forward, forward an http://127.0.0.1:N/ URL that any "
"local process may use until port_close; path is fenced's own URL of it "
"(it takes the owner's host token), ticket_url opens it once in a "
"browser; access says who may use each.\",\"inputSchema\":{\"type\":"
"\"object\",\"properties\":{\"key\":{\"type\":\"string\"},\"port\":{"
"\"type\":\"integer\",\"minimum\":1,\"maximum\":65535}},\"required\":["
"\"key\",\"port\"]}},"
"{\"name\":\"port_list\",\"description\":\"The ports listening in the "
"fence (listening), and the forwards fence-mcp holds to them (forwards)."
"\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"key\":{"
"\"type\":\"string\"}},\"required\":[\"key\"]}},"
"{\"name\":\"port_close\",\"description\":\"End the forward port_open "
"made, and its connections.\",\"inputSchema\":{\"type\":\"object\","
"\"properties\":{\"key\":{\"type\":\"string\"},\"port\":{\"type\":"
"\"integer\"}},\"required\":[\"key\",\"port\"]}},"
"{\"name\":\"term_open\",\"description\":\"Start a terminal in the "
"fence: argv (a list, no shell) or command (sh -c), neither for the login "
"shell; cols and rows its size (80x24). Returns its id; drive it with "
"term_write and term_read, end it with term_close.\",\"inputSchema\":{"
"\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"},"
"\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
"\"command\":{\"type\":\"string\"},\"cols\":{\"type\":\"integer\"},"
"\"rows\":{\"type\":\"integer\"}},\"required\":[\"key\"]}},"
"{\"name\":\"term_write\",\"description\":\"Type input into terminal "
"id: text, escape sequences as JSON escapes (\\\\n for Enter, \\\\u0003 "
"for ^C), at most 64 KiB waiting.\",\"inputSchema\":{\"type\":\"object\","
"\"properties\":{\"key\":{\"type\":\"string\"},\"id\":{\"type\":"
"\"integer\"},\"input\":{\"type\":\"string\"}},\"required\":[\"key\","
"\"id\",\"input\"]}},"
"{\"name\":\"term_read\",\"description\":\"What terminal id wrote since "
"the last read (at most 64 KiB: dropped counts the older bytes lost), "
"waiting at most wait_ms (0 to 10000) for something; once it ended, "
"ended is true with its exit and signal, or why.\",\"inputSchema\":{"
"\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"},"
"\"id\":{\"type\":\"integer\"},\"wait_ms\":{\"type\":\"integer\","
"\"minimum\":0,\"maximum\":10000}},\"required\":[\"key\",\"id\"]}},"
"{\"name\":\"term_close\",\"description\":\"Kill terminal id (or forget "
"it, ended) and free its place.\",\"inputSchema\":{\"type\":\"object\","
"\"properties\":{\"key\":{\"type\":\"string\"},\"id\":{\"type\":"
"\"integer\"}},\"required\":[\"key\",\"id\"]}}]";

json_t *
mcp_tools_list(void)
{
	json_t		*t;
	json_error_t	 jerr;

	if ((t = json_loads(mcp_tools_json, 0, &jerr)) == NULL)
		fatalx("the tools' table: %s", jerr.text);
	return (t);
}

int
mcp_tool_call(const char *name, struct mcp_call *c)
{
	const struct mcp_tool *t = NULL;
	const char	*k;
	json_t		*v;
	size_t		 i, j;
	int		 known;

	for (i = 0; i < nitems(mcp_tools); i++)
		if (strcmp(mcp_tools[i].t_name, name) == 0)
			t = &mcp_tools[i];
	if (t == NULL) {
		snprintf(c->c_bad, sizeof(c->c_bad), "unknown tool");
		return (-1);
	}
	json_object_foreach(c->c_args, k, v) {
		for (known = 0, j = 0; t->t_args[j] != NULL; j++)
			if (strcmp(t->t_args[j], k) == 0)
				known = 1;
		if (!known) {
			snprintf(c->c_bad, sizeof(c->c_bad), "%s takes no "
			    "argument of that name", t->t_name);
			return (-1);
		}
	}
	c->c_tool = t->t_name;
	if ((c->c_out = json_object()) == NULL) {
		snprintf(c->c_bad, sizeof(c->c_bad), "out of memory");
		return (-1);
	}
	return (t->t_fn(c));
}

/* Argument name as a string of at most size - 1 bytes, or NULL. */
int
mcp_arg_str(struct mcp_call *c, const char *name, int required, size_t size,
    const char **out)
{
	json_t	*v = json_object_get(c->c_args, name);

	*out = NULL;
	if (v == NULL) {
		if (!required)
			return (0);
		snprintf(c->c_bad, sizeof(c->c_bad), "%s is required", name);
		return (-1);
	}
	if (!json_is_string(v) || json_string_length(v) >= size ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(c->c_bad, sizeof(c->c_bad), "%s: a string of at most "
		    "%zu bytes, no NUL", name, size - 1);
		return (-1);
	}
	*out = json_string_value(v);
	return (0);
}

/* The key, into a buffer of FENCE_KEY_SIZE. */
int
mcp_arg_key(struct mcp_call *c, const char *name, char *key)
{
	const char	*s;

	if (mcp_arg_str(c, name, 1, FENCE_KEY_SIZE, &s) == -1)
		return (-1);
	strlcpy(key, s, FENCE_KEY_SIZE);
	return (0);
}

/*
 * An integer argument in lo..hi: def when not given, or required when
 * def is negative.
 */
int
mcp_arg_int(struct mcp_call *c, const char *name, json_int_t lo,
    json_int_t hi, json_int_t def, uint32_t *out)
{
	json_t	*v = json_object_get(c->c_args, name);

	*out = def < 0 ? 0 : (uint32_t)def;
	if (v == NULL && def >= 0)
		return (0);
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		snprintf(c->c_bad, sizeof(c->c_bad), "%s: an integer from "
		    "%lld to %lld%s", name, (long long)lo, (long long)hi,
		    v == NULL ? ", required" : "");
		return (-1);
	}
	*out = (uint32_t)json_integer_value(v);
	return (0);
}

/* A name of a table of names.h: 0 if not given. */
static int
mcp_arg_name(struct mcp_call *c, const char *name, int (*parse)(const char *),
    int *out)
{
	const char	*s;

	*out = 0;
	if (mcp_arg_str(c, name, 0, 32, &s) == -1)
		return (-1);
	if (s != NULL && (*out = parse(s)) <= 0) {
		snprintf(c->c_bad, sizeof(c->c_bad), "%s: unknown", name);
		return (-1);
	}
	return (0);
}

/* fenced's error, in the result: isError. */
void
mcp_failed(struct mcp_call *c, const char *code, const char *message)
{
	c->c_failed = 1;
	json_object_set_new(c->c_out, "error", json_pack("{s:s, s:s}", "code",
	    code, "message", message));
}

/*
 * The answers to a request sent on m up to its END: an ERROR marks the
 * call failed, the rest go to fn.  -1 when fenced's answers stop.
 */
int
mcp_until_end(struct mcp_ctl *m, struct mcp_call *c, int wait_ms,
    mcp_reply_fn fn, void *arg)
{
	struct imsg	 imsg;
	struct msg_error e;
	char		 err[MCP_ERR_LEN];
	uint32_t	 type;
	int		 bad;

	for (;;) {
		if (mcp_ctl_next(m, &imsg, wait_ms, err, sizeof(err)) == -1) {
			mcp_failed(c, "no-answer", err);
			return (-1);
		}
		bad = 0;
		type = imsg.hdr.ih_type;
		if (imsg.hdr.ih_type == IMSG_CTL_END) {
			imsg_free(&imsg);
			return (0);
		} else if (imsg.hdr.ih_type == IMSG_CTL_ERROR) {
			if (msg_error_decode(imsg.data, imsg.len, &e) == -1)
				bad = 1;
			else
				mcp_failed(c, e.e_code, e.e_message);
		} else if (imsg.hdr.ih_type != IMSG_CTL_OK &&
		    (fn == NULL || fn(c, &imsg, arg) == -1))
			bad = 1;
		imsg_free(&imsg);
		if (bad) {
			snprintf(err, sizeof(err), "an answer of fenced "
			    "fence-mcp cannot read (%s)", msg_type_name(type));
			mcp_failed(c, "bad-answer", err);
			return (-1);
		}
	}
}

/* One request, its answers to fn; encoded buf is freed. */
void
mcp_ask(struct mcp_call *c, uint32_t type, void *buf, size_t len,
    int wait_ms, mcp_reply_fn fn, void *arg)
{
	struct mcp_ctl	*m;
	char		 err[MCP_ERR_LEN];

	m = mcp_ctl_open(type, buf, len, err, sizeof(err));
	free(buf);
	if (m == NULL) {
		mcp_failed(c, "no-daemon", err);
		return;
	}
	mcp_until_end(m, c, wait_ms, fn, arg);
	mcp_ctl_close(m);
}

/* A fence as shown: its level and what its verdicts measured. */
static json_t *
mcp_fence_json(const struct msg_fence *f)
{
	json_t	*o, *eg;
	uint32_t i;

	if ((eg = json_array()) == NULL)
		return (NULL);
	for (i = 0; i < f->f_negress && i < EGRESS_LIST_MAX; i++)
		json_array_append_new(eg, json_string(f->f_egress[i]));
	o = json_pack("{s:s, s:I, s:s?, s:s, s:s, s:s, s:s?, s:s, s:i, s:I, "
	    "s:{s:s, s:s, s:s, s:i, s:o, s:s, s:s}}",
	    "key", f->f_key, "owner", (json_int_t)f->f_owner, "ownerName",
	    f->f_owner_name[0] != '\0' ? f->f_owner_name : NULL,
	    "state", fence_state_name(f->f_state),
	    "tier", tier_name(f->f_tier), "backend", backend_name(f->f_backend),
	    "inner", f->f_inner ? "runsc" : NULL,
	    "level", level_name(f->f_level), "pid", (int)f->f_pid,
	    "deadline", (json_int_t)f->f_deadline,
	    "verdicts",
	    "kernel", f->f_kernel == MSG_KERNEL_SEPARATE ? "separate" :
	    f->f_kernel == MSG_KERNEL_UNMEASURED ? "unmeasured" : "shared",
	    "kernel_release", f->f_kernel_release,
	    "surface", f->f_surface,
	    "landlock_abi", f->f_landlock_abi,
	    "egress", eg,
	    "denials", f->f_denials_note[0] == '\0' ? "observed" :
	    f->f_denials_note,
	    "accel", f->f_accel == MSG_ACCEL_KVM ? "kvm" :
	    f->f_accel == MSG_ACCEL_NONE ? "none" : "tcg");
	return (o);
}

static int
mcp_on_fence(struct mcp_call *c, struct imsg *imsg, void *arg)
{
	const char	*field = arg;
	struct msg_fence f;
	json_t		*o, *a;

	/*
	 * show environment KEY's second answer, the last probe's whole
	 * report (docs/http.md's "boundary"): the result keeps the
	 * fence's own verdicts, not the report.
	 */
	if (imsg->hdr.ih_type == IMSG_CTL_VERDICT && strcmp(field, "fence") ==
	    0 && json_object_get(c->c_out, field) != NULL)
		return (0);
	if (imsg->hdr.ih_type != IMSG_CTL_FENCE ||
	    msg_fence_decode(imsg->data, imsg->len, &f) == -1)
		return (-1);
	explicit_bzero(f.f_bearer, sizeof(f.f_bearer));
	if ((o = mcp_fence_json(&f)) == NULL)
		return (-1);
	if (strcmp(field, "fences") != 0)
		return (json_object_set_new(c->c_out, field, o));
	if ((a = json_object_get(c->c_out, field)) == NULL) {
		a = json_array();
		json_object_set_new(c->c_out, field, a);
	}
	return (json_array_append_new(a, o));
}

/* show environment KEY, as "fence" of the result. */
void
mcp_show(struct mcp_call *c, const char *key)
{
	json_object_del(c->c_out, "fence");
	mcp_show_once(c, key);
}

/*
 * After a boot: its first probe's verdict, which comes a moment after
 * the boot's answer (docs/architecture.md): show environment until its
 * level is measured, at most MCP_VERDICT_WAIT_MS (a backend that has
 * no probe, mock, stays unmeasured).
 */
static void
mcp_show_measured(struct mcp_call *c, const char *key)
{
	const char	*level, *state;
	json_t		*f;
	int		 waited;

	for (waited = 0; ; waited += MCP_VERDICT_POLL_MS) {
		mcp_show(c, key);
		f = json_object_get(c->c_out, "fence");
		level = json_string_value(json_object_get(f, "level"));
		state = json_string_value(json_object_get(f, "state"));
		if (level == NULL || strcmp(level, "unmeasured") != 0 ||
		    state == NULL || strcmp(state, "running") != 0 ||
		    waited >= MCP_VERDICT_WAIT_MS)
			return;
		mcp_ctl_sleep(MCP_VERDICT_POLL_MS);
	}
}

/*
 * A request of struct msg_fence_req for key ("": every fence of the
 * caller's), its FENCE answers into field of the result.  -1: it
 * could not be encoded.
 */
static int
mcp_fence_ask(struct mcp_call *c, uint32_t type, const char *key,
    int wait_ms, const char *field)
{
	struct msg_fence_req q;
	void		*buf;
	size_t		 len;

	memset(&q, 0, sizeof(q));
	q.r_owner = MSG_OWNER_NONE;
	strlcpy(q.r_key, key, sizeof(q.r_key));
	if (msg_fence_req_encode(&q, &buf, &len) == -1) {
		snprintf(c->c_bad, sizeof(c->c_bad), "cannot encode");
		return (-1);
	}
	mcp_ask(c, type, buf, len, wait_ms, mcp_on_fence, (void *)field);
	return (0);
}

static void
mcp_show_once(struct mcp_call *c, const char *key)
{
	struct mcp_call	 s;
	json_t		*err;

	/*
	 * Its own call: a fence gone is no failure of the first, and
	 * its error is not the first's either.
	 */
	memset(&s, 0, sizeof(s));
	s.c_out = c->c_out;
	err = json_incref(json_object_get(c->c_out, "error"));
	mcp_fence_ask(&s, IMSG_CTL_LIST, key, MCP_WAIT_MS, "fence");
	if (err != NULL)
		json_object_set_new(c->c_out, "error", err);
	else
		json_object_del(c->c_out, "error");
	if (json_object_get(c->c_out, "fence") == NULL)
		json_object_set_new(c->c_out, "fence", json_null());
}

static int
mcp_boot(struct mcp_call *c)
{
	struct msg_boot	 b;
	json_t		*eg, *v;
	void		*buf;
	const char	*req;
	size_t		 len, i;
	int		 inner;

	memset(&b, 0, sizeof(b));
	if (mcp_arg_key(c, "key", b.b_key) == -1 ||
	    mcp_arg_name(c, "tier", tier_parse, &b.b_tier) == -1 ||
	    mcp_arg_name(c, "backend", backend_parse, &b.b_backend) == -1 ||
	    mcp_arg_str(c, "require", 0, 32, &req) == -1 ||
	    mcp_arg_name(c, "inner", inner_parse, &b.b_inner) == -1)
		return (-1);
	/* L4+runsc, as fencectl takes it: L4 of a fence with the layer
	   inside (docs/vm.md). */
	if (req != NULL) {
		if ((b.b_require = require_parse_inner(req, &inner)) <= 0) {
			snprintf(c->c_bad, sizeof(c->c_bad), "require: one of "
			    "L1, L1.5, L2, L3, L4, L4+runsc");
			return (-1);
		}
		if (inner == INNER_RUNSC) {
			if (b.b_inner == INNER_NONE) {
				snprintf(c->c_bad, sizeof(c->c_bad), "require "
				    "L4+runsc asks for the inner boundary, "
				    "inner none refuses it");
				return (-1);
			}
			b.b_inner = INNER_RUNSC;
		}
	}
	if ((eg = json_object_get(c->c_args, "egress")) != NULL) {
		if (!json_is_array(eg) || json_array_size(eg) >
		    EGRESS_LIST_MAX) {
			snprintf(c->c_bad, sizeof(c->c_bad), "egress: a list "
			    "of at most %d host:port", EGRESS_LIST_MAX);
			return (-1);
		}
		json_array_foreach(eg, i, v) {
			if (!json_is_string(v) || strlcpy(b.b_egress[i],
			    json_string_value(v), EGRESS_ENTRY_LEN) >=
			    EGRESS_ENTRY_LEN) {
				snprintf(c->c_bad, sizeof(c->c_bad), "egress: "
				    "host:port, at most %d bytes",
				    EGRESS_ENTRY_LEN - 1);
				return (-1);
			}
		}
		b.b_negress = json_array_size(eg);
	}
	if (msg_boot_encode(&b, &buf, &len) == -1) {
		snprintf(c->c_bad, sizeof(c->c_bad), "cannot encode");
		return (-1);
	}
	mcp_ask(c, IMSG_CTL_BOOT, buf, len, MCP_BOOT_WAIT_MS, mcp_on_fence,
	    "fence");
	if (!c->c_failed)
		mcp_show_measured(c, b.b_key);
	return (0);
}

/* exec's output so far, each stream bounded. */
struct mcp_output {
	uint8_t		*o_buf[2];
	size_t		 o_len[2];
	uint64_t	 o_total;
	int		 o_streamed;
	int		 o_cut;
};

static void
mcp_output_add(struct mcp_output *o, int i, const uint8_t *p, size_t len)
{
	uint8_t	*n;
	size_t	 room = MCP_OUTPUT_MAX - o->o_len[i];

	if (len > room) {
		o->o_cut = 1;
		len = room;
	}
	if (len == 0)
		return;
	if ((n = realloc(o->o_buf[i], o->o_len[i] + len)) == NULL) {
		o->o_cut = 1;
		return;
	}
	memcpy(n + o->o_len[i], p, len);
	o->o_buf[i] = n;
	o->o_len[i] += len;
}

static void
mcp_output_set(struct mcp_call *c, const char *name, const uint8_t *p,
    size_t len)
{
	char	*s;
	size_t	 n;

	if ((s = mcp_utf8(p, len, &n)) == NULL)
		return;
	json_object_set_new(c->c_out, name, json_stringn(s, n));
	free(s);
}

static int
mcp_on_exec(struct mcp_call *c, struct imsg *imsg, void *arg)
{
	struct mcp_output *o = arg;
	struct msg_chunk ch;
	struct msg_result rs;
	char		*s;
	size_t		 n;

	if (imsg->hdr.ih_type == IMSG_CTL_CHUNK) {
		if (msg_chunk_decode(imsg->data, imsg->len, &ch) == -1)
			return (-1);
		o->o_streamed = 1;
		o->o_total += ch.ch_len;
		mcp_output_add(o, ch.ch_stream == MSG_CHUNK_STDOUT ? 0 : 1,
		    ch.ch_data, ch.ch_len);
		if (c->c_token != NULL &&
		    (s = mcp_utf8(ch.ch_data, ch.ch_len, &n)) != NULL) {
			mcp_progress(c->c_token, o->o_total, s, n);
			free(s);
		}
		msg_chunk_free(&ch);
		return (0);
	}
	if (imsg->hdr.ih_type != IMSG_CTL_RESULT ||
	    msg_result_decode(imsg->data, imsg->len, &rs) == -1)
		return (-1);
	if (!o->o_streamed) {
		mcp_output_add(o, 0, rs.rs_stdout, rs.rs_stdout_len);
		mcp_output_add(o, 1, rs.rs_stderr, rs.rs_stderr_len);
	}
	json_object_set_new(c->c_out, "exit", json_integer(rs.rs_exit));
	json_object_set_new(c->c_out, "signal", json_integer(rs.rs_signal));
	json_object_set_new(c->c_out, "duration_ms",
	    json_integer(rs.rs_duration_ms));
	json_object_set_new(c->c_out, "truncated",
	    json_boolean(rs.rs_truncated || o->o_cut));
	mcp_output_set(c, "denials", (const uint8_t *)(rs.rs_denials != NULL ?
	    rs.rs_denials : ""), rs.rs_denials != NULL ?
	    strlen(rs.rs_denials) : 0);
	if (rs.rs_error[0] != '\0')
		mcp_failed(c, rs.rs_error, rs.rs_message);
	msg_result_free(&rs);
	return (0);
}

/*
 * argv, a list of strings within the codec's bounds, or none; the
 * list's strings are the arguments', the list the caller's to free.
 */
int
mcp_arg_argv(struct mcp_call *c, char ***argv, size_t *argc)
{
	json_t	*a, *v;
	size_t	 i;

	if ((a = json_object_get(c->c_args, "argv")) == NULL)
		return (0);
	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    json_array_size(a) > MSG_ARGV_MAX) {
		snprintf(c->c_bad, sizeof(c->c_bad), "argv: a list of 1 to "
		    "%d strings", MSG_ARGV_MAX);
		return (-1);
	}
	if ((*argv = calloc(json_array_size(a) + 1, sizeof(char *))) ==
	    NULL) {
		snprintf(c->c_bad, sizeof(c->c_bad), "out of memory");
		return (-1);
	}
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || json_string_length(v) >=
		    MSG_ARG_MAX || strlen(json_string_value(v)) !=
		    json_string_length(v)) {
			snprintf(c->c_bad, sizeof(c->c_bad), "argv: strings of "
			    "at most %d bytes, no NUL", MSG_ARG_MAX - 1);
			return (-1);
		}
		(*argv)[i] = (char *)json_string_value(v);
	}
	*argc = json_array_size(a);
	return (0);
}

static int
mcp_exec_args(struct mcp_call *c, struct msg_exec *x)
{
	const char	*s;
	json_t		*t;

	if (mcp_arg_key(c, "key", x->x_key) == -1 ||
	    mcp_arg_argv(c, &x->x_argv, &x->x_argc) == -1 ||
	    mcp_arg_str(c, "command", 0, MSG_COMMAND_MAX,
	    (const char **)&x->x_command) == -1)
		return (-1);
	if ((x->x_argv == NULL) == (x->x_command == NULL)) {
		snprintf(c->c_bad, sizeof(c->c_bad), "exec: argv or command, "
		    "one of the two");
		return (-1);
	}
	if (mcp_arg_str(c, "cwd", 0, sizeof(x->x_cwd), &s) == -1)
		return (-1);
	if (s != NULL)
		strlcpy(x->x_cwd, s, sizeof(x->x_cwd));
	if ((t = json_object_get(c->c_args, "timeout_ms")) != NULL) {
		if (!json_is_integer(t) || json_integer_value(t) < 1 ||
		    json_integer_value(t) > EXEC_TIMEOUT_MAX) {
			snprintf(c->c_bad, sizeof(c->c_bad), "timeout_ms: 1 "
			    "to %d", EXEC_TIMEOUT_MAX);
			return (-1);
		}
		x->x_timeout_ms = json_integer_value(t);
	}
	if (mcp_arg_str(c, "stdin", 0, MSG_STDIN_MAX + 1, &s) == -1)
		return (-1);
	if (s != NULL && *s != '\0') {
		x->x_stdin = (uint8_t *)s;
		x->x_stdin_len = strlen(s);
	}
	return (0);
}

static int
mcp_exec(struct mcp_call *c)
{
	struct msg_exec	 x;
	struct mcp_output o;
	void		*buf;
	size_t		 len;
	int		 r;

	memset(&x, 0, sizeof(x));
	x.x_owner = MSG_OWNER_NONE;
	memset(&o, 0, sizeof(o));
	r = mcp_exec_args(c, &x);
	if (r == 0 && msg_exec_encode(&x, &buf, &len) == -1) {
		snprintf(c->c_bad, sizeof(c->c_bad), "cannot encode");
		r = -1;
	}
	free(x.x_argv);
	if (r == -1)
		return (-1);
	/* The output as it comes, then the result (docs/agent.md). */
	mcp_ask(c, IMSG_CTL_EXEC_STREAM, buf, len, (x.x_timeout_ms ?
	    (int)x.x_timeout_ms : EXEC_TIMEOUT_MAX) + MCP_WAIT_MS,
	    mcp_on_exec, &o);
	mcp_output_set(c, "stdout", o.o_buf[0], o.o_len[0]);
	mcp_output_set(c, "stderr", o.o_buf[1], o.o_len[1]);
	free(o.o_buf[0]);
	free(o.o_buf[1]);
	mcp_show(c, x.x_key);
	return (0);
}

/* A file request's key and path. */
static int
mcp_file_args(struct mcp_call *c, struct msg_file *fl)
{
	const char	*s;

	memset(fl, 0, sizeof(*fl));
	fl->fl_owner = MSG_OWNER_NONE;
	if (mcp_arg_key(c, "key", fl->fl_key) == -1 ||
	    mcp_arg_str(c, "path", 1, sizeof(fl->fl_path), &s) == -1)
		return (-1);
	strlcpy(fl->fl_path, s, sizeof(fl->fl_path));
	return (0);
}

struct mcp_got {
	struct msg_file	 g_file;
	struct msg_filelist g_list;
	int		 g_kind;	/* 1: a chunk, 2: a listing */
};

static int
mcp_on_file(struct mcp_call *c, struct imsg *imsg, void *arg)
{
	struct mcp_got	*g = arg;

	if (g->g_kind != 0)
		return (-1);
	if (imsg->hdr.ih_type == IMSG_CTL_FILE &&
	    msg_file_decode(imsg->data, imsg->len, &g->g_file) == 0)
		g->g_kind = 1;
	else if (imsg->hdr.ih_type == IMSG_CTL_FILE_LIST &&
	    msg_filelist_decode(imsg->data, imsg->len, &g->g_list) == 0)
		g->g_kind = 2;
	return (g->g_kind != 0 ? 0 : -1);
}

static void
mcp_listing(struct mcp_call *c, struct msg_filelist *l)
{
	json_t	*a;
	size_t	 i;
	char	*s;
	size_t	 n;

	if ((a = json_array()) == NULL)
		return;
	for (i = 0; i < l->fls_count; i++) {
		const struct msg_fileent *e = &l->fls_ents[i];

		if ((s = mcp_utf8((const uint8_t *)e->fe_name,
		    strlen(e->fe_name), &n)) == NULL)
			continue;
		json_array_append_new(a, json_pack("{s:s%, s:s#, s:i, s:I}",
		    "name", s, n, "kind", &"?-dlpsco"[e->fe_kind & 7], 1,
		    "mode", (int)e->fe_mode, "size", (json_int_t)e->fe_size));
		free(s);
	}
	json_object_set_new(c->c_out, "entries", a);
	json_object_set_new(c->c_out, "truncated",
	    json_boolean(l->fls_truncated));
}

static int
mcp_read(struct mcp_call *c)
{
	struct msg_file	 fl;
	struct mcp_got	 g;
	struct mcp_output o;
	struct mcp_ctl	*m = NULL;
	char		 err[MCP_ERR_LEN];
	void		*buf;
	size_t		 len;
	int		 last = 0;

	if (mcp_file_args(c, &fl) == -1)
		return (-1);
	if (msg_file_encode(&fl, &buf, &len) == -1) {
		snprintf(c->c_bad, sizeof(c->c_bad), "cannot encode");
		return (-1);
	}
	memset(&o, 0, sizeof(o));
	memset(&g, 0, sizeof(g));
	m = mcp_ctl_open(IMSG_CTL_FILE_GET, buf, len, err, sizeof(err));
	free(buf);
	if (m == NULL)
		mcp_failed(c, "no-daemon", err);
	/* Chunk after chunk, each asked with FILE_MORE (docs/files.md). */
	while (m != NULL && !last) {
		if (mcp_until_end(m, c, MCP_EXEC_WAIT_MS, mcp_on_file, &g) ==
		    -1 || c->c_failed || g.g_kind == 0)
			break;
		if (g.g_kind == 2) {
			mcp_listing(c, &g.g_list);
			msg_filelist_free(&g.g_list);
			break;
		}
		mcp_output_add(&o, 0, g.g_file.fl_data, g.g_file.fl_data_len);
		last = (g.g_file.fl_flags & MSG_FILE_LAST) != 0;
		msg_file_free(&g.g_file);
		g.g_kind = 0;
		if (o.o_cut) {
			mcp_failed(c, "too-large", "the file is larger than "
			    "read_file returns; use exec");
			break;
		}
		if (!last && mcp_ctl_send(m, IMSG_CTL_FILE_MORE, NULL, 0) ==
		    -1) {
			mcp_failed(c, "no-answer", "cannot ask for more");
			break;
		}
	}
	mcp_ctl_close(m);
	if (last)
		mcp_output_set(c, "content", o.o_buf[0], o.o_len[0]);
	free(o.o_buf[0]);
	mcp_show(c, fl.fl_key);
	return (0);
}

static int
mcp_write(struct mcp_call *c)
{
	struct msg_file	 fl;
	struct mcp_got	 g;
	const char	*s;
	void		*buf;
	size_t		 len;

	if (mcp_file_args(c, &fl) == -1 ||
	    mcp_arg_str(c, "content", 1, MSG_FILE_CHUNK + 1, &s) == -1)
		return (-1);
	/* One chunk, the first and the last: written whole or not. */
	fl.fl_mode = 0644;
	fl.fl_flags = MSG_FILE_FIRST | MSG_FILE_LAST;
	fl.fl_data = (uint8_t *)s;
	fl.fl_data_len = strlen(s);
	fl.fl_size = fl.fl_data_len;
	if (msg_file_encode(&fl, &buf, &len) == -1) {
		snprintf(c->c_bad, sizeof(c->c_bad), "cannot encode");
		return (-1);
	}
	memset(&g, 0, sizeof(g));
	mcp_ask(c, IMSG_CTL_FILE_PUT, buf, len, MCP_EXEC_WAIT_MS, mcp_on_file,
	    &g);
	if (g.g_kind == 1) {
		json_object_set_new(c->c_out, "created",
		    json_boolean(g.g_file.fl_created));
		msg_file_free(&g.g_file);
	} else if (g.g_kind == 2)
		msg_filelist_free(&g.g_list);
	if (!c->c_failed)
		json_object_set_new(c->c_out, "bytes",
		    json_integer(fl.fl_data_len));
	mcp_show(c, fl.fl_key);
	return (0);
}

static int
mcp_list(struct mcp_call *c)
{
	json_object_set_new(c->c_out, "fences", json_array());
	return (mcp_fence_ask(c, IMSG_CTL_LIST, "", MCP_WAIT_MS, "fences"));
}

static int
mcp_stop(struct mcp_call *c)
{
	char	 key[FENCE_KEY_SIZE];

	if (mcp_arg_key(c, "key", key) == -1)
		return (-1);
	/* The fence as it was when it stopped: its level with it. */
	return (mcp_fence_ask(c, IMSG_CTL_STOP, key, MCP_BOOT_WAIT_MS,
	    "fence"));
}

static int
mcp_on_snap(struct mcp_call *c, struct imsg *imsg, void *arg)
{
	struct msg_snap_info si;

	if (imsg->hdr.ih_type != IMSG_CTL_SNAP_INFO ||
	    msg_snap_info_decode(imsg->data, imsg->len, &si) == -1)
		return (-1);
	return (json_object_set_new(c->c_out, "snapshot", json_pack(
	    "{s:s, s:s, s:I, s:I, s:s, s:f, s:b}", "key", si.sn_key,
	    "name", si.sn_name, "bytes", (json_int_t)si.sn_bytes,
	    "files", (json_int_t)si.sn_files, "how", si.sn_how,
	    "ms", si.sn_us / 1000.0, "paused", si.sn_frozen)));
}

static int
mcp_snap(struct mcp_call *c)
{
	struct msg_snap	 sq;
	void		*buf;
	size_t		 len;

	memset(&sq, 0, sizeof(sq));
	sq.s_owner = MSG_OWNER_NONE;
	if (mcp_arg_key(c, "key", sq.s_key) == -1 ||
	    mcp_arg_key(c, "name", sq.s_name) == -1)
		return (-1);
	sq.s_op = strcmp(c->c_tool, "restore") == 0 ? SNAP_RESTORE :
	    SNAP_CREATE;
	if (msg_snap_encode(&sq, &buf, &len) == -1) {
		snprintf(c->c_bad, sizeof(c->c_bad), "cannot encode");
		return (-1);
	}
	mcp_ask(c, IMSG_CTL_SNAP, buf, len, MCP_BOOT_WAIT_MS, mcp_on_snap,
	    NULL);
	mcp_show(c, sq.s_key);
	return (0);
}
