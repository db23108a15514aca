// duration.js - a run's duration as every view shows it, for the pages'
// scripts (catalogue.js, live.js, which make has after it): the one rule
// of view/view_format.c (view_run_duration_us, view_format_duration),
// written again here because a running run's duration is counted in the
// page.  From the run's start to its end (to now while it runs), each
// figure cut, never rounded up: "15ms", "12.3s", "3m20s", "1h02m",
// "2d03h".  The catalogue's browser check compares both on every run.
var profsvcDuration = (function () {
  'use strict';
  function two(n) { return (n < 10 ? '0' : '') + n; }
  function fmt(us) {
    us = Math.max(0, Math.floor(us));
    var s = Math.floor(us / 1e6);
    if (s < 1) return Math.floor(us / 1000) + 'ms';
    if (s < 60) return s + '.' + Math.floor(us / 1e5) % 10 + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + two(s % 60) + 's';
    if (s < 86400) return Math.floor(s / 3600) + 'h' + two(Math.floor(s / 60) % 60) + 'm';
    return Math.floor(s / 86400) + 'd' + two(Math.floor(s / 3600) % 24) + 'h';
  }
  // a run object of docs/json.md (started_us, ended_us), now in us
  function ofRun(r, nowUs) {
    return fmt((r.ended_us || nowUs) - r.started_us);
  }
  return { format: fmt, ofRun: ofRun };
})();
