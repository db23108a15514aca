/*
 * report_page.c - what every page of the HTML report has (report_parts.h):
 * the document's head and title, the line of links, a flame graph inline.
 *
 * May call: report.h's types, flame.c, util/safe_text (markup).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "report.h"
#include "report_parts.h"
#include "util/safe_text.h"

/* The flame graph's SVG without its XML declaration, for inline use. */
int report_flame_inline(FILE *f, const struct time_profile *before, const struct time_profile *p,
                        const char *title, const char *against)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return -1;
	int rc = before ? flame_svg_diff(m, before, p, FLAME_TIME, title, against) : flame_svg(m, p, FLAME_TIME, title);
	fclose(m);
	const char *body = buf ? strstr(buf, "<svg") : NULL;
	if (rc == 0 && body)
		fputs(body, f);
	free(buf);
	return rc;
}

/* The document's head and the page's title. */
void report_head(FILE *f, const struct report_input *in)
{
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	           "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:%s\">\n"
	           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
	        in->live_events || in->trace_api ? "; connect-src 'self'" : "");
	markup_text_cut(f, in->title, 120);
	fprintf(f, " \xe2\x80\x94 profsvc report</title>\n<style>\n%s</style></head>\n<body>\n<header>",
	        report_css);
	if (in->home) {
		fputs("<nav><a class=\"home\" href=\"", f);
		markup_text(f, in->home);
		fputs("\">\xe2\x86\x90 all runs</a></nav>", f);
	}
	fputs("<h1>", f);
	markup_text(f, in->title);
	fputs("</h1><div class=\"sub\">", f);
	markup_text(f, in->tp && in->tp->command ? in->tp->command
	                                         : in->hp && in->hp->job ? in->hp->job : "");
	fputs("</div></header>\n<main>\n", f);
}

/* The end of every page: its main part closed, the report's script told
 * the page is ready, the page's own script (a live page's), the document
 * closed.  0, or -1 when the stream failed. */
int report_page_end(FILE *f, const struct report_input *in)
{
	fputs("</main>\n<script>profsvcReport.ready();</script>\n", f);
	if (in->page_script)
		fprintf(f, "<script>\n%s</script>\n", in->page_script);
	fputs("</body></html>\n", f);
	return ferror(f) ? -1 : 0;
}

/* The page's links (label, href pairs) as one line, dot-separated. */
void report_links_line(FILE *f, const struct report_input *in)
{
	if (!in->nlinks)
		return;
	fputs("<p class=\"links\">", f);
	for (size_t i = 0; i < in->nlinks; i++) {
		fputs(i ? " \xc2\xb7 <a href=\"" : "<a href=\"", f);
		markup_text(f, in->links[2 * i + 1]);
		fputs("\">", f);
		markup_text(f, in->links[2 * i]);
		fputs("</a>", f);
	}
	fputs("</p>\n", f);
}
