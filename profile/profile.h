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
 *   common/parse_util.c        growing arrays, lines that arrive in pieces,
 *                              "line N: ..." messages
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
 *   render/report.c            the HTML report of a run (report.js, report.css),
 *                              or of two (report_parts.h maps its files)
 * The scripts and styles are compiled in by make (render/report_assets.c,
 * trace/trace_assets.c), util/safe_text.js before those showing guest text.
 */
#ifndef PROFSVC_PROFILE_H
#define PROFSVC_PROFILE_H
#endif
