// flame_browser.cjs - profdb's flame graph in a real browser (headless
// Chromium driven by puppeteer-core, from tests/peers): run by
// tests/test_peers.sh.
//
//   node flame_browser.cjs NODE_MODULES SVG REPORT FRAME TERM SHARE OUT_DIR
//
// SVG is a standalone flame graph (profdb flame -o), REPORT a report page
// with one inline; FRAME a frame's full name (its title's first line) to
// click, TERM a search term and SHARE the percentage of the whole its
// matches cover (from the folded stacks).  Checks, printing one line per
// failure and "flame browser: N checks, M failed": the script is wired;
// every label fits its box (its measured length within the rect) at the
// default width, after a zoom and with script off (the static chart);
// clicking FRAME makes its rect span the width, hides what is not under
// it, and "Reset zoom" puts everything back; Search (the button, and
// Ctrl-F in the standalone SVG) highlights exactly the frames whose names
// match and shows "Matched: SHARE%"; the same in the report page; no page
// logs an error.  Screenshots (PNG) go to OUT_DIR: flame-zoom.png,
// flame-search.png, flame-report.png.
// What every browser check shares (the tally, Chromium, errors, ink) is
// tests/peers/browser_lib.cjs.
'use strict';
const [nm, svgFile, reportFile, frameName, term, share, out] = process.argv.slice(2);
const puppeteer = require(nm + '/puppeteer-core');
const lib = require('./browser_lib.cjs');
const t = lib.tally(), check = t.check;

// every shown label's measured length against its rect: the overflowing ones
function overflow(root) {
  return (function (sel) {
    const svg = document.querySelector(sel), bad = [];
    let n = 0;
    svg.querySelectorAll('g.frame').forEach(g => {
      if (g.style.display === 'none') return;
      const r = g.querySelector('rect'), t = g.querySelector('text');
      if (!t || !t.textContent) return;
      n++;
      const x = +r.getAttribute('x'), w = +r.getAttribute('width');
      const tx = +t.getAttribute('x'), len = t.getComputedTextLength(), bb = t.getBBox();
      if (tx < x || tx + len > x + w + 0.01 || bb.x + bb.width > x + w + 0.01)
        bad.push(t.textContent + ' ' + (tx + len).toFixed(1) + ' > ' + (x + w).toFixed(1));
    });
    return { n: n, bad: bad.slice(0, 5), nbad: bad.length };
  }).toString() + ')(' + JSON.stringify(root) + ')';
}

(async () => {
  const browser = await lib.launch(puppeteer, ['--allow-file-access-from-files']);
  const errors = [];
  async function open(file, js) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1300, height: 900 });
    if (js === false) await page.setJavaScriptEnabled(false);
    lib.collectErrors(page, file, errors);
    await page.goto('file://' + file, { waitUntil: 'load' });
    return page;
  }
  const fit = async (page, sel, what) => {
    const o = await page.evaluate('(' + overflow(sel));
    check(o.n >= 3 && o.nbad === 0, what + ': ' + o.nbad + ' of ' + o.n + ' labels spill out of their box: ' + o.bad.join('; '));
  };
  // the frame's rect in the page, by its title's first line
  const frame = (page, sel, name) => page.evaluate((sel, name) => {
    const gs = document.querySelectorAll(sel + ' g.frame');
    for (let i = 0; i < gs.length; i++) {
      const ti = gs[i].querySelector('title');
      if (ti && ti.textContent.split('\n')[0] === name) {
        const r = gs[i].querySelector('rect');
        r.scrollIntoView({ block: 'center' });
        const b = r.getBoundingClientRect();
        return { i, x: +r.getAttribute('x'), w: +r.getAttribute('width'), cx: b.left + b.width / 2, cy: b.top + b.height / 2,
                 shown: gs[i].style.display !== 'none' };
      }
    }
    return null;
  }, sel, name);
  const state = (page, sel) => page.evaluate(sel => {
    const svg = document.querySelector(sel), gs = [...svg.querySelectorAll('g.frame')];
    const m = svg.querySelector('.fg-matched'), reset = svg.querySelector('.fg-reset');
    return {
      wired: svg.getAttribute('data-wired'), frames: gs.length,
      hidden: gs.filter(g => g.style.display === 'none').length,
      matched: m && m.style.display !== 'none' ? m.textContent : '',
      reset: reset && reset.style.display !== 'none',
      marked: gs.filter(g => g.querySelector('rect').getAttribute('fill') === '#e600e6')
        .map(g => g.querySelector('title').textContent.split('\n')[0]),
      names: gs.map(g => g.querySelector('title').textContent.split('\n')[0]),
      widths: gs.map(g => g.querySelector('rect').getAttribute('width')).join(' '),
    };
  }, sel);
  const re = new RegExp(term);

  async function exercise(file, sel, shots) {
    const page = await open(file);
    const s0 = await state(page, sel);
    check(s0.wired === '1', file + ': the script did not wire the flame graph');
    await fit(page, sel, file + ' at the default width');
    // zoom: click the frame
    const f0 = await frame(page, sel, frameName);
    check(f0 && f0.w < 1179, file + ': no frame ' + frameName + ' narrower than the graph');
    if (f0) {
      await page.mouse.click(f0.cx, f0.cy);
      const f1 = await frame(page, sel, frameName), s1 = await state(page, sel);
      check(f1 && Math.abs(f1.x - 10) < 0.05 && Math.abs(f1.w - 1180) < 0.05,
        file + ': after a click ' + frameName + ' does not span the width: ' + JSON.stringify(f1));
      check(s1.hidden > 0 && s1.reset, file + ': zoomed, but nothing hidden (' + s1.hidden + ') or no Reset zoom');
      await fit(page, sel, file + ' zoomed to ' + frameName);
      if (shots) await page.screenshot({ path: out + '/flame-zoom.png' });
      await page.evaluate(sel => {
        const r = document.querySelector(sel + ' .fg-reset');
        r.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      }, sel);
      const s2 = await state(page, sel);
      check(s2.hidden === 0 && s2.widths === s0.widths && !s2.reset, file + ': Reset zoom does not restore the graph');
    }
    // search: the button, a prompt answered
    page.once('dialog', d => d.accept(term));
    const btn = await page.evaluate(sel => {
      const e = document.querySelector(sel + ' .fg-search');
      e.scrollIntoView({ block: 'center' });
      const b = e.getBoundingClientRect();
      return { x: b.left + b.width / 2, y: b.top + b.height / 2 };
    }, sel);
    await page.mouse.click(btn.x, btn.y);
    await new Promise(r => setTimeout(r, 200));
    const s3 = await state(page, sel);
    const want = s0.names.filter(n => re.test(n));
    check(want.length > 0 && JSON.stringify(s3.marked) === JSON.stringify(want),
      file + ': search ' + term + ' marked ' + JSON.stringify(s3.marked) + ', want ' + JSON.stringify(want));
    const pct = parseFloat((s3.matched.match(/Matched: ([0-9.]+)%/) || [])[1]);
    check(Math.abs(pct - share) <= 0.1, file + ': search ' + term + ' shows [' + s3.matched + '], want ' + share + '%');
    await fit(page, sel, file + ' searched');
    if (shots) await page.screenshot({ path: out + '/flame-search.png' });
    return page;
  }

  const page = await exercise(svgFile, 'svg', true);
  // Ctrl-F in the standalone SVG asks too; an empty answer clears the search
  page.once('dialog', d => d.accept(''));
  await page.keyboard.down('Control'); await page.keyboard.press('f'); await page.keyboard.up('Control');
  await new Promise(r => setTimeout(r, 200));
  const s4 = await state(page, 'svg');
  check(s4.marked.length === 0 && s4.matched === '', 'Ctrl-F then an empty search: still marked ' + s4.marked.length);
  // without script: the static chart, its labels cut by flame.c's estimate
  const stat = await open(svgFile, false);
  await fit(stat, 'svg', svgFile + ' without script');
  // the report page's inline flame graph
  const rep = await exercise(reportFile, '#flame svg', false);
  const box = await rep.evaluate(() => {
    const r = document.getElementById('flame').getBoundingClientRect();
    return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
  });
  await rep.screenshot({ path: out + '/flame-report.png', clip: box, captureBeyondViewport: true });
  check(errors.length === 0, 'pages logged errors: ' + errors.slice(0, 3).join(' | '));
  await browser.close();
  console.log(t.line('flame browser'));
  process.exit(t.failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + e.stack); process.exit(1); });
