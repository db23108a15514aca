/*
 * report_parts.h - how the HTML report's files (report.h) meet, from the
 * top; each calls only those below it, through what is declared here:
 *   report.c          the page of one run; report_write, which writes it or
 *                     the page of two runs compared
 *   report_compare.c  the page of two runs compared; the movers' section
 *   report_page.c     what every page has: head, links, a flame graph inline
 *   report_data.c     the JSON the pages draw from, --json, sizes and counts
 *   report_samples.c  a sampled run's Samples section and the samples it embeds
 *
 * May call: report.h's types.
 */
#ifndef PROFSVC_REPORT_PARTS_H
#define PROFSVC_REPORT_PARTS_H

#include <stdio.h>

#include "report.h"

/* report_page.c: the document's head and the page's title; its end (the
 * main part closed, the scripts told, 0 or -1); the page's links (label,
 * href pairs) as one line, dot-separated; the flame graph's SVG without
 * its XML declaration, for inline use (0 or -1). */
void report_head(FILE *f, const struct report_input *in);
int report_page_end(FILE *f, const struct report_input *in);
void report_links_line(FILE *f, const struct report_input *in);
int report_flame_inline(FILE *f, const struct time_profile *before, const struct time_profile *p,
                        const char *title, const char *against);

/* report_compare.c: the movers since the other run, as profdb diff lists
 * them; the page of two runs compared (in->sides).  0 or -1. */
int report_changes_html(FILE *f, const struct report_input *in);
int report_compare_write(FILE *f, const struct report_input *in);

/* report_samples.c: the Samples section of in->samples.  0 or -1. */
int report_samples_html(FILE *f, const struct report_input *in);

/* report_data.c: the cost-centre tree as the page's script reads it. */
void report_tree_json(FILE *f, const struct time_profile *p);

#endif
