// flame.js - what makes profdb's flame graph SVG interactive, as
// flamegraph.pl's are: flame.c puts it at the end of each SVG (inline in a
// report page too), inside CDATA, so the SVG stays well-formed XML and the
// frames are parsed when it runs.  Without script the SVG is the static
// chart flame.c drew (labels cut to fit by an estimate of their width).
//
//  - click a frame: it and everything above it fill the width, its callers
//    drawn faded at full width below it, the rest hidden; "Reset zoom"
//    (top left) or a click on the bottom frame goes back;
//  - "Search" (top right; Ctrl-F or / in a standalone SVG): a regular
//    expression (taken as plain text when it is not one) over each frame's
//    full name, the matches drawn magenta and their share of the whole
//    shown bottom right ("Matched: 58.6%"), nested matches counted once;
//  - labels: the frame's name when it fits in its box, else cut with an
//    ellipsis to the box's width as the browser measures it, again at
//    each zoom.
//
// A frame is <g class="frame"><title>Module.name\nVALUE UNIT, PCT%\nSRC
// </title><rect/><text data-full="name">cut…</text></g>: data-full only
// when the label is cut.  Names reach the page only as textContent.
// profsvcFlame(svg) wires one SVG (live.js calls it on a redrawn one);
// svg.profsvcFlame is its handle ({zoom, reset, search}).
(function () {
  'use strict';
  if (!window.profsvcFlame) window.profsvcFlame = function (svg) {
    if (!svg || svg.profsvcFlame) return;
    var PAD = 10, W = +(svg.getAttribute('data-width') || 1200), ELL = '\u2026', EPS = 0.02;
    var frames = [], total = 0, maxY = -1;
    var gs = svg.querySelectorAll('g.frame');
    for (var i = 0; i < gs.length; i++) {
      var g = gs[i], r = g.querySelector('rect'), t = g.querySelector('text'), ti = g.querySelector('title');
      if (!r || !t) continue;
      var lines = ti ? ti.textContent.split('\n') : [''];
      var f = { g: g, r: r, t: t, x: +r.getAttribute('x'), w: +r.getAttribute('width'),
                y: +r.getAttribute('y'), fill: r.getAttribute('fill'), name: lines[0],
                v: parseFloat(lines[1]) || 0, label: t.getAttribute('data-full') || t.textContent };
      frames.push(f);
      if (f.y > maxY) { maxY = f.y; total = 0; }
      if (f.y === maxY) total += f.v;
    }
    function q(cls) { return svg.querySelector('.' + cls); }
    var resetBtn = q('fg-reset'), searchBtn = q('fg-search'), matched = q('fg-matched');
    var zoomed = null, term = '';
    // the label that fits w - 6 user units, measured
    function fit(f, w) {
      var t = f.t, avail = w - 6, s = f.label;
      t.setAttribute('x', (+f.r.getAttribute('x') + 3).toFixed(2));
      if (avail < 14 || !s) { t.textContent = ''; return; }
      t.textContent = s;
      var full = t.getComputedTextLength();
      if (full <= avail) return;
      t.textContent = s + ELL;
      var ell = t.getComputedTextLength() - full;
      var lo = 0, hi = s.length;   // the longest prefix that fits with the ellipsis
      while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (t.getSubStringLength(0, mid) + ell + 0.5 <= avail) lo = mid; else hi = mid - 1;
      }
      if (lo > 0 && /[\ud800-\udbff]/.test(s.charAt(lo - 1))) lo--;   // not half a character
      while (lo > 0) {
        t.textContent = s.slice(0, lo) + ELL;
        if (t.getComputedTextLength() <= avail) return;
        lo--;
      }
      t.textContent = '';
    }
    function place(f, x, w, state) {
      f.r.setAttribute('x', x.toFixed(2));
      f.r.setAttribute('width', w.toFixed(2));
      f.g.style.display = state === 'hidden' ? 'none' : '';
      f.g.style.opacity = state === 'parent' ? '0.5' : '';
      if (state !== 'hidden') fit(f, w);
    }
    function zoom(z) {
      if (!z || (z.y === maxY && z.w >= W - 2 * PAD - 0.1)) { reset(); return; }
      var k = (W - 2 * PAD) / z.w;
      frames.forEach(function (f) {
        if (f.y <= z.y && f.x >= z.x - EPS && f.x + f.w <= z.x + z.w + EPS)
          place(f, PAD + (f.x - z.x) * k, f.w * k, 'shown');
        else if (f.y > z.y && f.x <= z.x + EPS && f.x + f.w >= z.x + z.w - EPS)
          place(f, PAD, W - 2 * PAD, 'parent');
        else
          place(f, f.x, f.w, 'hidden');
      });
      zoomed = z;
      if (resetBtn) resetBtn.style.display = '';
      svg.setAttribute('data-zoom', z.name);
    }
    function reset() {
      frames.forEach(function (f) { place(f, f.x, f.w, 'shown'); });
      zoomed = null;
      if (resetBtn) resetBtn.style.display = 'none';
      svg.removeAttribute('data-zoom');
    }
    function search(s) {
      term = s || '';
      var re = null;
      if (term) {
        try { re = new RegExp(term); } catch (e) {
          re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
        }
      }
      var hits = [];
      frames.forEach(function (f) {
        var hit = re !== null && re.test(f.name);
        f.r.setAttribute('fill', hit ? '#e600e6' : f.fill);
        f.g.classList.toggle('match', hit);
        if (hit) hits.push(f);
      });
      // callers first (by x, then the lower row), nested matches once
      hits.sort(function (a, b) { return a.x - b.x || b.y - a.y; });
      var sum = 0, end = -1;
      hits.forEach(function (f) {
        if (f.x >= end - EPS) { sum += f.v; end = f.x + f.w; }
      });
      if (matched) {
        matched.textContent = re ? 'Matched: ' + (total ? 100 * sum / total : 0).toFixed(1) + '%' : '';
        matched.style.display = re ? '' : 'none';
      }
      if (searchBtn) searchBtn.textContent = re ? 'Search: ' + term : 'Search';
      if (re) svg.setAttribute('data-search', term); else svg.removeAttribute('data-search');
    }
    function ask() {
      var s = window.prompt('Search frames (a regular expression)', term);
      if (s !== null) search(s);
    }
    frames.forEach(function (f) {
      f.g.style.cursor = 'pointer';
      f.g.addEventListener('click', function () { zoom(zoomed === f ? null : f); });
    });
    if (resetBtn) resetBtn.addEventListener('click', reset);
    if (searchBtn) {
      searchBtn.style.display = '';
      searchBtn.addEventListener('click', ask);
    }
    if (svg === document.documentElement) {   // a standalone SVG: the keys are its own
      window.addEventListener('keydown', function (e) {
        if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F') || e.key === '/') { e.preventDefault(); ask(); }
        else if (e.key === 'Escape') { search(''); reset(); }
      });
    }
    // Narrower than drawn (inline in a page on a phone): the chart is laid
    // out again at the width it is shown, so a unit is a CSS pixel: rows
    // keep their height (16 px, big enough to tap), labels their 11 px,
    // and the frames share the width.  The command line (in the page's
    // header too) gives its row to the controls.
    function narrow(px) {
      var k = (px - 2 * PAD) / (W - 2 * PAD), h = svg.viewBox.baseVal.height;
      frames.forEach(function (f) { f.x = PAD + (f.x - PAD) * k; f.w *= k; });
      W = px;
      svg.setAttribute('viewBox', '0 0 ' + px + ' ' + h);
      svg.setAttribute('width', String(px));
      svg.setAttribute('data-width', String(px));
      var heads = svg.querySelectorAll('svg > text:not([class])');
      for (var j = 0; j < heads.length; j++) {
        var t = heads[j];
        if (t.getAttribute('y') === '38') { t.style.display = 'none'; continue; }
        t.setAttribute('x', String(px / 2));
        var len = t.getComputedTextLength(), fs = +(t.getAttribute('font-size') || 11);
        if (len > px - 2 * PAD) t.setAttribute('font-size', Math.max(9, fs * (px - 2 * PAD) / len).toFixed(1));
      }
      if (resetBtn) resetBtn.setAttribute('y', '38');
      if (searchBtn) { searchBtn.setAttribute('y', '38'); searchBtn.setAttribute('x', String(px - PAD)); }
      if (matched) matched.setAttribute('x', String(px - PAD));
      var un = svg.querySelector('text.unplaced');   // the note under the chart, wrapped to the width
      if (un && un.getComputedTextLength() > px - 2 * PAD) {
        var words = un.textContent.split(' '), line = '', lines = [];
        un.textContent = '';
        words.forEach(function (w) {
          un.textContent = line ? line + ' ' + w : w;
          if (line && un.getComputedTextLength() > px - 2 * PAD) { lines.push(line); line = w; } else line = un.textContent;
        });
        lines.push(line);
        un.textContent = '';
        lines.forEach(function (l, i) {
          var ts = document.createElementNS('http://www.w3.org/2000/svg', 'tspan');
          ts.setAttribute('x', String(PAD));
          if (i) ts.setAttribute('dy', '14');
          ts.textContent = l;
          un.appendChild(ts);
        });
        h += 14 * (lines.length - 1);
        svg.setAttribute('viewBox', '0 0 ' + px + ' ' + h);
        svg.setAttribute('height', String(h));
      }
      svg.setAttribute('data-narrow', '1');
    }
    if (svg !== document.documentElement && svg.getBoundingClientRect) {
      var shown = svg.getBoundingClientRect().width;
      if (shown > 0 && shown < W - 1) narrow(Math.max(280, Math.floor(shown)));
    }
    svg.profsvcFlame = { zoom: function (i) { zoom(frames[i]); }, reset: reset, search: search };
    frames.forEach(function (f) { place(f, f.x, f.w, 'shown'); });
    svg.setAttribute('data-wired', '1');
  };
  var s = document.currentScript;
  window.profsvcFlame(s && s.parentNode && s.parentNode.nodeName === 'svg' ? s.parentNode : document.documentElement);
})();
