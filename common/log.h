#ifndef LOG_H
#define LOG_H

#include <stdarg.h>

void	log_init(int, int);
void	log_procinit(const char *);
void	log_setverbose(int);
void	log_ratelimit(int);
void	log_keep(char *, size_t);
int	log_getverbose(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	vlog(int, const char *, va_list) __attribute__((format(printf, 2, 0)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif /* LOG_H */
