/*
 * The vm's boot files, checked before every launch: the file is opened
 * once (no symlink as its last component), must be a regular file of
 * root's that nobody else may write, in folders nobody but root may
 * write, and its SHA-256, read through that same descriptor, must be
 * the one fenced.conf gives or the build compiled in (the one images/
 * recorded).  QEMU then reads the descriptor that was checked, never
 * the path: a file renamed over it afterwards is not what boots.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sha2.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fenced.h"
#include "vm.h"

/* Every folder from / down to path's own: root's, and only root's to
 * write (a sticky folder such as /tmp is not enough: root's files only
 * stay root's there, but a name can be taken first). */
static int
vm_path_folders(const char *path, char *err, size_t errlen)
{
	char		 dir[PATH_MAX];
	struct stat	 st;
	char		*slash;

	if (strlcpy(dir, path, sizeof(dir)) >= sizeof(dir))
		return (-1);
	while ((slash = strrchr(dir, '/')) != NULL) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) == -1) {
			snprintf(err, errlen, "%s: %s", dir, strerror(errno));
			return (-1);
		}
		if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
		    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
			snprintf(err, errlen, "%s: a folder of a vm boot file "
			    "must be root's and writable by root only", dir);
			return (-1);
		}
		if (strcmp(dir, "/") == 0)
			break;
	}
	return (0);
}

int
vm_file_verify(const char *path, const char *want, int *fdp, char *err,
    size_t errlen)
{
	char		 got[SHA256_DIGEST_STRING_LENGTH];
	unsigned char	 buf[64 * 1024];
	SHA2_CTX	 ctx;
	struct stat	 st;
	uint64_t	 total = 0;
	ssize_t		 n;
	int		 fd;

	*fdp = -1;
	if (path[0] != '/' || !sha256_hex_valid(want)) {
		snprintf(err, errlen, "%s: not an absolute path with a hash",
		    path);
		return (-1);
	}
	if (vm_path_folders(path, err, errlen) == -1)
		return (-1);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return (-1);
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
	    (uint64_t)st.st_size > VM_FILE_SIZE_MAX) {
		snprintf(err, errlen, "%s: a vm boot file must be a regular "
		    "file of root's, writable by root only, of at most %llu "
		    "GiB", path, (unsigned long long)(VM_FILE_SIZE_MAX >> 30));
		goto fail;
	}
	SHA256Init(&ctx);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		SHA256Update(&ctx, buf, (size_t)n);
		total += (uint64_t)n;
	}
	SHA256End(&ctx, got);
	if (total != (uint64_t)st.st_size) {
		snprintf(err, errlen, "%s: changed while it was read", path);
		goto fail;
	}
	if (strcmp(got, want) != 0) {
		snprintf(err, errlen, "%s: SHA-256 %s is not the expected "
		    "%s", path, got, want);
		goto fail;
	}
	if (lseek(fd, 0, SEEK_SET) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	*fdp = fd;
	return (0);
 fail:
	(void)close(fd);
	return (-1);
}
