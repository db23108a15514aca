// trace_timeline.js - a MirageOS trace's thread timeline, as
// mirage-trace-viewer draws one: each Lwt thread a line from its creation
// to its end, arrows between threads (creates, read, try_read, signal,
// fulfills, fails, becomes), which thread runs and the GC pauses on the
// time axis, each counter on its own small axis below.  Zoom and pan with
// the wheel, a drag, the buttons or the keys (+ - arrows 0); a click on a
// thread lists its events.  Threads are grouped by label, each group its
// own lanes under a header that folds it to one lane (a click, or the
// buttons for all); the lanes scroll on their own (Shift and the wheel,
// up and down arrows, a swipe) and their rows grow and shrink ([ ] and
// the buttons).  A counter is drawn per column of the window (the
// server's min, max and last of each: a spike stays).
//
// The model is profile/trace_timeline.c's JSON: inlined in the page
// (#trace-tl-data) for the whole run, so a saved report works offline;
// a served page (data-api on #trace-tl) asks /api/runs/N/trace-timeline
// for the window shown when the whole run's model was thinned, for a
// thread's events, and again when a live run's trace grew (refresh()).
// Guest text (labels, counter names) is the exact text in the JSON and
// is shown as the terminal shows it (controls visible), always as
// textContent: never markup.  No network beyond the page's own server.
(function () {
  'use strict';
  // a guest's text as the page shows it (profile/safe_text.js, compiled in before this script)
  var shown = profsvcText.shown, revive = profsvcText.revive;
  var NS = 'http://www.w3.org/2000/svg';
  function el(tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmtNs(ns) {
    ns = Math.abs(ns);
    return ns < 1e3 ? ns.toFixed(0) + ' ns' : ns < 1e6 ? (ns / 1e3).toFixed(1) + ' \u00b5s'
      : ns < 1e9 ? (ns / 1e6).toFixed(2) + ' ms' : (ns / 1e9).toFixed(3) + ' s';
  }
  function tickStep(span, n) {   // a round step giving about n ticks
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw > 0 ? raw : 1))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  var KIND = { creates: '#2e7d32', read: '#1565c0', try_read: '#64b5f6', signal: '#8e24aa',
               fulfills: '#333', fails: '#c62828', becomes: '#ef6c00' };
  function hue(id) { return 'hsl(' + ((id * 47) % 360) + ',55%,45%)'; }

  var box = document.getElementById('trace-tl');
  if (!box) return;
  var api = box.getAttribute('data-api');
  var whole = null, detail = null, view = null, drag = null, pending = null, sel = null;
  var svg = box.querySelector('svg.trace-tl'), note = document.getElementById('trace-tl-note');
  var plot = box.querySelector('.tt-scroll'), lanesBox = box.querySelector('.tt-lanes');
  var tsvg = box.querySelector('svg.tt-threads'), csvg = box.querySelector('svg.tt-counters');
  var list = document.getElementById('trace-tl-events'), tip = document.getElementById('trace-tl-tip');
  // the lanes: a group's state (collapsed or not) by its key, kept across
  // redraws; the rows' height (vertical zoom)
  var collapsed = {}, rowH = 14, LANE_BUDGET = 40, GROUP_H = 16, NONE = '\u0000none', OTHER = '\u0000other';
  var shownGroups = [];
  function load(text) {
    whole = JSON.parse(text, revive);
    if (!view) view = [whole.t0, Math.max(whole.t1, whole.t0 + 1)];
  }
  var src = document.getElementById('trace-tl-data');
  if (src) load(src.textContent);
  function thinned(d) {
    return d.threads.length < d.threads_total || d.arrows.length < d.arrows_total ||
      d.switches.length < d.switches_total || d.gc.length < d.gc_total ||
      d.counters.some(function (c) { return c.points.length < c.in_window; });
  }
  // the model drawn: the window's when it covers the view, else the run's
  function model() {
    return detail && detail.from <= view[0] && detail.to >= view[1] ? detail : whole;
  }
  function lanes(ths) {   // greedy: a thread goes in the first lane free at its start
    var ends = [], order = ths.slice().sort(function (a, b) { return a.start - b.start || a.id - b.id; });
    var lane = {};
    order.forEach(function (t) {
      var i = 0;
      while (i < ends.length && ends[i] >= t.start) i++;
      ends[i] = t.end;
      lane[t.id] = i;
    });
    return { lane: lane, n: ends.length };
  }
  // threads grouped by label: the model's groups (the most common labels,
  // most threads first), then any other label as one group, and the
  // threads without a label; each group its own lanes, or one lane when
  // collapsed.  Groups not yet seen start expanded while the lanes stay
  // within LANE_BUDGET, collapsed after.
  function groups(d) {
    var listed = {}, order = [], count = {}, by = {}, budget = LANE_BUDGET;
    function key(label) { return label === null ? NONE : label; }
    (d.groups || []).forEach(function (g) { count[key(g.label)] = g.threads; });
    // the run's order (most threads first), so that zooming moves no group
    (whole.groups || []).concat(d.groups || []).forEach(function (g) {
      if (!(key(g.label) in listed)) { listed[key(g.label)] = 1; order.push(key(g.label)); }
    });
    d.threads.forEach(function (t) {
      var k = key(t.label);
      if (!(k in listed)) {
        if (d.groups) k = OTHER;
        else { listed[k] = 1; order.push(k); }   // a model without groups: each label its own
      }
      (by[k] = by[k] || []).push(t);
    });
    var out = [];
    order.concat([OTHER]).forEach(function (k) {
      if (!by[k]) return;
      var L = lanes(by[k]);
      var total = k === OTHER ? (d.groups_more ? d.groups_more.threads : by[k].length) : k in count ? count[k] : by[k].length;
      if (!(k in collapsed)) {
        collapsed[k] = L.n > budget;
        if (!collapsed[k]) budget -= L.n;
      }
      out.push({ key: k, name: k === NONE ? '(no label)' : k === OTHER ? '(other labels)' : k, threads: by[k],
                 total: Math.max(total, by[k].length), lane: L.lane, n: L.n, collapsed: collapsed[k] });
    });
    return out;
  }
  function draw() {
    if (!whole) return;
    var d = model(), W = Math.max(320, Math.round(plot.clientWidth || box.clientWidth || 900)), LW = 0;
    var v0 = view[0], v1 = view[1], span = v1 - v0;
    function X(t) { return LW + (t - v0) / span * (W - LW); }
    function grid(into, y0, y1) {   // the time axis' lines, through each part
      var step = tickStep(span, Math.max(2, Math.floor(W / 120))), g = el('g', { class: 'tt-grid' });
      for (var t = Math.ceil((v0 - whole.t0) / step) * step, i = 0; t + whole.t0 <= v1 && i < 40; t += step, i++) {
        var x = X(t + whole.t0);
        g.appendChild(el('line', { x1: x, x2: x, y1: y0, y2: y1, stroke: '#eee' }));
      }
      into.appendChild(g);
      return step;
    }
    function clear(s, h) {
      while (s.firstChild) s.removeChild(s.firstChild);
      s.setAttribute('viewBox', '0 0 ' + W + ' ' + h);
      s.setAttribute('width', W);
      s.setAttribute('height', h);
    }
    // --- the top: time axis, GC pauses, which thread runs -------------------------
    var AX = 22, GC = 14, RUN = 14, H = AX + GC + RUN + 4;
    clear(svg, H);
    var step = grid(svg, AX - 4, H), g = el('g', { class: 'tt-axis' });
    for (var t = Math.ceil((v0 - whole.t0) / step) * step, i = 0; t + whole.t0 <= v1 && i < 40; t += step, i++)
      g.appendChild(el('text', { x: X(t + whole.t0) + 2, y: AX - 8 }, fmtNs(t)));
    svg.appendChild(g);
    // GC pauses (a mark may hold several when the run's pauses were aggregated)
    var gg = el('g', { class: 'tt-gc' }), ngc = 0;
    d.gc.forEach(function (p) {
      if (p[1] < v0 || p[0] > v1) return;
      var x0 = X(p[0]), x1 = Math.max(X(p[1]), x0 + 1), r = el('rect', { x: x0, y: AX, width: x1 - x0, height: GC - 2 });
      r.appendChild(el('title', {}, (p[2] > 1 ? p[2] + ' GC pauses, ' : 'GC pause ') + fmtNs(p[3])));
      gg.appendChild(r);
      ngc++;
    });
    svg.appendChild(gg);
    var gr = el('g', { class: 'tt-run' });
    d.switches.forEach(function (s) {
      if (s[2] < v0 || s[1] > v1) return;
      var x0 = X(s[1]), r = el('rect', { x: x0, y: AX + GC, width: Math.max(0.5, X(s[2]) - x0), height: RUN - 2, fill: hue(s[0]) });
      r.appendChild(el('title', {}, 'thread ' + s[0] + ' runs'));
      gr.appendChild(r);
    });
    svg.appendChild(gr);
    svg.appendChild(el('text', { x: 2, y: AX + GC - 3, class: 'tt-lane' }, 'GC'));
    svg.appendChild(el('text', { x: 2, y: AX + GC + RUN - 3, class: 'tt-lane' }, 'running'));
    // --- the threads: a group's header, then its lanes (one when collapsed) ----------
    var G = groups(d), y = 0, yOf = {}, byId = {}, drawn = 0, nlanes = 0, ncollapsed = 0;
    shownGroups = G;
    G.forEach(function (gp) {
      gp.y = y;
      y += GROUP_H;
      gp.ly = y;
      y += (gp.collapsed ? 1 : gp.n) * rowH + 2;
      nlanes += gp.collapsed ? 1 : gp.n;
      ncollapsed += gp.collapsed ? 1 : 0;
    });
    var TH = Math.max(y, 1);
    clear(tsvg, TH);
    grid(tsvg, 0, TH);
    var gt = el('g', { class: 'tt-threads' }), gh = el('g', { class: 'tt-groups' });
    G.forEach(function (gp) {
      var hd = el('g', { class: 'tt-group' + (gp.collapsed ? ' collapsed' : ''), 'data-gi': G.indexOf(gp),
                         role: 'button', 'aria-expanded': String(!gp.collapsed) });
      hd.appendChild(el('rect', { x: 0, y: gp.y, width: W, height: GROUP_H - 1, class: 'tt-ghead' }));
      hd.appendChild(el('text', { x: 4, y: gp.y + GROUP_H - 4, class: 'tt-gname' },
        (gp.collapsed ? '\u25b8 ' : '\u25be ') + gp.name + ' \u00b7 ' + gp.total + ' thread' + (gp.total === 1 ? '' : 's') +
        (gp.threads.length < gp.total ? ' (' + gp.threads.length + ' shown)' : '') +
        (gp.collapsed ? ' \u00b7 collapsed' : gp.n > 1 ? ' \u00b7 ' + gp.n + ' lanes' : '')));
      gh.appendChild(hd);
      gp.threads.forEach(function (th) {
        byId[th.id] = th;
        var row = gp.collapsed ? 0 : gp.lane[th.id], yy = gp.ly + row * rowH + rowH * 0.7;
        yOf[th.id] = yy;
        if (th.end < v0 || th.start > v1) return;
        var x0 = Math.max(X(th.start), 0), x1 = Math.min(Math.max(X(th.end), x0 + 2), W);
        var ln = el('line', { x1: x0, x2: x1, y1: yy, y2: yy, class: 'th' + (th.id === sel ? ' sel' : '') + (gp.collapsed ? ' folded' : ''),
                              'data-thread': th.id, stroke: th.ended ? '#666' : '#aaa',
                              'stroke-width': Math.max(2, rowH * 0.3) });
        ln.appendChild(el('title', {}, (th.label !== null ? th.label + ' ' : '') + '(thread ' + th.id + ')'));
        gt.appendChild(ln);
        // its id above its line (the group's header names its label; the
        // other labels' group names each)
        if (!gp.collapsed && rowH >= 14 && x1 - x0 > 30)
          gt.appendChild(el('text', { x: x0 + 2, y: yy - Math.max(2, rowH * 0.3) / 2 - 1, class: 'tt-label', 'data-thread': th.id },
                            gp.key === OTHER && th.label !== null ? th.label + ' #' + th.id : '#' + th.id));
        drawn++;
      });
    });
    tsvg.appendChild(gt);
    // arrows, at the time of their event, between the threads' lines
    var ga = el('g', { class: 'tt-arrows' }), na = 0;
    d.arrows.forEach(function (a) {
      if (a[3] < v0 || a[3] > v1 || !(a[1] in yOf) || !(a[2] in yOf)) return;
      var x = X(a[3]), y0 = yOf[a[1]], y1 = yOf[a[2]];
      var ln = el('line', { x1: x, x2: x + (y0 === y1 ? 6 : 0), y1: y0, y2: y1, stroke: KIND[a[0]] || '#000',
                            'marker-end': 'url(#tta-' + a[0] + ')', class: 'ar ' + a[0] });
      ln.appendChild(el('title', {}, a[0] + ': ' + a[1] + ' \u2192 ' + a[2]));
      ga.appendChild(ln);
      na++;
    });
    var defs = el('defs');
    Object.keys(KIND).forEach(function (k) {
      var m = el('marker', { id: 'tta-' + k, viewBox: '0 0 6 6', refX: 6, refY: 3, markerWidth: 6, markerHeight: 6, orient: 'auto' });
      m.appendChild(el('path', { d: 'M0,0 L6,3 L0,6 z', fill: KIND[k] }));
      defs.appendChild(m);
    });
    tsvg.insertBefore(defs, tsvg.firstChild);
    tsvg.appendChild(ga);
    tsvg.appendChild(gh); // the headers over the arrows that cross them
    // --- counters, each on its own axis: per column its min to max (a spike
    // stays), and a line through each column's last value -------------------------
    var CH = 46;
    clear(csvg, d.counters.length * CH + 4);
    grid(csvg, 0, d.counters.length * CH + 4);
    var cy = 0, npts = [];
    d.counters.forEach(function (c) {
      var lo = c.lo, hi = c.hi > c.lo ? c.hi : c.lo + 1, h = CH - 16, gc = el('g', { class: 'tt-counter' });
      function Y(vv) { return cy + 12 + h - (vv - lo) / (hi - lo) * h; }
      gc.appendChild(el('line', { x1: 0, x2: W, y1: cy + 12 + h, y2: cy + 12 + h, stroke: '#ccc' }));
      gc.appendChild(el('text', { x: 2, y: cy + 10, class: 'tt-cname' }, c.name + '  (' + c.lo + ' to ' + c.hi + ', now ' + c.last + ')'));
      var pts = [], band = [];
      c.points.forEach(function (p) {
        if (p[0] < v0 || p[0] > v1) return;
        var x = X(p[0]);
        pts.push(x.toFixed(1) + ',' + Y(p[3]).toFixed(1));
        if (p[1] !== p[2]) band.push('M' + x.toFixed(1) + ',' + Y(p[1]).toFixed(1) + 'V' + Y(p[2]).toFixed(1));
      });
      if (band.length) gc.appendChild(el('path', { d: band.join(''), stroke: '#9ab', 'stroke-width': 1, fill: 'none', class: 'tt-range' }));
      gc.appendChild(el('polyline', { points: pts.join(' '), fill: 'none', stroke: '#1f77b4', 'stroke-width': 1.5 }));
      gc.setAttribute('data-points', pts.length);
      npts.push(pts.length);
      csvg.appendChild(gc);
      cy += CH;
    });
    svg.setAttribute('data-view', v0 + ' ' + v1);
    svg.setAttribute('data-threads-drawn', drawn);
    svg.setAttribute('data-arrows-drawn', na);
    svg.setAttribute('data-gc-drawn', ngc);
    svg.setAttribute('data-source', d === whole ? 'run' : 'window');
    svg.setAttribute('data-events', whole.events);
    svg.setAttribute('data-groups', G.length);
    svg.setAttribute('data-groups-collapsed', ncollapsed);
    svg.setAttribute('data-lanes', nlanes);
    svg.setAttribute('data-row-height', rowH);
    svg.setAttribute('data-counter-points', npts.join(' '));
    var say = [];
    if (d.threads.length < d.threads_total) say.push(d.threads.length + ' of ' + d.threads_total + ' threads');
    if (d.arrows.length < d.arrows_total) say.push(d.arrows.length + ' of ' + d.arrows_total + ' arrows');
    if (d.switches.length < d.switches_total) say.push(d.switches.length + ' of ' + d.switches_total + ' switches');
    if (d.gc.length < d.gc_total) say.push(d.gc_total + ' GC pauses in ' + d.gc.length + ' marks');
    note.textContent = fmtNs(span) + ' shown of ' + fmtNs(whole.t1 - whole.t0) + '; ' + whole.threads_total +
      ' threads in ' + G.length + ' group' + (G.length === 1 ? '' : 's') + ' by label, ' + whole.events + ' events' +
      (say.length ? '. Thinned here: ' + say.join(', ') +
      (api ? ' (zoom in for every one)' : ' (zoom in, or open the run in profdb serve, for every one)') : '') + '.';
    if (api && thinned(whole) && d === whole && (v1 - v0) < (whole.t1 - whole.t0)) fetchWindow();
  }
  // a group folded or unfolded: by its place among those drawn (a number),
  // or by its label (null: the threads without one)
  function toggleGroup(which) {
    var g = typeof which === 'number' ? shownGroups[which] : null;
    var key = g ? g.key : which === null ? NONE : which;
    collapsed[key] = !collapsed[key];
    draw();
  }
  function setRowHeight(h) {
    rowH = Math.max(4, Math.min(40, Math.round(h)));
    draw();
  }
  function fetchWindow() {
    clearTimeout(pending);
    pending = setTimeout(function () {
      var want = view.slice();
      var cols = Math.max(1, Math.min(4000, Math.round(plot.clientWidth || 900)));
      fetch(api + '?from=' + Math.floor(want[0]) + '&to=' + Math.ceil(want[1]) + '&cols=' + cols, { cache: 'no-store' })
        .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
        .then(function (t) { detail = JSON.parse(t, revive); draw(); })
        .catch(function () {});
    }, 200);
  }
  function setView(a, b) {
    var t0 = whole.t0, t1 = Math.max(whole.t1, whole.t0 + 1), w = Math.max(100, Math.min(t1 - t0, b - a));
    a = Math.max(t0, Math.min(t1 - w, a));
    view = [a, a + w];
    draw();
  }
  function zoom(f, at) {   // at: a fraction of the width
    var w = view[1] - view[0], nw = w / f, c = view[0] + at * w;
    setView(c - at * nw, c - at * nw + nw);
  }
  function pan(frac) {
    var w = view[1] - view[0];
    setView(view[0] + frac * w, view[1] + frac * w);
  }
  function frac(ev) {
    var r = svg.getBoundingClientRect();
    return Math.max(0, Math.min(1, (ev.clientX - r.left) / r.width));
  }
  // the whole plot (the top, the lanes, the counters) answers the pointer:
  // the wheel zooms time (with Shift it scrolls the lanes), a drag pans, a
  // click picks a thread or folds a group; the lanes scroll on their own
  // (their scroll bar, a swipe on a touch screen)
  function clicked(target) {
    var t = target && target.closest ? target : null;
    var gh = t && t.closest('g.tt-group');
    if (gh) toggleGroup(+gh.getAttribute('data-gi'));
    else if (t && t.getAttribute('data-thread')) pick(+t.getAttribute('data-thread'));
  }
  plot.addEventListener('wheel', function (ev) {
    if (ev.shiftKey && lanesBox.contains(ev.target)) {
      lanesBox.scrollTop += ev.deltaY || ev.deltaX;
      ev.preventDefault();
      return;
    }
    ev.preventDefault();
    zoom(ev.deltaY < 0 ? 1.25 : 0.8, frac(ev));
  }, { passive: false });
  plot.addEventListener('mousedown', function (ev) {
    drag = { x: ev.clientX, v: view.slice(), moved: false };
    svg.focus();
    ev.preventDefault();
  });
  window.addEventListener('mousemove', function (ev) {
    if (!drag) return;
    var r = svg.getBoundingClientRect(), dx = (ev.clientX - drag.x) / r.width * (drag.v[1] - drag.v[0]);
    if (Math.abs(ev.clientX - drag.x) > 3) drag.moved = true;
    if (drag.moved) setView(drag.v[0] - dx, drag.v[1] - dx);
  });
  window.addEventListener('mouseup', function (ev) {
    var d = drag;
    drag = null;
    if (d && !d.moved) clicked(ev.target);
  });
  plot.addEventListener('touchstart', function (ev) {
    if (ev.touches.length === 1) drag = { x: ev.touches[0].clientX, y: ev.touches[0].clientY, v: view.slice(), moved: false };
  }, { passive: true });
  plot.addEventListener('touchmove', function (ev) {
    if (!drag || ev.touches.length !== 1) return;
    var r = svg.getBoundingClientRect(), tx = ev.touches[0].clientX - drag.x, ty = ev.touches[0].clientY - drag.y;
    if (!drag.moved && Math.abs(ty) > Math.abs(tx)) return; // a vertical swipe scrolls the lanes (the browser's own)
    drag.moved = true;
    var dx = tx / r.width * (drag.v[1] - drag.v[0]);
    setView(drag.v[0] - dx, drag.v[1] - dx);
  }, { passive: true });
  plot.addEventListener('touchend', function (ev) {
    var d = drag;
    drag = null;
    if (d && !d.moved) {
      clicked(ev.target);
      ev.preventDefault(); // no mouse events after it: they would click again (a fold undone)
    }
  });
  plot.addEventListener('keydown', function (ev) {
    var k = ev.key;
    if (k === '+' || k === '=') zoom(2, 0.5);
    else if (k === '-' || k === '_') zoom(0.5, 0.5);
    else if (k === 'ArrowLeft') pan(-0.25);
    else if (k === 'ArrowRight') pan(0.25);
    else if (k === 'ArrowUp') lanesBox.scrollTop -= 3 * rowH;
    else if (k === 'ArrowDown') lanesBox.scrollTop += 3 * rowH;
    else if (k === ']') setRowHeight(rowH * 1.5);
    else if (k === '[') setRowHeight(rowH / 1.5);
    else if (k === '0') setView(whole.t0, whole.t1);
    else return;
    ev.preventDefault();
  });
  plot.addEventListener('mousemove', function (ev) {
    if (!whole) return;
    var t = view[0] + frac(ev) * (view[1] - view[0]), tg = ev.target, s = 't = ' + fmtNs(t - whole.t0);
    var title = tg.querySelector && tg.querySelector('title');
    tip.textContent = title ? s + ' \u00b7 ' + title.textContent : s;
  });
  box.querySelectorAll('button[data-tt]').forEach(function (b) {
    b.onclick = function () {
      var z = b.getAttribute('data-tt');
      if (z === 'in') zoom(2, 0.5); else if (z === 'out') zoom(0.5, 0.5);
      else if (z === 'left') pan(-0.25); else if (z === 'right') pan(0.25);
      else if (z === 'taller') setRowHeight(rowH * 1.5); else if (z === 'shorter') setRowHeight(rowH / 1.5);
      else if (z === 'fold' || z === 'unfold') {
        groups(model()).forEach(function (g) { collapsed[g.key] = z === 'fold'; });
        draw();
      } else setView(whole.t0, whole.t1);
    };
  });
  // a thread's events: the server's list, or what the page's model holds
  function pick(id) {
    sel = id;
    draw();
    var th = null;
    [detail, whole].forEach(function (d) { if (d && !th) th = d.threads.filter(function (x) { return x.id === id; })[0] || null; });
    function show(evs, more) {
      while (list.firstChild) list.removeChild(list.firstChild);
      var h = document.createElement('h4');
      h.textContent = (th && th.label !== null ? th.label + ' ' : '') + '(thread ' + id + ')' +
        (th ? ': ' + fmtNs(th.start - whole.t0) + ' to ' + fmtNs(th.end - whole.t0) +
              (th.ended ? ', resolved' : ', not resolved') + (th.type !== null ? ', ' + th.type : '') +
              (th.parent !== null ? ', created by ' + th.parent : '') : '');
      list.appendChild(h);
      var ol = document.createElement('ol');
      evs.forEach(function (e) {
        var li = document.createElement('li');
        li.textContent = fmtNs(e.ts - whole.t0) + '  ' + e.event + '  thread ' + e.thread +
          (e.other !== undefined ? ' \u2192 ' + e.other : '') + (e.type ? ' (' + e.type + ')' : '') +
          (e.text !== undefined ? '  ' + e.text : '');
        li.setAttribute('data-event', e.event);
        ol.appendChild(li);
      });
      list.appendChild(ol);
      if (more) { var p = document.createElement('p'); p.textContent = more + ' more events not listed'; list.appendChild(p); }
      list.setAttribute('data-thread', id);
      list.setAttribute('data-count', evs.length);
    }
    if (api) {
      fetch(api + '?thread=' + id, { cache: 'no-store' }).then(function (r) { return r.text(); })
        .then(function (t) { var d = JSON.parse(t, revive); show(d.events, d.more); })
        .catch(function () { show([], 0); });
    } else {
      var d = model(), evs = [];
      d.arrows.forEach(function (a) {
        if (a[1] === id || a[2] === id) {
          var inbound = a[0] === 'read' || a[0] === 'try_read' || a[0] === 'signal';
          evs.push({ ts: a[3], event: a[0], thread: inbound ? a[2] : a[1], other: inbound ? a[1] : a[2] });
        }
      });
      show(evs, 0);
    }
  }
  window.profsvcTraceTimeline = {
    draw: draw,
    // a live run's trace grew: the run's model fetched again, the view kept
    // (or following the end when it showed the whole run)
    refresh: function () {
      if (!api) return Promise.resolve(false);
      return fetch(api, { cache: 'no-store' }).then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
        .then(function (t) {
          var follow = !whole || view[1] >= whole.t1;
          var was = whole ? view[1] - view[0] : 0, allOld = whole && view[0] <= whole.t0 && follow;
          whole = JSON.parse(t, revive);
          detail = null;
          if (allOld || !was) view = [whole.t0, Math.max(whole.t1, whole.t0 + 1)];
          else if (follow) view = [Math.max(whole.t0, whole.t1 - was), whole.t1];
          draw();
          return true;
        });
    },
    pick: pick,
    view: function () { return view.slice(); },
    setView: setView,
    toggleGroup: toggleGroup,
    setRowHeight: setRowHeight
  };
  window.addEventListener('resize', draw);
  draw();
  box.setAttribute('data-wired', '1');
})();
