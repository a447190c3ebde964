/*
 * The status page (docs/page.md): the files of broker/page/, compiled
 * into the broker by scripts/page.sh, since the chrooted broker opens
 * no file; http_page.c serves them.
 */
#ifndef HTTP_PAGE_H
#define HTTP_PAGE_H

#include <stddef.h>

struct hreq;

struct page_file {
	const char		*pf_path;	/* the request path: "/app.js" */
	const char		*pf_type;	/* its Content-Type */
	const unsigned char	*pf_data;
	size_t			 pf_len;
};

/* The generated table ($(BUILD)/gen/page.c). */
extern const struct page_file	page_files[];
extern const size_t		page_nfiles;

/* http_page.c */
int	 http_page(struct hreq *);

#endif /* HTTP_PAGE_H */
