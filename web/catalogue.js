// catalogue.js - the run catalogue of profdb serve: the table the server
// rendered is rebuilt from /api/events (same filter) whenever the store
// changes, so running runs show their sizes growing and new runs appear
// without a reload.  Durations of running runs are counted here, by the
// one rule (web/duration.js, before this script); what a run holds is
// said as the server says it (view_format_holds).  Any two runs ticked
// make the link to their comparison (/compare?a=EARLIER&b=LATER), kept
// across redraws.  Guest text only ever reaches the page as textContent,
// made visible first (shown: /api's JSON carries the exact text).
(function () {
  'use strict';
  var body = document.querySelector('#runs tbody');
  if (!body) return;
  // a fleet catalogue's runs: a host column (the run's own host field)
  var fleet = document.getElementById('runs').getAttribute('data-fleet') === '1';
  // a guest's text as the page shows it (profile/safe_text.js, compiled in before this script)
  var shown = profsvcText.shown, revive = profsvcText.revive;
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // a run's duration (view_format.h's rule); '?' for a running run
  // whose backend is gone (nobody adds to it: its end is not known)
  function dur(r, now) {
    if (r.state === 'running' && r.backend_alive === false) return '?';
    return profsvcDuration.ofRun(r, now);
  }
  function count(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  // bytes as the server writes them (report_fmt_bytes): "8.2 kB", "51 MB"
  function human(b) {
    var u = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'], i = 0, v = b;
    while (v >= 1000 && i < u.length - 1) { v /= 1000; i++; }
    return (i && v < 10 ? v.toFixed(1) : v.toFixed(0)) + ' ' + u[i];
  }
  // a size as the server writes it (pages.c's size_cell): "8.2 kB", the
  // exact bytes in its title and data-bytes
  function size(cls, b) {
    if (b === null) return el('td', { 'class': 'num ' + cls }, '-');
    return el('td', { 'class': 'num ' + cls, 'data-bytes': String(b), title: count(b) + ' bytes' }, human(b));
  }
  // what a run holds, as view_format_holds says it
  function holds(r) {
    var h = [];
    if (r.prof_bytes !== null) h.push('.prof');
    if (r.hp_bytes !== null) h.push('.hp');
    if (r.eventlog_bytes !== null) h.push('eventlog');
    if (r.trace_bytes !== null && r.trace_packets !== null) {
      h.push('trace (' + count(r.trace_packets) + ' packet' + (r.trace_packets === 1 ? '' : 's') + ', ' +
             count(r.trace_events || 0) + ' event' + (r.trace_events === 1 ? '' : 's') + ')');
    } else if (r.trace_bytes !== null) {
      h.push('trace');
    }
    if (r.samples_bytes !== null)
      h.push('samples (' + (r.samples !== null ? count(r.samples) : human(r.samples_bytes)) + ')');
    return h.length ? h.join(', ') : '-';
  }
  // the runs ticked for a comparison, oldest tick first (two at most)
  var picked = [];
  var link = document.getElementById('compare-picked'), said = document.getElementById('picked');
  function showPicked() {
    var ids = picked.slice().sort(function (x, y) { return x - y; });
    body.querySelectorAll('tr').forEach(function (tr) {
      var on = picked.indexOf(+tr.getAttribute('data-run')) >= 0, box = tr.querySelector('input.pick');
      if (box) box.checked = on;
      tr.classList.toggle('picked', on);
    });
    if (!link) return;
    if (ids.length === 2) {
      link.setAttribute('href', '/compare?a=' + ids[0] + '&b=' + ids[1]);
      link.setAttribute('aria-disabled', 'false');
      link.className = 'button';
      said.textContent = 'run ' + ids[1] + ' against run ' + ids[0];
    } else {
      link.removeAttribute('href');
      link.setAttribute('aria-disabled', 'true');
      link.className = 'button off';
      said.textContent = ids.length ? 'run ' + ids[0] + ' ticked: tick one more' : 'none ticked';
    }
  }
  body.addEventListener('change', function (ev) {
    var box = ev.target;
    if (!box.classList || !box.classList.contains('pick')) return;
    var id = +box.value, at = picked.indexOf(id);
    if (box.checked && at < 0) picked.push(id);
    if (!box.checked && at >= 0) picked.splice(at, 1);
    while (picked.length > 2) picked.shift(); // a third tick lets the oldest go
    showPicked();
  });
  // boxes the reader ticked before the script ran (the server's table)
  body.querySelectorAll('input.pick').forEach(function (b) { if (b.checked) picked.push(+b.value); });
  while (picked.length > 2) picked.shift();
  showPicked();
  var runs = null, skew = 0;
  function draw() {
    if (!runs) return;
    var now = Date.now() * 1000 - skew, prev = {};
    while (body.firstChild) body.removeChild(body.firstChild);
    // oldest first, whatever the order shown: each run's earlier run of
    // the same guest, which a comparison takes as a (and the run as b)
    runs.slice().sort(function (x, y) { return x.run_id - y.run_id; }).forEach(function (r) {
      r.prev = prev[r.name]; prev[r.name] = r.run_id;
    });
    runs.forEach(function (r) {
      var tr = el('tr', { 'data-run': r.run_id, 'class': r.state });
      var pick = el('td', { 'class': 'pick' });
      pick.appendChild(el('input', { type: 'checkbox', 'class': 'pick', value: String(r.run_id),
                                     title: 'pick run ' + r.run_id + ' to compare', 'aria-label': 'pick run ' + r.run_id }));
      tr.appendChild(pick);
      var a = el('a', { href: '/runs/' + r.run_id }, String(r.run_id));
      var td = el('td'); td.appendChild(a); tr.appendChild(td);
      if (fleet) tr.appendChild(el('td', { 'class': 'host' }, r.host || ''));
      tr.appendChild(el('td', { 'class': 'name' }, r.name));
      var st = el('td', { 'class': 'state' });
      st.appendChild(el('span', { 'class': 'badge ' + r.state }, r.state === 'running' ? 'live' : r.state));
      tr.appendChild(st);
      tr.appendChild(el('td', {}, r.started));
      tr.appendChild(el('td', { 'class': 'num dur' }, dur(r, now)));
      tr.appendChild(size('prof', r.prof_bytes));
      tr.appendChild(size('hp', r.hp_bytes));
      tr.appendChild(el('td', { 'class': 'holds' }, holds(r)));
      var cmp = el('td');
      if (r.prev) cmp.appendChild(el('a', { href: '/compare?a=' + r.prev + '&b=' + r.run_id, 'class': 'compare',
                                             title: 'run ' + r.prev + ' (earlier) against run ' + r.run_id },
                                       'vs ' + r.prev));
      tr.appendChild(cmp);
      body.appendChild(tr);
    });
    showPicked();
    document.getElementById('count').textContent = runs.length + ' run' + (runs.length === 1 ? '' : 's');
  }
  var es = new EventSource('/api/events' + location.search);
  es.addEventListener('runs', function (ev) {
    runs = JSON.parse(ev.data, revive).runs;
    draw();
    document.body.setAttribute('data-updates', String(+(document.body.getAttribute('data-updates') || 0) + 1));
  });
  es.addEventListener('problem', function (ev) {
    document.getElementById('status').textContent = 'the store cannot be read: ' + JSON.parse(ev.data, revive).error;
  });
  es.onerror = function () {
    document.getElementById('status').textContent = 'reconnecting to the server';
  };
  es.addEventListener('hello', function () { document.getElementById('status').textContent = ''; });
  setInterval(function () { if (runs && runs.some(function (r) { return !r.ended_us; })) draw(); }, 1000);
})();
