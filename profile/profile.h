/*
 * profile.h - the map of profile/: reading and drawing profiles, no SQLite
 * and no Xen.  It declares nothing: include the header of what you use.
 *
 * The library's rooms, by what they read and write, from the bottom up.
 * A room calls only rooms listed before it, never one after it, so no two
 * rooms call each other; every room may call util/, below them all
 * (util/safe_text.c escapes guest text for every medium: terminal, JSON,
 * JSON inside a page's script element, SVG and HTML markup):
 *   disk/      what a HaLVM guest writes on a profile disk beside its
 *              profile: the status block in sector 0.  It belongs with the
 *              store's view of the disks, not with a format: the store
 *              decodes it as each disk's sector 0 is written (the profile's
 *              size, whether it was closed), salvages it by majority on
 *              export and writes it for export-disk, the guest model
 *              (frontend-stub/) writes it, import-disk checks it.  No room
 *              of profile/ calls it, and it calls none.
 *   common/    what the parsers of prof/, heap/ and samples/ share
 *   prof/      GHC's time profile (.prof, text or -pj JSON): the readers,
 *              the one model (time_profile.h), ranked and compared
 *   heap/      GHC's heap profile (.hp): the parser and its model
 *              (heap_profile.h), hp2ps's band rules, the bands of two
 *              profiles matched, colours and the SVG chart
 *   eventlog/  GHC's binary eventlog: the decoder (ghc_eventlog.h) and what
 *              its views make of the events (eventlog_summary.h): GC figures,
 *              the .hp model of its heap samples, ghc-events show's lines,
 *              the report's timeline
 *   samples/   stack samples taken from dom0: the stream and its exports
 *              (mapped in samples/samples.h); a time profile of them
 *   trace/     MirageOS traces (mirage-profile's CTF): packets, the trace
 *              walked and exported, its thread timeline, its report section
 *   render/    what a person opens: flame graphs, speedscope files, the HTML
 *              report of a run or of two compared
 *
 * The files (those of samples/ in samples/samples.h):
 *   disk/status_block.c        the status block: encode, decode, majority salvage
 *   common/parse_util.c        lines that arrive in pieces, "line N: ..."
 *                              messages
 *   prof/prof_model.c          the time profile: cost centres, the call tree
 *   prof/prof_text.c           GHC's text .prof read into it
 *   prof/prof_json.c           GHC's -pj JSON read into it
 *   prof/prof_table.c          GHC's table of top cost centres, checked against
 *                              the call tree
 *   prof/prof_feed.c           a .prof fed in pieces, text or JSON told apart
 *   prof/prof_rank.c           cost centres ranked (profdb top's rows)
 *   prof/prof_compare.c        two profiles' call stacks matched by their path
 *   heap/hp_parse.c            the incremental .hp parser
 *   heap/heap_chart.c          hp2ps's band rules: the bands a chart shows
 *   heap/heap_compare.c        two heap profiles' bands matched by name; what a
 *                              profile is by (-hc, -hd, ...)
 *   heap/heap_colours.c        a band one colour in every panel
 *   heap/heap_svg.c            heap charts as SVG, one panel or several
 *   eventlog/ghc_eventlog_fields.c  the events the decoder knows: their fields,
 *                              their names
 *   eventlog/ghc_eventlog.c    GHC's eventlog decoded as it arrives: its units,
 *                              the header, events delivered
 *   eventlog/eventlog_gc.c     GC figures
 *   eventlog/eventlog_heap.c   the heap samples put into the .hp model
 *   eventlog/eventlog_show.c   a line per event as ghc-events show words it
 *   eventlog/eventlog_timeline.c  the report's timeline (GC pauses, heap,
 *                              threads, markers) drawn as SVG
 *   trace/mprof.c              mirage-profile's CTF packets: layout, header
 *                              checks, the event decoder, the CTF metadata
 *   trace/trace_render.c       a trace walked: the CTF stream and its tar, JSON,
 *                              Chrome trace events, the facts show prints
 *   trace/trace_timeline_model.c  the thread timeline's bounded model: two walks
 *                              of the trace, threads, arrows, counters
 *   trace/trace_timeline.c     the thread timeline as JSON, threads grouped by
 *                              label (trace_timeline.js draws it)
 *   trace/trace_view.c         a trace as a section of the HTML report
 *   render/flame.c             flame graphs: folded stacks, JSON, SVG (with
 *                              flame.js, the script inside them)
 *   render/speedscope.c        a time profile in speedscope's file format
 *   render/report_data.c       the report's JSON (its charts' and tree's data,
 *                              --json), sizes and counts as the pages write them
 *   render/report_page.c       what every report page has: head, links, an
 *                              inline flame graph
 *   render/report_compare.c    the page of two runs compared, the movers
 *   render/report_samples.c    a sampled run's Samples section and the samples it
 *                              embeds (samples.js draws it: a strip over time, a
 *                              brushed range, vCPU, focus and ignore, a flame
 *                              graph, the functions, a sandwich)
 *   render/report.c            the HTML report of a run (report.js, report.css),
 *                              or of two (report_parts.h maps its files)
 * The scripts and styles are compiled in by make (render/report_assets.c,
 * trace/trace_assets.c), util/safe_text.js before those showing guest text.
 *
 * ERRORS.  One convention, SQLite's (a code and a message getter), with
 * no state outside the caller's structs:
 *   - A reader fed bytes in pieces (struct time_profile, hp_profile,
 *     samples_profile, gel_decoder) keeps its message and a failed flag
 *     in its struct: its feed and finish return 0 or -1, the message
 *     getter is tp_error, hp_error, samples_error, gel_error ("line N:
 *     ..." in a text format), and a failure is for good: every later
 *     call fails the same way.  The eventlog decoder says two more
 *     things: gel_feed returns 1 once its callback stopped it (the
 *     callback's owner knows why), gel_finish 1 when the log was cut.
 *   - Any other function that can fail does so for the reasons its
 *     declaration names (out of memory, a write error on the caller's
 *     FILE): it returns 0 or -1 (NULL for a maker) and keeps no message,
 *     its caller words it.  The eventlog's views (el_gc, el_show,
 *     el_timeline) also keep a failed flag, and the thread timeline's
 *     model an oom flag, for what failed inside a callback of theirs that
 *     could not return it (out of memory; el_show: past max_bytes).
 *   - A walk with a callback (trace_render_walk, pf_lines_feed) stops
 *     at the callback's first non-zero return and returns it as it is;
 *     pf_lines_feed, the parsers' own, adds its codes PF_TOO_LONG and
 *     PF_NO_MEMORY.  An iterator (mprof_next, hp_next) returns 1 while
 *     there is an item and 0 at the end; a check returns NULL or why not
 *     (mprof_header_check); el_show_event 1 when it wrote a line, 0 if
 *     not, -1 on a write error.
 */
#ifndef PROFSVC_PROFILE_H
#define PROFSVC_PROFILE_H
#endif
