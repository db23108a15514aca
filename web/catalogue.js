// catalogue.js - the run catalogue of profdb serve: the table the server
// rendered is rebuilt from /api/events (same filter) whenever the store
// changes, so running runs show their sizes growing and new runs appear
// without a reload.  Durations of running runs are counted here.  Guest
// text only ever reaches the page as textContent, made visible first
// (shown: /api's JSON carries the exact text).
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
  function dur(us) {
    var s = us / 1e6;
    if (s < 60) return s.toFixed(1) + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm' + ('0' + Math.floor(s % 60)).slice(-2) + 's';
    return Math.floor(s / 3600) + 'h' + ('0' + Math.floor(s % 3600 / 60)).slice(-2) + 'm';
  }
  // a size as the server writes it (pages.c's size_cell): "8.2 kB", the
  // exact bytes in its title and data-bytes
  function size(cls, b) {
    if (b === null) return el('td', { 'class': 'num ' + cls }, '-');
    var u = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'], i = 0, v = b;
    while (v >= 1000 && i < u.length - 1) { v /= 1000; i++; }
    return el('td', { 'class': 'num ' + cls, 'data-bytes': String(b),
                      title: String(b).replace(/\B(?=(\d{3})+(?!\d))/g, ',') + ' bytes' },
              (i && v < 10 ? v.toFixed(1) : v.toFixed(0)) + ' ' + u[i]);
  }
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
      var a = el('a', { href: '/runs/' + r.run_id }, String(r.run_id));
      var td = el('td'); td.appendChild(a); tr.appendChild(td);
      if (fleet) tr.appendChild(el('td', { 'class': 'host' }, r.host || ''));
      tr.appendChild(el('td', { 'class': 'name' }, r.name));
      var st = el('td', { 'class': 'state' });
      st.appendChild(el('span', { 'class': 'badge ' + r.state }, r.state === 'running' ? 'live' : r.state));
      tr.appendChild(st);
      tr.appendChild(el('td', {}, r.started));
      tr.appendChild(el('td', { 'class': 'num' }, dur((r.ended_us || now) - r.started_us)));
      tr.appendChild(size('prof', r.prof_bytes));
      tr.appendChild(size('hp', r.hp_bytes));
      var cmp = el('td');
      if (r.prev) cmp.appendChild(el('a', { href: '/compare?a=' + r.prev + '&b=' + r.run_id, 'class': 'compare',
                                             title: 'run ' + r.prev + ' (earlier) against run ' + r.run_id },
                                       'vs ' + r.prev));
      tr.appendChild(cmp);
      body.appendChild(tr);
    });
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
