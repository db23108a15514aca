// pages_browser.cjs - profdb serve's pages as a reader sees them, on a
// desktop (1400x1000) and on a phone (390x844, mobile emulation: scale
// factor 3, touch): run by tests/test_serve.sh once its store holds
// finished runs.
//
//   node pages_browser.cjs NODE_MODULES BASE_URL OUT_DIR TOP_JSON RUN... -- A B
//
// TOP_JSON is `profdb top RUN -n 1 --json` of the first RUN; A and B the
// runs of a comparison (/compare?a=A&b=B).  Checks, printing one line per
// failure and "pages: N checks, M failed":
//  - a run page's first table is the flat table of the top cost centres,
//    and its first row is profdb top's first row (name, module, %time,
//    %alloc, entries);
//  - the catalogue, each run page and the compare page: not zoomed
//    (visualViewport.scale 1), the document no wider than the screen, no
//    element past the screen's right edge but inside a box that scrolls;
//    on the phone the flame graph's rows at least 14 CSS px tall;
//  - every page links back to the catalogue (/);
//  - sizes with their unit: the facts (8.2 kB (8,176 bytes)), the
//    catalogue's columns, the heap keys, the compare page's axes and its
//    heap bands' peaks and areas;
//  - the compare page's flame graph says which runs it compares;
//  - no page logs an error.
// Screenshots pages-*.png in OUT_DIR.
// What every browser check shares (the tally, Chromium, errors, ink) is
// tests/peers/browser_lib.cjs.
'use strict';
const args = process.argv.slice(2);
const [nm, base, out, topJson] = args;
const sep = args.indexOf('--');
const runs = args.slice(4, sep).map(Number), [cmpA, cmpB] = args.slice(sep + 1).map(Number);
const puppeteer = require(nm + '/puppeteer-core');
const lib = require('./browser_lib.cjs');
const t = lib.tally(), check = t.check;
const { until } = lib;
const SIZE = /^\d+(\.\d)? (B|kB|MB|GB|TB)$/;

(async () => {
  const browser = await lib.launch(puppeteer, ['--no-proxy-server']);
  const errors = [];
  const sizes = [
    { tag: 'desktop', vp: { width: 1400, height: 1000 } },
    { tag: 'phone', vp: { width: 390, height: 844, deviceScaleFactor: 3, isMobile: true, hasTouch: true } },
  ];
  // the catalogue is ready at its first update, the other pages when they say so
  const catalogueReady = page =>
    until(async () => +(await page.evaluate(() => document.body.getAttribute('data-updates') || 0)) >= 1, 8000);
  const openAt = (path, vp, tag) =>
    lib.openPage(browser, base + path, vp, tag + ' ' + path, errors, path === '/' ? catalogueReady : null);
  // what a page looks like on this screen
  function layout() {
    const vv = window.visualViewport, wide = [];
    // an element past the right edge, not inside a box that scrolls or clips
    document.querySelectorAll('body *').forEach(e => {
      const r = e.getBoundingClientRect();
      if (!(r.width > 0 && r.right > innerWidth + 1)) return;
      for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
        const ox = getComputedStyle(a).overflowX;
        if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') {
          const ar = a.getBoundingClientRect();
          if (ar.right <= innerWidth + 1) return;
        }
      }
      wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' right ' + Math.round(r.right));
    });
    const rows = [...document.querySelectorAll('svg.flamegraph g.frame rect')]
      .map(r => r.getBoundingClientRect().height).filter(h => h > 0);
    return { scale: vv ? vv.scale : -1, scrollWidth: document.documentElement.scrollWidth, width: innerWidth,
             wide: wide.slice(0, 5), rowMin: rows.length ? Math.min(...rows) : null,
             home: [...document.querySelectorAll('a')].some(a => a.getAttribute('href') === '/') };
  }
  function looks(what, vp, l, flame) {
    check(l.scale === 1, what + ': zoomed to ' + l.scale);
    check(l.scrollWidth <= vp.width, what + ': the document is ' + l.scrollWidth + ' px wide on a ' + vp.width + ' px screen');
    check(l.wide.length === 0, what + ': past the screen\'s edge: ' + l.wide.join(', '));
    check(l.home, what + ': no link to the catalogue (/)');
    if (flame) check(l.rowMin !== null && (!vp.isMobile || l.rowMin >= 14),
                     what + ': the flame graph\'s rows are ' + l.rowMin + ' px tall');
  }

  const top = JSON.parse(topJson).cost_centres[0];
  for (const { tag, vp } of sizes) {
    // --- the catalogue ---------------------------------------------------------
    const cat = await openAt('/', vp, tag);
    looks(tag + ' /', vp, await cat.evaluate(layout), false);
    const cells = await cat.$$eval('#runs td.prof, #runs td.hp', tds => tds.map(t => t.textContent).filter(t => t !== '-'));
    check(cells.length > 0 && cells.every(t => SIZE.test(t)), tag + ' /: sizes without their unit: ' + JSON.stringify(cells.slice(0, 6)));
    await cat.screenshot({ path: `${out}/pages-catalogue-${tag}.png`, fullPage: true });
    await cat.close();
    // --- run pages ---------------------------------------------------------------
    for (const run of runs) {
      const path = '/runs/' + run, what = tag + ' ' + path;
      const p = await openAt(path, vp, tag);
      looks(what, vp, await p.evaluate(layout), true);
      const first = await p.evaluate(() => {
        const t = document.querySelector('table');
        const r = t && t.tBodies[0] && t.tBodies[0].rows[0];
        return t && { id: t.id, cells: r ? [...r.cells].map(c => c.textContent) : [] };
      });
      check(first && first.id === 'top-table', what + ': the first table is not the top cost centres: ' + JSON.stringify(first));
      if (run === runs[0] && first) {
        const want = [top.name, top.module, top.time.toFixed(1), top.alloc.toFixed(1),
                      String(top.entries).replace(/\B(?=(\d{3})+(?!\d))/g, ',')];
        check(JSON.stringify(first.cells.slice(0, 5)) === JSON.stringify(want),
              what + ': the top row ' + JSON.stringify(first.cells) + ', profdb top says ' + JSON.stringify(want));
      }
      const facts = await p.$$eval('#facts table.facts tr', trs => trs.map(tr => [tr.cells[0].textContent, tr.cells[1].textContent]));
      const sizesShown = facts.filter(f => ['.prof', '.hp', 'eventlog'].includes(f[0]) && f[1] !== '-').map(f => f[1]);
      check(sizesShown.length > 0 && sizesShown.every(s => /^\d+(\.\d)? (B|kB|MB|GB)( \(\d{1,3}(,\d{3})* bytes\))?$/.test(s)),
            what + ': the sizes in the facts: ' + JSON.stringify(facts));
      const peaks = await p.$$eval('#heap-key .peak', ss => ss.map(s => s.textContent));
      check(peaks.length > 0 && peaks.every(s => SIZE.test(s)), what + ': the heap key\'s peaks: ' + JSON.stringify(peaks));
      await p.screenshot({ path: `${out}/pages-run${run}-${tag}.png`, fullPage: true });
      await p.close();
    }
    // --- the compare page --------------------------------------------------------
    const cpath = `/compare?a=${cmpA}&b=${cmpB}`, cwhat = tag + ' ' + cpath;
    const c = await openAt(cpath, vp, tag);
    looks(cwhat, vp, await c.evaluate(layout), true);
    const title = await c.$eval('#flame-diff svg.flamegraph text', t => t.textContent).catch(() => '');
    check(title.includes(`run ${cmpB} against run ${cmpA}`) && !/the run before/.test(title),
          cwhat + ': the flame graph\'s title does not say what it compares: ' + JSON.stringify(title));
    const ticks = await c.$$eval('.heap-panel text.ytick', ts => ts.map(t => t.textContent));
    check(ticks.length > 2 && ticks.every(t => t === '0' || SIZE.test(t)), cwhat + ': the heap axes: ' + JSON.stringify(ticks));
    const keys = await c.$$eval('#heap-pair-key .peak', ss => ss.map(s => s.textContent));
    check(keys.length > 0 && keys.every(k => k.split(' \u2192 ').every(s => SIZE.test(s))), cwhat + ': the key\'s peaks: ' + JSON.stringify(keys.slice(0, 4)));
    const movers = await c.$$eval('#band-movers tbody tr', trs => trs.map(tr => [...tr.cells].slice(0, 4).map(td => td.textContent)));
    check(movers.length > 0 && movers.every(r => r.every((t, i) => SIZE.test(i < 2 ? t : t.replace(/\u00b7s$/, '')))),
          cwhat + ': the heap bands\' peaks and areas: ' + JSON.stringify(movers.slice(0, 3)));
    await c.screenshot({ path: `${out}/pages-compare-${tag}.png`, fullPage: true });
    await c.close();
  }
  const bad = errors.filter(e => !/favicon/.test(e));
  check(bad.length === 0, 'pages logged errors: ' + bad.join(' | '));
  await browser.close();
  console.log(t.line('pages'));
  process.exit(t.failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
