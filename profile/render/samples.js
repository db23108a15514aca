// samples.js - the Samples section of a sampled run's page (report_samples.c
// writes its places and embeds the samples as "samples-data"): a strip of
// the samples over time, stacked by vCPU, where a drag chooses a time
// range; a vCPU, focus and ignore (regular expressions over function
// names: a sample is kept when a frame matches focus and none matches
// ignore, as profdb top --focus/--ignore); the flame graph of the samples
// kept, the table of their functions (self: the leaf; total: anywhere on
// the stack, once a sample; shares of the time the selected samples stand
// for) and the sandwich of a function clicked (its callers, the function
// right above it, and callees, right below; its calls of itself left
// out), all recomputed here from the embedded samples: no network.
// The view is kept in the URL's hash (sfrom, sto in seconds, svcpu,
// sfocus, signore, sfn), beside report.js's keys, so a reload or a link
// shows the same.  Names are the guest's: shown (profsvcText) as text,
// never as markup.  No library.
(function () {
  'use strict';
  var root = document.getElementById('samples'), dataEl = document.getElementById('samples-data');
  if (!root || !dataEl) return;
  var shown = profsvcText.shown, D = JSON.parse(dataEl.textContent, profsvcText.revive);
  var SVGNS = 'http://www.w3.org/2000/svg', N = D.t.length, FN = D.fns.length;
  var st = { from: null, to: null, vcpu: -1, focus: '', ignore: '', fn: '' };
  var span = 0;
  for (var i = 0; i < N; i++) if (D.t[i] > span) span = D.t[i];
  span = Math.max(span + 1, 1);   // microseconds
  var COLOURS = ['#d9534f', '#5b8def', '#e8a33d', '#4caf7a', '#a066c8', '#3bb5c4', '#c46a3b', '#8a9a2b'];

  function el(tag, attrs, text) {
    var e = tag.indexOf('svg:') === 0 ? document.createElementNS(SVGNS, tag.slice(4)) : document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function $(id) { return document.getElementById(id); }
  function pct(a, b) { return b ? (100 * a / b).toFixed(1) : '0.0'; }
  function base(m) { var i = m.lastIndexOf('/'); return i >= 0 && i < m.length - 1 ? m.slice(i + 1) : m; }
  function secs(us) { return +(us / 1e6).toFixed(3); }

  // ---- the URL ---------------------------------------------------------------
  function readHash() {
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      var p = kv.split('='), k = p[0], v = p.slice(1).join('=');
      try { v = decodeURIComponent(v); } catch (e) { /* as written */ }
      if ((k === 'sfrom' || k === 'sto') && v !== '' && isFinite(+v)) st[k.slice(1)] = Math.round(+v * 1e6);
      if (k === 'svcpu' && /^-?\d+$/.test(v)) st.vcpu = +v;
      if (k === 'sfocus') st.focus = v;
      if (k === 'signore') st.ignore = v;
      if (k === 'sfn') st.fn = v;
    });
  }
  function writeHash() {
    var keep = location.hash.replace(/^#/, '').split('&').filter(function (kv) {
      return kv && !/^s(from|to|vcpu|focus|ignore|fn)=/.test(kv);
    });
    if (st.from !== null) keep.push('sfrom=' + secs(st.from), 'sto=' + secs(st.to));
    if (st.vcpu >= 0) keep.push('svcpu=' + st.vcpu);
    if (st.focus) keep.push('sfocus=' + encodeURIComponent(st.focus));
    if (st.ignore) keep.push('signore=' + encodeURIComponent(st.ignore));
    if (st.fn) keep.push('sfn=' + encodeURIComponent(st.fn));
    history.replaceState(null, '', keep.length ? '#' + keep.join('&') : location.pathname + location.search);
  }

  // ---- which samples ---------------------------------------------------------
  function regex(s, input) {
    input.classList.remove('bad');
    if (!s) return null;
    try { return new RegExp(s); } catch (e) { input.classList.add('bad'); return undefined; }
  }
  var stackKeep = null, badRe = false;
  function keepStacks() {
    var f = regex(st.focus, $('samples-focus')), g = regex(st.ignore, $('samples-ignore'));
    badRe = f === undefined || g === undefined;
    var mf = [], mg = [];
    for (var i = 0; i < FN; i++) {
      var n = D.fns[i];
      mf[i] = f ? f.test(n[0]) || f.test(n[1]) : false;
      mg[i] = g ? g.test(n[0]) || g.test(n[1]) : false;
    }
    stackKeep = D.stacks.map(function (s) {
      var inF = !f, inG = false;
      s.forEach(function (fn) { inF = inF || mf[fn]; inG = inG || mg[fn]; });
      return inF && !inG;
    });
  }
  function inScope(i) {
    return (st.from === null || (D.t[i] >= st.from && D.t[i] < st.to)) && (st.vcpu < 0 || D.v[i] === st.vcpu);
  }
  // the selected samples: scope (range, vCPU) and kept (focus, ignore)
  function select() {
    var r = { kept: [], scopeN: 0, scopeNs: 0, keptNs: 0 };
    for (var i = 0; i < N; i++) {
      if (!inScope(i)) continue;
      r.scopeN++; r.scopeNs += D.w[i];
      if (!stackKeep[D.k[i]]) continue;
      r.kept.push(i); r.keptNs += D.w[i];
    }
    return r;
  }

  // ---- the strip: samples kept per time bucket, stacked by vCPU --------------
  var drag = null;
  function drawStrip() {
    var box = $('samples-strip'), W = Math.max(200, Math.min(box.clientWidth || 900, 1400)), H = 64, B = Math.min(150, Math.floor(W / 5));
    var V = Math.max(D.vcpus, 1), counts = [], top = 1;
    for (var b = 0; b < B; b++) { counts.push([]); for (var v = 0; v < V; v++) counts[b].push(0); }
    for (var i = 0; i < N; i++) {
      if (!stackKeep[D.k[i]]) continue;
      var bk = Math.min(B - 1, Math.floor(D.t[i] / span * B));
      counts[bk][Math.min(D.v[i], V - 1)]++;
    }
    counts.forEach(function (c) { top = Math.max(top, c.reduce(function (a, x) { return a + x; }, 0)); });
    var svg = el('svg:svg', { width: W, height: H + 16, viewBox: '0 0 ' + W + ' ' + (H + 16), 'class': 'samples-strip' });
    var bw = W / B;
    counts.forEach(function (c, b) {
      var y = H;
      c.forEach(function (n, v) {
        if (!n) return;
        var h = n / top * (H - 2);
        y -= h;
        svg.appendChild(el('svg:rect', { x: (b * bw).toFixed(2), y: y.toFixed(2), width: Math.max(bw - 0.5, 0.5).toFixed(2),
                                         height: h.toFixed(2), fill: COLOURS[v % COLOURS.length],
                                         opacity: st.vcpu < 0 || st.vcpu === v ? 1 : 0.2, 'class': 'bucket' }));
      });
    });
    svg.appendChild(el('svg:text', { x: 2, y: H + 13, 'class': 'axis' }, '0 s'));
    svg.appendChild(el('svg:text', { x: W - 2, y: H + 13, 'text-anchor': 'end', 'class': 'axis' }, secs(span) + ' s'));
    if (st.from !== null) {
      var x0 = st.from / span * W, x1 = st.to / span * W;
      svg.appendChild(el('svg:rect', { x: x0.toFixed(2), y: 0, width: Math.max(x1 - x0, 1).toFixed(2), height: H,
                                       'class': 'brush', fill: 'rgba(60,120,220,0.18)', stroke: '#3c78dc' }));
    }
    function at(ev) { var r = svg.getBoundingClientRect(); return Math.max(0, Math.min(W, (ev.clientX - r.left) / r.width * W)); }
    svg.addEventListener('pointerdown', function (ev) { drag = { x: at(ev) }; svg.setPointerCapture(ev.pointerId); ev.preventDefault(); });
    svg.addEventListener('pointermove', function (ev) {
      if (!drag) return;
      var x = at(ev), b = svg.querySelector('rect.brush') || svg.appendChild(el('svg:rect', { y: 0, height: H, 'class': 'brush',
        fill: 'rgba(60,120,220,0.18)', stroke: '#3c78dc' }));
      b.setAttribute('x', Math.min(x, drag.x).toFixed(2));
      b.setAttribute('width', Math.max(Math.abs(x - drag.x), 1).toFixed(2));
    });
    svg.addEventListener('pointerup', function (ev) {
      if (!drag) return;
      var x = at(ev), a = Math.min(x, drag.x), b = Math.max(x, drag.x);
      drag = null;
      if (b - a < 3) { st.from = st.to = null; } else { st.from = Math.floor(a / W * span); st.to = Math.ceil(b / W * span); }
      update();
    });
    var key = el('div', { 'class': 'note samples-key' });
    for (var k = 0; k < V && k < 16; k++) {
      var sw = key.appendChild(el('span', { style: 'display:inline-block;width:10px;height:10px;margin:0 3px 0 8px;background:' + COLOURS[k % COLOURS.length] }));
      sw.setAttribute('aria-hidden', 'true');
      key.appendChild(document.createTextNode('vCPU ' + k));
    }
    box.replaceChildren(svg, key);
  }

  // ---- the functions ---------------------------------------------------------
  function functions(sel) {
    var self = new Float64Array(FN), tot = new Float64Array(FN), selfN = new Uint32Array(FN), totN = new Uint32Array(FN);
    var seen = new Int32Array(FN).fill(-1);
    sel.kept.forEach(function (i) {
      var s = D.stacks[D.k[i]], w = D.w[i];
      self[s[0]] += w; selfN[s[0]]++;
      s.forEach(function (fn) { if (seen[fn] !== i) { seen[fn] = i; tot[fn] += w; totN[fn]++; } });
    });
    var rows = [];
    for (var f = 0; f < FN; f++) if (totN[f]) rows.push({ fn: f, self: self[f], tot: tot[f], selfN: selfN[f], totN: totN[f] });
    rows.sort(function (a, b) { return b.self - a.self || b.tot - a.tot || a.fn - b.fn; });
    return rows;
  }
  function drawTable(sel, rows) {
    var tb = $('samples-table').tBodies[0];
    tb.replaceChildren();
    rows.slice(0, 40).forEach(function (r) {
      var n = D.fns[r.fn], tr = el('tr', { 'data-fn': r.fn });
      tr.appendChild(el('td', { 'class': 'name' }, n[0]));
      tr.appendChild(el('td', { title: n[2] }, base(n[2])));
      tr.appendChild(el('td', { 'class': 'num' }, String(r.selfN)));
      tr.appendChild(el('td', { 'class': 'num' }, String(r.totN)));
      var sp = pct(r.self, sel.scopeNs);
      tr.appendChild(el('td', { 'class': 'num', style: 'background:linear-gradient(90deg,#f3c6a0 ' + Math.min(+sp, 100) + '%,transparent 0)' }, sp));
      tr.appendChild(el('td', { 'class': 'num' }, pct(r.tot, sel.scopeNs)));
      tr.appendChild(el('td', { 'class': 'src' }, n[3]));
      if (n[0] === st.fn) tr.className = 'picked';
      tr.onclick = function () { pick(n[0]); };
      tb.appendChild(tr);
    });
  }

  // ---- the flame graph of the samples kept ---------------------------------------
  function hue(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    return 'hsl(' + (10 + h % 40) + ',' + (70 + h % 20) + '%,' + (55 + h % 15) + '%)';
  }
  function drawFlame(sel) {
    var tree = { kids: new Map(), v: 0 }, depth = 0;
    sel.kept.forEach(function (i) {
      var s = D.stacks[D.k[i]], node = tree, w = D.w[i];
      tree.v += w;
      for (var k = s.length - 1; k >= 0; k--) {
        var c = node.kids.get(s[k]);
        if (!c) { c = { fn: s[k], kids: new Map(), v: 0 }; node.kids.set(s[k], c); }
        c.v += w;
        node = c;
      }
      depth = Math.max(depth, s.length);
    });
    var box = $('samples-flame'), W = Math.max(200, Math.min(box.clientWidth || 900, 1400)), ROW = 18;
    var H = Math.max(depth, 1) * ROW + 2;
    var svg = el('svg:svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'class': 'samples-flame' });
    function lay(node, x, d) {
      var cx = x;
      node.kids.forEach(function (c) {
        var w = tree.v ? c.v / tree.v * W : 0;
        if (w >= 0.3) {
          var name = D.fns[c.fn][0], g = el('svg:g', { 'class': 'sframe', 'data-fn': c.fn });
          g.appendChild(el('svg:title', {}, name + '\n' + pct(c.v, sel.scopeNs) + '% of the time (' + (c.v / 1e9).toFixed(3) + ' s)'));
          g.appendChild(el('svg:rect', { x: cx.toFixed(2), y: H - (d + 1) * ROW, width: Math.max(w - 0.5, 0.3).toFixed(2), height: ROW - 1,
                                         fill: name === st.fn ? '#c040c0' : hue(name), rx: 1 }));
          if (w > 30) {
            var chars = Math.floor((w - 6) / 7), label = name.length > chars ? name.slice(0, Math.max(chars - 1, 1)) + '\u2026' : name;
            g.appendChild(el('svg:text', { x: (cx + 3).toFixed(2), y: H - d * ROW - 5 }, label));
          }
          g.onclick = function () { pick(name); };
          svg.appendChild(g);
          lay(c, cx, d + 1);
        }
        cx += w;
      });
    }
    lay(tree, 0, 0);
    box.replaceChildren(svg);
  }

  // ---- the sandwich --------------------------------------------------------------
  function drawSandwich(sel) {
    var box = $('samples-sandwich');
    box.replaceChildren();
    if (!st.fn) return;
    var mask = D.fns.map(function (n) { return n[0] === st.fn || n[1] === st.fn; });
    var me = { self: 0, tot: 0, selfN: 0, totN: 0 }, up = new Map(), down = new Map();
    function add(m, fn, i, w) {
      var e = m.get(fn) || { fn: fn, n: 0, ns: 0, last: -1 };
      if (e.last !== i) { e.last = i; e.n++; e.ns += w; }
      m.set(fn, e);
    }
    sel.kept.forEach(function (i) {
      var s = D.stacks[D.k[i]], w = D.w[i], hit = false;
      for (var k = 0; k < s.length; k++) {
        if (!mask[s[k]]) continue;
        if (!hit) { hit = true; me.tot += w; me.totN++; }
        if (k === 0) { me.self += w; me.selfN++; }
        var a = k + 1 < s.length ? s[k + 1] : -1, b = k > 0 ? s[k - 1] : -1;
        if (a < 0 || !mask[a]) add(up, a, i, w);
        if (b < 0 || !mask[b]) add(down, b, i, w);
      }
    });
    box.appendChild(el('h3', {}, 'Sandwich of ' + st.fn));
    box.appendChild(el('p', { 'class': 'note', id: 'sandwich-me' }, 'self ' + me.selfN + ' samples (' + pct(me.self, sel.scopeNs) +
      '%), total ' + me.totN + ' samples (' + pct(me.tot, sel.scopeNs) + '%); a sample counts once for each caller and callee, the function\u2019s calls of itself left out'));
    [['callers (the function right above it)', up, '(root)', 'sandwich-callers'],
     ['callees (the function right below it)', down, '(self)', 'sandwich-callees']].forEach(function (part) {
      var t = el('table', { 'class': 'top', id: part[3] }), hr = el('tr');
      [part[0], 'module', 'samples', '% of all', '% of it'].forEach(function (h, j) { hr.appendChild(el('th', j > 1 ? { 'class': 'num' } : {}, h)); });
      t.appendChild(el('thead')).appendChild(hr);
      var tb = t.appendChild(el('tbody'));
      Array.from(part[1].values()).sort(function (a, b) { return b.ns - a.ns || a.fn - b.fn; }).forEach(function (e) {
        var n = e.fn < 0 ? [part[2], '', '', ''] : D.fns[e.fn], tr = el('tr');
        tr.appendChild(el('td', { 'class': 'name' }, n[0]));
        tr.appendChild(el('td', { title: n[2] }, base(n[2])));
        tr.appendChild(el('td', { 'class': 'num' }, String(e.n)));
        tr.appendChild(el('td', { 'class': 'num' }, pct(e.ns, sel.scopeNs)));
        tr.appendChild(el('td', { 'class': 'num' }, pct(e.ns, me.tot)));
        if (e.fn >= 0) tr.onclick = function () { pick(n[0]); };
        tb.appendChild(tr);
      });
      var wrap = el('div', { 'class': 'scroll' });
      wrap.appendChild(t);
      box.appendChild(wrap);
    });
  }
  function pick(name) { st.fn = st.fn === name ? '' : name; update(); }

  // ---- all of it -----------------------------------------------------------------
  function update() {
    keepStacks();
    var sel = select(), rows = functions(sel);
    var range = st.from === null ? 'the whole run' : secs(st.from) + ' s to ' + secs(st.to) + ' s';
    $('samples-status').textContent = sel.scopeN + ' samples in ' + range + (st.vcpu >= 0 ? ' on vCPU ' + st.vcpu : '') +
      ' (' + (sel.scopeNs / 1e9).toFixed(3) + ' s of time)' + (stackKeep.some(function (k) { return !k; }) ?
      '; focus and ignore keep ' + sel.kept.length + ' (' + pct(sel.keptNs, sel.scopeNs) + '% of the time)' : '') +
      (badRe ? '; not a regular expression: left out' : '') + '. Drag across the strip to choose a time range.';
    root.setAttribute('data-kept', sel.kept.length);
    root.setAttribute('data-scope', sel.scopeN);
    drawStrip();
    drawFlame(sel);
    drawTable(sel, rows);
    drawSandwich(sel);
    writeHash();
  }
  readHash();
  var vs = $('samples-vcpu'), fi = $('samples-focus'), ig = $('samples-ignore');
  vs.value = String(st.vcpu);
  fi.value = st.focus;
  ig.value = st.ignore;
  vs.onchange = function () { st.vcpu = +vs.value; update(); };
  fi.oninput = function () { st.focus = fi.value; update(); };
  ig.oninput = function () { st.ignore = ig.value; update(); };
  $('samples-all').onclick = function () { st.from = st.to = null; st.vcpu = -1; vs.value = '-1'; update(); };
  var resized = 0;
  window.addEventListener('resize', function () { clearTimeout(resized); resized = setTimeout(update, 150); });
  update();
  window.profsvcSamples = { state: st, update: update };
})();
