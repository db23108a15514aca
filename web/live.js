// live.js - what makes a run page of profdb serve live: it follows the
// run's event stream (/api/runs/N/events) and hands new heap samples to the
// report's chart (profsvcReport.appendSamples, or setHeap when the bands
// shown changed), keeps the facts table current, and when the run ends
// reloads the page once, which then has the run's final report (the cost
// centres appear: GHC writes the .prof at exit).  A run with GHC's eventlog
// has its timeline section fetched again whenever the stream says the
// eventlog grew (an "eventlog" event): one fetch at a time, the events
// that came meanwhile making one more; the zoom outlives the redraw.
// The facts' duration is counted on each second (web/duration.js's rule).
// A MirageOS trace's thread timeline is fetched again (its JSON model,
// profsvcTraceTimeline.refresh) whenever the stream says the trace grew
// (a "trace" event), one fetch at a time, the view kept.
// Guest text only ever reaches the page as textContent, parsed through
// profsvcReport.revive (controls made visible, as in the terminal).
(function () {
  'use strict';
  var live = document.getElementById('live');
  if (!live) return;
  var url = live.getAttribute('data-events');
  function fact(label, value) {
    document.querySelectorAll('#facts table.facts tr').forEach(function (tr) {
      if (tr.cells.length === 2 && tr.cells[0].textContent === label) tr.cells[1].textContent = value;
    });
  }
  function say(text, cls) {
    live.textContent = text;
    live.className = 'live ' + (cls || '');
  }
  function note(samples, bands, d) {
    var p = document.getElementById('heap-note'), t = profsvcReport.lastTime();
    if (!ended) say('live: ' + samples + ' samples' + (t !== null ? ', the last at ' + t.toFixed(2) + ' s' : ''), 'on');
    if (p) p.textContent = samples + ' samples so far; ' + bands + ' bands shown (hp2ps\'s rules: ' +
      d.dropped_trace + ' trace bands dropped, ' + d.merged_other + ' summed into OTHER). ' +
      'Click a band in the key to hide it.';
  }
  var es = new EventSource(url), ended = false;
  // A run sampled from dom0: its flame graph, drawn by the server, is
  // fetched again every data-refresh ms while the run lasts (the page's
  // own origin; the server escapes the guest's names as in any page).
  var refresh = Number(live.getAttribute('data-refresh') || 0);
  if (refresh > 0) {
    var timer = setInterval(function () {
      if (ended) { clearInterval(timer); return; }
      fetch(location.pathname, {cache: 'no-store'}).then(function (r) { return r.text(); }).then(function (t) {
        var doc = new DOMParser().parseFromString(t, 'text/html'), fresh = doc.getElementById('flame');
        var top = doc.getElementById('top'), oldTop = document.getElementById('top');
        if (top && oldTop) oldTop.replaceWith(document.importNode(top, true));   // no script in it
        var old = document.getElementById('flame');
        if (fresh && old) {
          // the redrawn graph's script does not run when put in: wired
          // here, with the search the reader had typed
          var was = old.querySelector('svg.flamegraph'), term = was && was.getAttribute('data-search');
          var now = document.importNode(fresh, true);
          old.replaceWith(now);
          var svg = now.querySelector('svg.flamegraph');
          if (svg && window.profsvcFlame) {
            window.profsvcFlame(svg);
            if (term && svg.profsvcFlame) svg.profsvcFlame.search(term);
          }
        }
        if (fresh && !old) location.reload(); // the first samples: the whole report
        if (!ended) say('live: stack samples, the flame graph redrawn every ' + refresh / 1000 + ' s', 'on');
      }).catch(function () { say('live: reconnecting to the server', 'bad'); });
    }, refresh);
  }
  // GHC's eventlog: its timeline section, drawn by the server, fetched
  // again when the stream says the eventlog grew (the page's own origin).
  // The section shown, the body says: the bytes announced before its
  // fetch began (it has at least those) and how many redraws so far.
  var tl = document.getElementById('timeline'), tlUrl = tl && tl.getAttribute('data-follow');
  var tlBusy = false, tlWanted = 0, tlDone = 0, tlRedraws = 0;
  function tlFetch() {
    if (tlBusy || ended || tlWanted <= tlDone) return;
    tlBusy = true;
    var want = tlWanted;
    fetch(tlUrl, {cache: 'no-store'}).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return r.text();
    }).then(function (t) {
      var fresh = new DOMParser().parseFromString(t, 'text/html').getElementById('timeline');
      var old = document.getElementById('timeline');
      if (fresh && old && !ended) {
        // a failure drawing it is the page's, said on its console, not
        // taken for the server's (which is tried again)
        try {
          old.replaceWith(document.importNode(fresh, true));
          profsvcReport.timeline();
        } catch (e) {
          console.error('the timeline could not be redrawn: ' + (e && e.stack || e));
        }
        tlRedraws++;
        document.body.setAttribute('data-tl-by', 'eventlog');
        document.body.setAttribute('data-tl-redraws', String(tlRedraws));
        document.body.setAttribute('data-tl-bytes', String(want));
      }
      tlDone = Math.max(tlDone, want);
      return true;
    }).catch(function () {
      return false; // the server went: tried again in a second
    }).then(function (ok) {
      tlBusy = false;
      if (ok) tlFetch(); else setTimeout(tlFetch, 1000);
    });
  }
  if (tlUrl) {
    es.addEventListener('eventlog', function (ev) {
      var n = JSON.parse(ev.data).bytes;
      if (n > tlWanted) tlWanted = n;
      tlFetch();
    });
  }
  // a MirageOS trace: its timeline's model fetched again as it grows
  var trBusy = false, trWanted = 0, trDone = 0, trRedraws = 0;
  function trFetch() {
    if (trBusy || ended || trWanted <= trDone || !window.profsvcTraceTimeline) return;
    trBusy = true;
    var want = trWanted;
    window.profsvcTraceTimeline.refresh().then(function () {
      trRedraws++;
      document.body.setAttribute('data-trace-redraws', String(trRedraws));
      document.body.setAttribute('data-trace-bytes', String(want));
      trDone = Math.max(trDone, want);
      return true;
    }).catch(function () { return false; }).then(function (ok) {
      trBusy = false;
      if (ok) trFetch(); else setTimeout(trFetch, 1000);
    });
  }
  es.addEventListener('trace', function (ev) {
    var n = JSON.parse(ev.data).bytes;
    if (n > trWanted) trWanted = n;
    if (!ended) say('live: the guest\'s trace, ' + n + ' bytes of packets kept', 'on');
    trFetch();
  });
  es.addEventListener('heap', function (ev) {
    var d = JSON.parse(ev.data, profsvcReport.revive); // names as shown
    profsvcReport.setHeap(d.heap);
    note(d.heap.times.length, d.heap.bands.length, d);
  });
  es.addEventListener('samples', function (ev) {
    var d = JSON.parse(ev.data, profsvcReport.revive);
    if (!profsvcReport.appendSamples(d)) { es.close(); location.reload(); return; }
    note(d.from + d.times.length, d.bands.length, d);
  });
  // the run's duration counted on while it runs, by the rule every view
  // has (web/duration.js, before this script)
  var runNow = null;
  function tick() {
    if (!runNow || ended) return;
    fact('duration', runNow.backend_alive === false ? 'unknown (no backend running)'
                     : profsvcDuration.ofRun(runNow, Date.now() * 1000) + ' (still running)');
  }
  setInterval(tick, 1000);
  es.addEventListener('run', function (ev) {
    var r = JSON.parse(ev.data);
    runNow = r;
    tick();
    fact('state', r.state);
    var size = profsvcReport.size;   // "8.2 kB (8,176 bytes)", as the server wrote it
    fact('.prof', r.prof_bytes === null ? '-' : size(r.prof_bytes));
    fact('.hp', r.hp_bytes === null ? '-' : size(r.hp_bytes));
    if (r.eventlog_bytes !== null) fact('eventlog', size(r.eventlog_bytes));
  });
  es.addEventListener('problem', function (ev) {
    say('the store cannot be read: ' + JSON.parse(ev.data, profsvcReport.revive).error + ' (trying again)', 'bad');
  });
  es.onerror = function () {
    if (es.readyState !== EventSource.CLOSED) say('live: reconnecting to the server', 'bad');
  };
  es.addEventListener('end', function (ev) {
    es.close();
    ended = true;
    var st = JSON.parse(ev.data).state;
    fact('state', st);
    say('the run ended: ' + st + '; loading its final report', 'off');
    document.body.setAttribute('data-ended', st);
    setTimeout(function () { location.reload(); }, 500);
  });
})();
