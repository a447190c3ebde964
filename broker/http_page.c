/*
 * GET / and the files of the status page (docs/page.md), answered
 * before the token is looked for: the page holds no secret, it asks its
 * user for the token and sends it with every API call it makes.  Only
 * the paths of page_files[] exactly, without a query, are served so;
 * every other request is the API's, token first.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <string.h>

#include <event2/http.h>

#include "http.h"
#include "http_page.h"

/*
 * Nothing but the page's own files, no inline script or style, no
 * frame of it anywhere.
 */
#define PAGE_CSP	"default-src 'self'; frame-ancestors 'none'"

static const struct page_file *
page_find(const char *path)
{
	size_t	 i;

	for (i = 0; i < page_nfiles; i++)
		if (strcmp(page_files[i].pf_path, path) == 0)
			return (&page_files[i]);
	return (NULL);
}

/*
 * hr asks for a file of the page: answer it (405 for a method other
 * than GET or HEAD) and return 1; 0 for any other path, unanswered.
 */
int
http_page(struct hreq *hr)
{
	const struct evhttp_uri	*uri;
	const struct page_file	*pf;
	const char		*path;
	int			 method;

	uri = evhttp_request_get_evhttp_uri(hr->hr_req);
	if (uri == NULL || (path = evhttp_uri_get_path(uri)) == NULL ||
	    evhttp_uri_get_query(uri) != NULL ||
	    evhttp_uri_get_fragment(uri) != NULL ||
	    (pf = page_find(path)) == NULL)
		return (0);
	method = evhttp_request_get_command(hr->hr_req);
	if (method != EVHTTP_REQ_GET && method != EVHTTP_REQ_HEAD) {
		http_header(hr, "Allow", "GET, HEAD");
		http_error(hr, 405, "method-not-allowed", "allowed here: "
		    "GET, HEAD");
		return (1);
	}
	http_header(hr, "Content-Security-Policy", PAGE_CSP);
	http_header(hr, "Referrer-Policy", "no-referrer");
	http_reply_static(hr, 200, pf->pf_type, pf->pf_data, pf->pf_len);
	return (1);
}
