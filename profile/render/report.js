// report.js - the script of profdb's self-contained HTML report: it reads
// the data profdb embedded (the JSON elements "heap-data", "tree-data") and draws the heap chart (hover values, bands toggled from the key,
// stacked / line / normalised; round ticks, the axis's unit, hp2ps's
// "bytes x seconds" in its header), the cost-centre tree (collapsible,
// sortable by any column, searchable), adds hover and zoom to the eventlog's
// timeline (an SVG the server drew) and wires the page.  No network, no
// library.  Every name is the guest's: it only ever reaches the page as
// textContent or an attribute value, never as markup, and is parsed
// through shown (controls made visible, as in the terminal).
//
// The view is kept in the URL's hash (#mode=line&hide=0,3&q=main&sort=alloc)
// so a view can be shared, and so a test can open the page in a given
// state.
//
// The page is in order of need: the heap chart's data and this script come
// right after the chart, so the chart is drawn while the browser is still
// reading the (much bigger) call tree and flame graph below it; the tree
// is drawn by profsvcReport.tree() once its data has arrived.
(function () {
  'use strict';
  var D = {};
  // a guest's text as the page shows it (profile/safe_text.js, compiled in before this script)
  var shown = profsvcText.shown, revive = profsvcText.revive;
  function data(id) {
    var e = document.getElementById(id);
    return e ? JSON.parse(e.textContent, revive) : null;
  }
  var SVGNS = 'http://www.w3.org/2000/svg';
  var state = { mode: 'stacked', hide: {}, q: '', sort: 'inh_time' };

  function el(tag, attrs, text) {
    var e = tag.indexOf('svg:') === 0 ? document.createElementNS(SVGNS, tag.slice(4))
                                      : document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // The one way the pages write a size (report.c's report_fmt_bytes does
  // the same): units of 1000 with the unit, "512 B", "8.2 kB", "51 MB".
  function fmtBytes(v) {
    var u = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'], i = 0;
    while (v >= 1000 && i < u.length - 1) { v /= 1000; i++; }
    return (i && v < 10 ? v.toFixed(1) : v.toFixed(0)) + ' ' + u[i];
  }
  // a size with its exact count, as the facts show it: "8.2 kB (8,176 bytes)"
  function fmtSize(b) { return b < 1000 ? fmtBytes(b) : fmtBytes(b) + ' (' + grouped(b) + ' bytes)'; }
  function readHash() {
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var p = kv.split('='), k = p[0], v = p[1] || '';
      // a link may carry anything: a malformed escape ("#q=%") is taken as written
      try { v = decodeURIComponent(v); } catch (e) { /* kept as it came */ }
      if (k === 'mode' && /^(stacked|line|normalised)$/.test(v)) state.mode = v;
      if (k === 'hide') v.split(',').forEach(function (i) { if (i !== '') state.hide[+i] = true; });
      if (k === 'q') state.q = v;
      if (k === 'sort' && /^(time|alloc|entries|inh_time|inh_alloc|name)$/.test(v)) state.sort = v;
    });
  }
  function writeHash() {
    var hide = Object.keys(state.hide).filter(function (k) { return state.hide[k]; });
    var h = 'mode=' + state.mode + (hide.length ? '&hide=' + hide.join(',') : '') +
            (state.q ? '&q=' + encodeURIComponent(state.q) : '') + '&sort=' + state.sort;
    // the Samples section's keys (samples.js) stay as they are
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) { if (/^s(from|to|vcpu|focus|ignore|fn)=/.test(kv)) h += '&' + kv; });
    history.replaceState(null, '', '#' + h);
  }

  // ---- the heap chart ------------------------------------------------------
  // The compare page's panels are 900 x 360 units; the run page's chart is
  // as many units wide as it is shown (900 at most), so its text stays
  // 11 px on a phone.
  var W = 900, H = 360;
  // a step of 1, 2 or 5 x 10^n giving about n ticks over span
  function niceStep(span, n) {
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw > 0 ? raw : 1e-9))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  // a tick's label in the unit its step calls for, as hp2ps's axis (k, M)
  function yLabel(v, step) {
    var u = step >= 1e9 ? 3 : step >= 1e6 ? 2 : step >= 1e3 ? 1 : 0;
    return v === 0 ? '0' : +(v / Math.pow(1e3, u)).toPrecision(12) + ['', ' kB', ' MB', ' GB'][u];
  }
  // "166,302,970": hp2ps's bytes x seconds, truncated as it prints it
  function grouped(v) { return String(Math.floor(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function drawHeap() {
    var box = document.getElementById('heap');
    if (!box) return;
    if (!D.heap) D.heap = (data('heap-data') || {}).heap;
    if (!D.heap) return;
    var hp = D.heap, n = hp.times.length, bands = hp.bands;
    var svg = document.getElementById('heap-svg');
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var shownW = svg.getBoundingClientRect().width || 900;
    var W = Math.round(Math.max(300, Math.min(900, shownW))), H = W >= 900 ? 360 : Math.round(Math.max(240, W * 0.7));
    var L = 70, T = 22, PW = W - L - 20, PH = H - T - 40;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('data-samples', String(n));   // what a live test counts
    if (n === 0) {
      svg.appendChild(el('svg:text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 14 },
        'no heap sample yet'));
      return;
    }
    var shown = bands.map(function (b, i) { return !state.hide[i]; });
    var tot = new Array(n).fill(0);
    bands.forEach(function (b, i) { if (shown[i]) b.values.forEach(function (v, k) { tot[k] += v; }); });
    var t0 = hp.times[0], ymax = 0, span = hp.times[n - 1] - t0 || 1;
    if (state.mode === 'normalised') ymax = 1;
    else if (state.mode === 'stacked') ymax = Math.max.apply(null, tot.concat([1]));
    else bands.forEach(function (b, i) { if (shown[i]) ymax = Math.max(ymax, Math.max.apply(null, b.values)); });
    ymax = ymax || 1;
    var X = function (t) { return L + (t - t0) / span * PW; };
    var Y = function (v) { return T + PH - v / ymax * PH; };
    // grid and axes: round ticks, the unit named along the axis
    var ystep = niceStep(ymax, 5);
    for (var g = 0; g * ystep <= ymax * 1.0001; g++) {
      var v = g * ystep, y = Y(v);
      svg.appendChild(el('svg:line', { x1: L, x2: L + PW, y1: y, y2: y, stroke: '#ddd' }));
      svg.appendChild(el('svg:text', { x: L - 6, y: y + 4, 'text-anchor': 'end', 'font-size': 11, 'class': 'ytick',
        'data-value': String(v) }, state.mode === 'normalised' ? +(v * 100).toPrecision(12) + '%' : yLabel(v, ystep)));
    }
    svg.appendChild(el('svg:text', { 'class': 'yunit', 'font-size': 11, 'text-anchor': 'middle',
      transform: 'translate(' + (L - 56) + ' ' + (T + PH / 2) + ') rotate(-90)' },
      state.mode === 'normalised' ? 'share of the total' : 'bytes'));
    // hp2ps's "bytes x seconds": every band's total over time, trapezoids
    var area = 0, prev = 0;
    for (var k2 = 0; k2 < n; k2++) {
      var all = 0;
      for (var b2 = 0; b2 < bands.length; b2++) all += bands[b2].values[k2];
      if (k2) area += (hp.times[k2] - hp.times[k2 - 1]) * (prev + all) / 2;
      prev = all;
    }
    svg.appendChild(el('svg:text', { 'class': 'area', x: L + PW, y: T - 8, 'text-anchor': 'end', 'font-size': 12 },
      grouped(area) + ' bytes x ' + (hp.sample_unit || 'seconds')));
    var tstep = niceStep(span, Math.max(3, Math.round(PW / 100)));
    for (g = 0; g * tstep <= span * 1.0001; g++) {
      var t = t0 + g * tstep;
      svg.appendChild(el('svg:text', { x: X(t), y: T + PH + 16, 'text-anchor': 'middle', 'font-size': 11 },
        String(+(g * tstep).toPrecision(12))));
    }
    svg.appendChild(el('svg:text', { x: L + PW / 2, y: T + PH + 34, 'text-anchor': 'middle', 'font-size': 11 },
      hp.sample_unit || 'seconds'));
    // More samples than pixels: per pixel column, the sample with the
    // largest total stands for the others (the peaks stay visible).
    var pick = [];
    if (n > 2 * PW) {
      var col = -1, best = -1;
      for (var k0 = 0; k0 < n; k0++) {
        var c = Math.floor((X(hp.times[k0]) - L) / 2);
        if (c !== col) { if (best >= 0) pick.push(best); col = c; best = k0; }
        else if (tot[k0] > tot[best]) best = k0;
      }
      pick.push(best);
    } else for (var k1 = 0; k1 < n; k1++) pick.push(k1);
    var lower = new Array(n).fill(0);
    bands.forEach(function (b, i) {
      if (!shown[i]) return;
      var up = new Array(n);
      pick.forEach(function (k) {
        var y = state.mode === 'normalised' ? (tot[k] ? b.values[k] / tot[k] : 0) : b.values[k];
        up[k] = state.mode === 'line' ? y : lower[k] + y;
      });
      var d = 'M' + pick.map(function (k) { return X(hp.times[k]).toFixed(1) + ' ' + Y(up[k]).toFixed(1); }).join(' L');
      if (state.mode !== 'line')
        for (var j = pick.length - 1; j >= 0; j--)
          d += ' L' + X(hp.times[pick[j]]).toFixed(1) + ' ' + Y(lower[pick[j]]).toFixed(1);
      var p = el('svg:path', { d: d + (state.mode === 'line' ? '' : ' Z'), 'class': 'band', 'data-band': i,
        fill: state.mode === 'line' ? 'none' : b.colour,
        // no outlines over thousands of samples: they would be all one saw
        stroke: state.mode === 'line' ? b.colour : n >= 1000 ? 'none' : '#333',
        'stroke-width': state.mode === 'line' ? 2 : 0.3 });
      p.appendChild(el('svg:title', {}, b.name));
      svg.appendChild(p);
      if (state.mode !== 'line') lower = up;
    });
    svg.appendChild(el('svg:rect', { x: L, y: T, width: PW, height: PH, fill: 'none', stroke: '#333' }));
    var cursor = el('svg:line', { y1: T, y2: T + PH, stroke: '#000', 'stroke-dasharray': '3 3', visibility: 'hidden' });
    svg.appendChild(cursor);
    // hover: the sample under the pointer, every shown band's value
    var tip = document.getElementById('heap-tip');
    svg.onmousemove = function (ev) {
      var r = svg.getBoundingClientRect(), x = (ev.clientX - r.left) * W / r.width;
      var t = t0 + (x - L) / PW * span, k = 0;
      while (k + 1 < n && Math.abs(hp.times[k + 1] - t) < Math.abs(hp.times[k] - t)) k++;
      cursor.setAttribute('x1', X(hp.times[k])); cursor.setAttribute('x2', X(hp.times[k]));
      cursor.setAttribute('visibility', 'visible');
      while (tip.firstChild) tip.removeChild(tip.firstChild);
      tip.appendChild(el('b', {}, 't = ' + hp.times[k] + ' s, total ' + fmtBytes(tot[k])));
      for (var i = bands.length - 1; i >= 0; i--)
        if (shown[i] && bands[i].values[k]) tip.appendChild(el('div', {}, fmtBytes(bands[i].values[k]) + '  ' + bands[i].name));
    };
    svg.onmouseleave = function () { cursor.setAttribute('visibility', 'hidden'); };
    // the key, top band first
    var key = document.getElementById('heap-key');
    while (key.firstChild) key.removeChild(key.firstChild);
    for (var i = bands.length - 1; i >= 0; i--) (function (i) {
      var row = el('label', { 'class': 'key' + (shown[i] ? '' : ' off'), 'data-band': i });
      var cb = el('input', { type: 'checkbox' });
      cb.checked = shown[i];
      cb.onchange = function () { state.hide[i] = !cb.checked; writeHash(); drawHeap(); };
      row.appendChild(cb);
      row.appendChild(el('span', { 'class': 'swatch', style: 'background:' + bands[i].colour }));
      row.appendChild(el('span', { 'class': 'name', title: bands[i].name }, bands[i].name));
      row.appendChild(el('span', { 'class': 'peak' }, fmtBytes(bands[i].peak)));
      key.appendChild(row);
    })(i);
    document.querySelectorAll('#heap-modes button').forEach(function (b) {
      b.className = b.getAttribute('data-mode') === state.mode ? 'on' : '';
    });
  }

  // ---- two runs' heaps, side by side (the compare page) --------------------
  // One time and byte scale for both panels; a band's colour is the
  // server's, the same in both (matched by its key: the name without GHC's
  // generated numbers).  Hovering a band names it in both.
  function heapPair() {
    var pd = data('heap-pair-data');
    if (!pd) return;
    var P = pd.panels, ymax = 1, span = 0;
    P.forEach(function (hp) {
      if (!hp || !hp.times.length) return;
      var n = hp.times.length, tot = new Array(n).fill(0);
      hp.bands.forEach(function (b) { b.values.forEach(function (v, k) { tot[k] += v; }); });
      hp.tot = tot;
      ymax = Math.max(ymax, Math.max.apply(null, tot));
      span = Math.max(span, hp.times[n - 1] - hp.times[0]);
    });
    span = span || 1;
    var tip = document.getElementById('heap-pair-tip');
    ['heap-a', 'heap-b'].forEach(function (id, side) {
      var svg = document.getElementById(id), hp = P[side];
      if (!svg) return;
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      if (!hp || !hp.times.length) {
        svg.appendChild(el('svg:text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'font-size': 16 },
          'no heap profile'));
        return;
      }
      var n = hp.times.length, t0 = hp.times[0];
      svg.setAttribute('data-samples', String(n));
      // labels about 11 px on the screen however narrow the panel (a phone's)
      var fs = Math.min(30, Math.max(13, Math.round(11 * W / (svg.clientWidth || W))));
      var L = Math.max(70, Math.round(3.6 * fs)), PW = W - L - Math.max(20, 1.3 * fs);  // this panel's plot
      var T = Math.max(10, Math.round(0.8 * fs)), PH = H - T - 2 * fs - 16;
      var X = function (t) { return L + (t - t0) / span * PW; };
      var Y = function (v) { return T + PH - v / ymax * PH; };
      // round ticks in the unit their step calls for, as the run page's chart
      var ystep = niceStep(ymax, 4);
      for (var g = 0; g * ystep <= ymax * 1.0001; g++) {
        var v = g * ystep, y = Y(v);
        svg.appendChild(el('svg:line', { x1: L, x2: L + PW, y1: y, y2: y, stroke: '#ddd' }));
        svg.appendChild(el('svg:text', { x: L - 6, y: y + fs / 3, 'text-anchor': 'end', 'font-size': fs, 'class': 'ytick' },
          yLabel(v, ystep)));
      }
      var tstep = niceStep(span, 4);
      for (g = 0; g * tstep <= span * 1.0001; g++)
        svg.appendChild(el('svg:text', { x: L + PW * g * tstep / span, y: T + PH + 6 + fs, 'text-anchor': 'middle', 'font-size': fs },
          String(+(g * tstep).toPrecision(12))));
      svg.appendChild(el('svg:text', { x: L + PW / 2, y: T + PH + 8 + 2 * fs, 'text-anchor': 'middle', 'font-size': fs },
        hp.sample_unit || 'seconds'));
      var pick = [];   // at most one sample per two units of width: the one with the largest total
      if (n > PW / 2) {
        var col = -1, best = -1;
        for (var k0 = 0; k0 < n; k0++) {
          var c = Math.floor((X(hp.times[k0]) - L) / 2);
          if (c !== col) { if (best >= 0) pick.push(best); col = c; best = k0; }
          else if (hp.tot[k0] > hp.tot[best]) best = k0;
        }
        pick.push(best);
      } else for (var k1 = 0; k1 < n; k1++) pick.push(k1);
      var lower = new Array(n).fill(0);
      hp.bands.forEach(function (b) {
        var up = lower.slice();
        pick.forEach(function (k) { up[k] = lower[k] + b.values[k]; });
        var d = 'M' + pick.map(function (k) { return X(hp.times[k]).toFixed(1) + ' ' + Y(up[k]).toFixed(1); }).join(' L');
        for (var j = pick.length - 1; j >= 0; j--)
          d += ' L' + X(hp.times[pick[j]]).toFixed(1) + ' ' + Y(lower[pick[j]]).toFixed(1);
        var p = el('svg:path', { d: d + ' Z', 'class': 'band', 'data-key': b.key, fill: b.colour,
          stroke: '#333', 'stroke-width': 0.3 });
        p.appendChild(el('svg:title', {}, b.name + ' (peak ' + fmtBytes(b.peak) + ')'));
        p.onmouseenter = function () { tip.textContent = 'run ' + hp.run + ': ' + b.name + ', peak ' + fmtBytes(b.peak); };
        svg.appendChild(p);
        lower = up;
      });
      svg.appendChild(el('svg:rect', { x: L, y: T, width: PW, height: PH, fill: 'none', stroke: '#333' }));
    });
    // one key for both: each band once, the biggest first, with its peak in each run
    var key = document.getElementById('heap-pair-key'), seen = {}, rows = [];
    P.forEach(function (hp, side) {
      if (!hp) return;
      hp.bands.forEach(function (b) {
        var r = seen[b.key];
        if (!r) { r = seen[b.key] = { name: b.name, colour: b.colour, peak: [0, 0] }; rows.push(r); }
        r.peak[side] = b.peak;
      });
    });
    rows.sort(function (a, b) { return Math.max(b.peak[0], b.peak[1]) - Math.max(a.peak[0], a.peak[1]); });
    while (key.firstChild) key.removeChild(key.firstChild);
    rows.forEach(function (r) {
      var row = el('span', { 'class': 'key' });
      row.appendChild(el('span', { 'class': 'swatch', style: 'background:' + r.colour }));
      row.appendChild(el('span', { 'class': 'name', title: r.name }, r.name));
      row.appendChild(el('span', { 'class': 'peak' }, fmtBytes(r.peak[0]) + ' \u2192 ' + fmtBytes(r.peak[1])));
      key.appendChild(row);
    });
  }

  // ---- the cost-centre tree ------------------------------------------------
  var cols = [['name', 'cost centre'], ['module', 'module'], ['entries', 'entries'], ['time', '%time'],
              ['alloc', '%alloc'], ['inh_time', 'inh %time'], ['inh_alloc', 'inh %alloc']];
  var kids = null, open = {};
  function drawTree() {
    var table = document.getElementById('tree');
    if (!table) return;
    if (!D.tree) D.tree = (data('tree-data') || {}).tree;
    if (!D.tree) return;
    var N = D.tree.nodes;
    if (!kids) {
      kids = N.map(function () { return []; });
      var roots = [];
      N.forEach(function (nd, i) { (nd.parent < 0 ? roots : kids[nd.parent]).push(i); });
      kids.roots = roots;
      N.forEach(function (nd, i) { open[i] = nd.depth < 2; });
      // the hot spot (the stack with the most time of its own) never under a closed node
      var hot = -1;
      N.forEach(function (nd, i) { if (hot < 0 || nd.time > N[hot].time) hot = i; });
      for (var a = hot >= 0 ? N[hot].parent : -1; a >= 0; a = N[a].parent) open[a] = true;
    }
    var q = state.q.toLowerCase(), match = null;
    if (q) {   // matching rows and their ancestors stay
      match = {};
      N.forEach(function (nd, i) {
        if ((nd.name + ' ' + nd.module).toLowerCase().indexOf(q) >= 0)
          for (var a = i; a >= 0 && !match[a]; a = N[a].parent) match[a] = true;
      });
    }
    var body = table.tBodies[0];
    while (body.firstChild) body.removeChild(body.firstChild);
    var head = table.tHead.rows[0];
    while (head.firstChild) head.removeChild(head.firstChild);
    cols.forEach(function (c) {
      var th = el('th', { 'data-col': c[0], 'class': state.sort === c[0] ? 'sorted' : '' }, c[1]);
      th.onclick = function () { state.sort = c[0]; writeHash(); drawTree(); };
      head.appendChild(th);
    });
    var rows = 0, LIMIT = 5000;
    function order(list) {
      var k = state.sort;
      return list.slice().sort(function (a, b) {
        if (k === 'name') return N[a].name < N[b].name ? -1 : N[a].name > N[b].name ? 1 : 0;
        return N[b][k] - N[a][k];
      });
    }
    function walk(list) {
      order(list).forEach(function (i) {
        if (rows >= LIMIT || (match && !match[i])) return;
        var nd = N[i], tr = el('tr', { 'data-node': i });
        var td = el('td', { style: 'padding-left:' + (4 + nd.depth * 14) + 'px' });
        var has = kids[i].length > 0, isOpen = open[i] || !!match;
        var tw = el('span', { 'class': 'twist' }, has ? (isOpen ? '\u25be' : '\u25b8') : '\u00b7');
        if (has) tw.onclick = function () { open[i] = !open[i]; drawTree(); };
        td.appendChild(tw);
        td.appendChild(el('span', { title: nd.src }, nd.name));
        tr.appendChild(td);
        tr.appendChild(el('td', {}, nd.module));
        tr.appendChild(el('td', { 'class': 'num' }, grouped(nd.entries)));
        ['time', 'alloc', 'inh_time', 'inh_alloc'].forEach(function (k) {
          var c = el('td', { 'class': 'num' }, nd[k].toFixed(1));
          c.style.background = 'linear-gradient(90deg,#f3c6a0 ' + Math.min(100, nd[k]) + '%,transparent 0)';
          tr.appendChild(c);
        });
        body.appendChild(tr);
        rows++;
        if (has && isOpen) walk(kids[i]);
      });
    }
    walk(kids.roots);
    document.getElementById('tree-count').textContent =
      rows + (rows >= LIMIT ? '+' : '') + ' of ' + N.length + ' call stacks shown';
  }

  // ---- the eventlog's timeline (drawn by the server: hover and zoom here) ----
  // The plot is an SVG of its own whose viewBox is the part of the run
  // shown; the marker labels and the time axis, outside it, are placed
  // again for each view.  The view outlives a live page's redraws.
  var tlView = null;   // [from, width] in the plot's units; null: the whole run
  var tlDrag = null;   // a drag under way: where it began (it outlives a redraw too)
  window.addEventListener('mouseup', function () { tlDrag = null; }); // once: not per redraw
  function fmtNs(ns) {
    return ns < 1e6 ? (ns / 1e3).toFixed(1) + ' us' : ns < 1e9 ? (ns / 1e6).toFixed(2) + ' ms'
                                                                : (ns / 1e9).toFixed(3) + ' s';
  }
  function tickStep(span) {
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw > 0 ? raw : 1e-9))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function timeline() {
    var svg = document.getElementById('tl-svg');
    if (!svg) return;
    var plot = svg.querySelector('svg.tl-plot'), tip = document.getElementById('tl-tip');
    var PX = +svg.getAttribute('data-plot-x'), PWd = +svg.getAttribute('data-plot-w');
    var endNs = +svg.getAttribute('data-end-ns'), vb = plot.viewBox.baseVal, full = vb.width, ph = vb.height;
    function cur() { return tlView || [0, full]; }
    function apply() {
      var v = cur(), from = v[0], w = v[1];
      plot.setAttribute('viewBox', from + ' 0 ' + w + ' ' + ph);
      svg.querySelectorAll('text.tl-mlabel').forEach(function (t) {
        var x = (+t.getAttribute('data-x') - from) / w * PWd, right = x > PWd * 0.75;
        t.setAttribute('x', (PX + x + (right ? -2 : 2)).toFixed(1));
        t.setAttribute('text-anchor', right ? 'end' : 'start');
        t.setAttribute('visibility', x < 0 || x > PWd ? 'hidden' : 'visible');
      });
      var ax = svg.querySelector('g.tl-axis'), y = +ax.getAttribute('data-y');
      while (ax.firstChild) ax.removeChild(ax.firstChild);
      var s0 = from / full * endNs / 1e9, s1 = (from + w) / full * endNs / 1e9, step = tickStep(s1 - s0);
      for (var i = Math.ceil(s0 / step); i * step <= s1 + step * 1e-6 && i < Math.ceil(s0 / step) + 40; i++) {
        var s = i * step, x = PX + (s - s0) / (s1 - s0) * PWd;
        ax.appendChild(el('svg:line', { x1: x, x2: x, y1: y, y2: y + 4, stroke: '#999' }));
        ax.appendChild(el('svg:text', { x: x, y: y + 16, 'text-anchor': 'middle' }, String(+s.toPrecision(6))));
      }
      svg.setAttribute('data-view', from.toFixed(2) + ' ' + w.toFixed(2));
    }
    function at(ev) {   // the pointer as a fraction of the plot's width
      var r = svg.getBoundingClientRect(), x = (ev.clientX - r.left) * svg.viewBox.baseVal.width / r.width;
      return Math.max(0, Math.min(1, (x - PX) / PWd));
    }
    function zoom(f, a) {
      var v = cur(), nw = Math.min(full, Math.max(full / 100000, v[1] / f));
      var c = v[0] + a * v[1], nf = Math.max(0, Math.min(full - nw, c - a * nw));
      tlView = nw >= full ? null : [nf, nw];
      apply();
    }
    document.querySelectorAll('#timeline button[data-zoom]').forEach(function (b) {
      b.onclick = function () {
        var z = b.getAttribute('data-zoom');
        if (z === 'reset') { tlView = null; apply(); } else zoom(z === 'in' ? 2 : 0.5, 0.5);
      };
    });
    svg.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      zoom(ev.deltaY < 0 ? 1.25 : 0.8, at(ev));
    }, { passive: false });
    svg.onmousedown = function (ev) { tlDrag = { x: at(ev), v: cur().slice() }; ev.preventDefault(); };
    svg.onmousemove = function (ev) {
      var a = at(ev), v = cur();
      if (tlDrag && tlView) {
        tlView = [Math.max(0, Math.min(full - v[1], tlDrag.v[0] - (a - tlDrag.x) * v[1])), v[1]];
        apply();
      }
      var t = (v[0] + a * v[1]) / full * endNs, tg = ev.target, text = 't = ' + (t / 1e9).toFixed(6) + ' s';
      if (tg.classList && tg.classList.contains('gc')) {
        var g = +tg.getAttribute('data-gen'), n = +tg.getAttribute('data-n');
        text += '\n' + (n > 1 ? n + ' GC pauses' : g >= 0 ? 'GC generation ' + g : 'GC') + ': ' +
                fmtNs(+tg.getAttribute('data-ns')) + ' from ' + (+tg.getAttribute('data-start-ns') / 1e9).toFixed(6) + ' s';
        svg.setAttribute('data-hover', 'gc');
      } else if (tg.classList && tg.classList.contains('run')) {
        text += '\ncap ' + tg.parentNode.getAttribute('data-cap') + ': a thread running';
      } else if (tg.classList && (tg.classList.contains('marker') || tg.classList.contains('tl-mlabel'))) {
        text += '\nmarker: ' + tg.querySelector('title').textContent;
      }
      // the heap lines' values at the pointer: their last point at or before it
      var px = v[0] + a * v[1];
      svg.querySelectorAll('polyline').forEach(function (pl) {
        var pts = pl.points, best = null;
        for (var i = 0; i < pts.numberOfItems; i++) {
          var q = pts.getItem(i);
          if (q.x > px) break;
          best = q;
        }
        if (best) text += '\n' + pl.getAttribute('data-what') + ' ' + fmtBytes((+pl.getAttribute('data-base') - best.y) /
          +pl.getAttribute('data-h') * +pl.getAttribute('data-vmax'));
      });
      tip.textContent = text;
    };
    svg.onmouseleave = function () { tlDrag = null; };
    if (tlView) apply();
    svg.setAttribute('data-wired', '1');
  }

  // the chart, now; the tree and the page's controls once they are parsed
  readHash();
  drawHeap();
  var lastWidth = innerWidth;   // a phone turned: the charts drawn for the new width
  window.addEventListener('resize', function () {
    if (innerWidth === lastWidth) return;
    lastWidth = innerWidth;
    drawHeap();
    heapPair();
  });
  // milliseconds from opening the page to the chart drawn (make bench reads it)
  document.body.setAttribute('data-drawn-ms', String(Math.round(performance.now())));
  window.profsvcReport = {
    revive: revive, // for live.js's JSON
    size: fmtSize,  // and its sizes
    // live pages (profdb serve): the chart replaced, or new samples appended
    // when the bands are unchanged; either way drawn again
    setHeap: function (h) {
      D.heap = h;
      drawHeap();
    },
    lastTime: function () {
      return D.heap && D.heap.times.length ? D.heap.times[D.heap.times.length - 1] : null;
    },
    appendSamples: function (d) {
      var hp = D.heap;
      if (!hp || d.from !== hp.times.length || d.bands.length !== hp.bands.length) return false;
      Array.prototype.push.apply(hp.times, d.times);
      hp.bands.forEach(function (b, i) {
        Array.prototype.push.apply(b.values, d.bands[i].values);
        b.peak = d.bands[i].peak;
      });
      drawHeap();
      return true;
    },
    // the timeline section (put in again by a live page): hover and zoom
    timeline: timeline,
    heapPair: heapPair,
    tree: function () {
      var search = document.getElementById('tree-search');
      if (search) {
        search.value = state.q;
        search.oninput = function () { state.q = search.value; writeHash(); drawTree(); };
      }
      var all = document.getElementById('tree-open');
      if (all) all.onclick = function () { D.tree.nodes.forEach(function (n, i) { open[i] = true; }); drawTree(); };
      drawTree();
    },
    ready: function () {
      document.querySelectorAll('#heap-modes button').forEach(function (b) {
        b.onclick = function () { state.mode = b.getAttribute('data-mode'); writeHash(); drawHeap(); };
      });
      timeline();
      document.body.setAttribute('data-ready', '1');
    }
  };
})();
