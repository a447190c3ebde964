/*
 * git identity and repository init, done by the fence's own git run as
 * jobs, with the limits of any command: git knows its configuration
 * format (quoting, sections, includes) and writes it atomically through
 * a lock file, so every other setting of the user's survives.
 *
 * A GIT_CONFIG request is a short chain of jobs: write user.name, write
 * user.email (each only if asked), then read both back.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "log.h"
#include "msg.h"
#include "mp.h"
#include "agent.h"

enum agent_gitstep {
	GIT_SET_NAME = 0,
	GIT_SET_EMAIL,
	GIT_READ,
	GIT_DONE
};

struct agent_gitcfg {
	uint32_t	 gc_id;
	int		 gc_step;
	struct msg_gitconfig gc_req;
	char		 gc_file[PATH_MAX];
};

static int	agent_git_value_ok(const char *);
static int	agent_git_ready(uint32_t);
static void	agent_gitcfg_next(struct agent_gitcfg *);
static void	agent_gitcfg_done(struct agent_job *);
static void	agent_gitcfg_parse(struct agent_gitcfg *,
		    const struct msg_result *);
static int	agent_gitcfg_take(char *, size_t, const char *, size_t);
static void	agent_gitinit_done(struct agent_job *);

/* Not empty, no control character (newlines included). */
static int
agent_git_value_ok(const char *v)
{
	const unsigned char *p;

	if (*v == '\0')
		return (0);
	for (p = (const unsigned char *)v; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			return (0);
	return (1);
}

/* git is there and a job may start; else answered, -1. */
static int
agent_git_ready(uint32_t id)
{
	if (access(AGENT_GIT, X_OK) == -1) {
		agent_error(id, "git-not-installed", "%s: %s", AGENT_GIT,
		    strerror(errno));
		return (-1);
	}
	if (agent_busy()) {
		agent_error(id, "exec-busy", "%d commands are running",
		    AGENT_JOBS_MAX);
		return (-1);
	}
	return (0);
}

void
agent_git_config(uint32_t id, struct msg_gitconfig *g)
{
	struct agent_gitcfg *gc;

	if ((g->g_set_name && !agent_git_value_ok(g->g_name)) ||
	    (g->g_set_email && !agent_git_value_ok(g->g_email))) {
		agent_error(id, "git-bad-value", "a value must be 1..%d bytes "
		    "without control characters", MSG_GIT_VALUE_MAX);
		goto done;
	}
	if (agent_git_ready(id) == -1)
		goto done;
	if ((gc = calloc(1, sizeof(*gc))) == NULL)
		fatal("%s: calloc", __func__);
	gc->gc_id = id;
	gc->gc_req = *g;
	explicit_bzero(gc->gc_req.g_bearer, sizeof(gc->gc_req.g_bearer));
	gc->gc_step = g->g_set_name ? GIT_SET_NAME :
	    g->g_set_email ? GIT_SET_EMAIL : GIT_READ;
	if ((size_t)snprintf(gc->gc_file, sizeof(gc->gc_file), "%s/.gitconfig",
	    agent_env->a_hello.h_home) >= sizeof(gc->gc_file))
		fatalx("%s: home too long", __func__);
	agent_gitcfg_next(gc);
done:
	explicit_bzero(g->g_bearer, sizeof(g->g_bearer));
}

static void
agent_gitcfg_next(struct agent_gitcfg *gc)
{
	const struct msg_hello *h = &agent_env->a_hello;
	struct agent_spawn sp;
	char		*set[] = { "git", "config", "--file", gc->gc_file,
			    "--replace-all", "--", NULL, NULL, NULL };
	char		*get[] = { "git", "config", "-z", "--file",
			    gc->gc_file, "--get-regexp",
			    "^user\\.(name|email)$", NULL };

	memset(&sp, 0, sizeof(sp));
	sp.sp_path = AGENT_GIT;
	sp.sp_cwd = "";
	if (gc->gc_step == GIT_SET_NAME) {
		set[6] = "user.name";
		set[7] = gc->gc_req.g_name;
		sp.sp_argv = set;
	} else if (gc->gc_step == GIT_SET_EMAIL) {
		set[6] = "user.email";
		set[7] = gc->gc_req.g_email;
		sp.sp_argv = set;
	} else
		sp.sp_argv = get;
	if (agent_job_start(gc->gc_id, &sp, h->h_timeout_def,
	    h->h_output_def, agent_gitcfg_done, gc) == NULL) {
		agent_error(gc->gc_id, "exec-failed", "cannot start git: %s",
		    strerror(errno));
		free(gc);
	}
}

static void
agent_gitcfg_done(struct agent_job *j)
{
	struct agent_gitcfg *gc = j->j_arg;
	struct msg_result rs;

	if (agent_job_failed(j, "git-not-installed")) {
		free(gc);
		return;
	}
	agent_job_to_result(j, &rs);
	agent_job_free(j);
	/* --get-regexp exits 1 when nothing is set: no identity yet. */
	if (rs.rs_error[0] != '\0' || (rs.rs_exit != 0 &&
	    !(gc->gc_step == GIT_READ && rs.rs_exit == 1 &&
	    rs.rs_stdout_len == 0))) {
		agent_error(gc->gc_id, "git-config-failed", "%s%sgit exit %d "
		    "signal %d: %.*s", rs.rs_error, rs.rs_error[0] ? ", " : "",
		    rs.rs_exit, rs.rs_signal, (int)(rs.rs_stderr_len > 512 ?
		    512 : rs.rs_stderr_len), rs.rs_stderr ?
		    (const char *)rs.rs_stderr : "");
		goto done;
	}
	if (gc->gc_step == GIT_READ) {
		agent_gitcfg_parse(gc, &rs);
		goto done;
	}
	if (gc->gc_step == GIT_SET_NAME && gc->gc_req.g_set_email)
		gc->gc_step = GIT_SET_EMAIL;
	else
		gc->gc_step = GIT_READ;
	msg_result_free(&rs);
	agent_gitcfg_next(gc);
	return;
done:
	msg_result_free(&rs);
	free(gc);
}

/*
 * "key\nvalue\0" per value, in file order; the last one of a key is the
 * one git uses.  A value we could not return whole is an error, not a
 * silently cut identity.
 */
static void
agent_gitcfg_parse(struct agent_gitcfg *gc, const struct msg_result *rs)
{
	struct msg_gitconfig out;
	const char	*p = (const char *)rs->rs_stdout, *end, *nl, *z;
	void		*buf;
	size_t		 len;
	int		 ok = 1;

	memset(&out, 0, sizeof(out));
	end = p + rs->rs_stdout_len;
	while (p != NULL && p < end && ok) {
		if ((z = memchr(p, '\0', end - p)) == NULL ||
		    (nl = memchr(p, '\n', z - p)) == NULL) {
			ok = 0;
			break;
		}
		if (nl - p == 9 && memcmp(p, "user.name", 9) == 0)
			ok = agent_gitcfg_take(out.g_name, sizeof(out.g_name),
			    nl + 1, z - nl - 1);
		else if (nl - p == 10 && memcmp(p, "user.email", 10) == 0)
			ok = agent_gitcfg_take(out.g_email,
			    sizeof(out.g_email), nl + 1, z - nl - 1);
		p = z + 1;
	}
	if (!ok) {
		agent_error(gc->gc_id, "git-config-failed", "user.name or "
		    "user.email in .gitconfig is too long or not text");
		return;
	}
	if (msg_gitconfig_encode(&out, &buf, &len) == -1)
		fatal("%s: msg_gitconfig_encode", __func__);
	agent_reply(IMSG_AGENT_GIT_IDENTITY, gc->gc_id, buf, len);
}

static int
agent_gitcfg_take(char *dst, size_t size, const char *v, size_t len)
{
	if (len >= size || !mp_utf8_valid(v, len))
		return (0);
	memcpy(dst, v, len);
	dst[len] = '\0';
	return (len == 0 || agent_git_value_ok(dst));
}

void
agent_git_init(uint32_t id, struct msg_gitinit *gi)
{
	const struct msg_hello *h = &agent_env->a_hello;
	struct agent_spawn sp;
	char		*argv[] = { "git", "init", NULL };

	if (agent_git_ready(id) == -1)
		goto done;
	memset(&sp, 0, sizeof(sp));
	sp.sp_path = AGENT_GIT;
	sp.sp_argv = argv;
	sp.sp_cwd = gi->gi_path;
	sp.sp_create = 1;
	if (agent_job_start(id, &sp, h->h_timeout_def, h->h_output_def,
	    agent_gitinit_done, NULL) == NULL)
		agent_error(id, "exec-failed", "cannot start git: %s",
		    strerror(errno));
done:
	explicit_bzero(gi->gi_bearer, sizeof(gi->gi_bearer));
}

static void
agent_gitinit_done(struct agent_job *j)
{
	struct msg_result rs;

	if (agent_job_failed(j, "git-not-installed"))
		return;
	agent_job_to_result(j, &rs);
	agent_result(j->j_id, &rs);
	msg_result_free(&rs);
	agent_job_free(j);
}
