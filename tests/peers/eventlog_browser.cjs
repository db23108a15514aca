// eventlog_browser.cjs - a run's GHC eventlog timeline in a real browser
// (headless Chromium driven by puppeteer-core, from tests/peers): run by
// tests/test_eventlog_ui.sh.
//
//   node eventlog_browser.cjs NODE_MODULES BASE_URL RUN PAUSES MARKERS LIVE_RUN OUT_DIR
//
// RUN is a finished run whose eventlog has PAUSES GC pauses and MARKERS
// user markers; LIVE_RUN a run whose guest is still writing its eventlog
// (or "-").  Checks, printing one line per failure and
// "browser: N checks, M failed": the timeline is drawn with one bar per
// pause and the markers labelled; hovering a pause names its generation
// and duration; zooming in narrows the view and the axis follows; the
// live page's pause count grows with no reload, each redraw fetched on
// the event stream's "eventlog" event and keeping the zoom; no page logs
// an error; every screenshot has something drawn.  Screenshots go to
// OUT_DIR.
// What every browser check shares (the tally, Chromium, errors, ink) is
// tests/peers/browser_lib.cjs.
'use strict';
const [nm, base, run, pauses, markers, liveRun, out] = process.argv.slice(2);
const puppeteer = require(nm + '/puppeteer-core');
const lib = require('./browser_lib.cjs');
const t = lib.tally(), check = t.check;
const { until } = lib;

(async () => {
  const browser = await lib.launch(puppeteer, ['--no-proxy-server']);
  const errors = [];
  async function open(path) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 1000 });
    lib.collectErrors(page, path, errors);
    await page.goto(base + path, { waitUntil: 'load' });
    await page.evaluate(() => { window.__loaded = (window.__loaded || 0) + 1; });
    return page;
  }
  // a screenshot of the timeline section; the share of its pixels inked
  async function shot(page, file) {
    // by its box on the page: a live page puts a new section in place as its eventlog grows
    const box = await page.evaluate(() => {
      const e = document.getElementById('timeline');
      if (!e) return null;
      const r = e.getBoundingClientRect();
      return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height };
    });
    if (!box) return 0;
    const png = await page.screenshot({ path: out + '/' + file, clip: box, captureBeyondViewport: true });
    return (await lib.inkOf(page, png)).inked;
  }

  // --- a finished run ------------------------------------------------------------------
  let page = await open('/runs/' + run);
  check(await until(() => page.evaluate(() => {
    const s = document.getElementById('tl-svg');
    return s && s.getAttribute('data-wired') === '1';
  }), 5000), 'the timeline was never drawn and wired');
  const bars = await page.$$eval('#tl-svg rect.gc', r => r.length);
  check(bars === Number(pauses), 'GC bars: ' + bars + ', want ' + pauses);
  const labels = await page.$$eval('#tl-svg text.tl-mlabel', t => t.map(e => e.firstChild.textContent));
  check(labels.length === Number(markers), 'marker labels: ' + labels.length + ', want ' + markers);
  const lanes = await page.$$eval('#tl-svg g.lane', g => g.map(e => Number(e.getAttribute('data-spans'))));
  check(lanes.length >= 1 && lanes.every(n => n > 0), 'capability lanes with running spans: ' + JSON.stringify(lanes));
  const lines = await page.$$eval('#tl-svg polyline', p => p.map(e => e.getAttribute('points').trim().split(/\s+/).length));
  check(lines.length === 2 && lines.every(n => n > 1), 'heap size and live data lines: ' + JSON.stringify(lines));
  // the bars are visible: at least one has a box on the page
  const boxes = await page.$$eval('#tl-svg rect.gc', r => r.filter(e => {
    const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 10;
  }).length);
  check(boxes === bars, 'bars with a box on the page: ' + boxes + ' of ' + bars);
  // hover: the widest pause
  await page.$eval('#tl-svg', s => s.scrollIntoView({ block: 'center' }));
  const target = await page.$$eval('#tl-svg rect.gc', r => {
    let best = 0;
    r.forEach((e, i) => { if (+e.getAttribute('data-ns') > +r[best].getAttribute('data-ns')) best = i; });
    const b = r[best].getBoundingClientRect();
    return { x: b.left + b.width / 2, y: b.top + b.height / 2, gen: r[best].getAttribute('data-gen') };
  });
  await page.mouse.move(target.x, target.y);
  const tip = await page.$eval('#tl-tip', t => t.textContent);
  check(/GC generation \d+: [0-9.]+ (us|ms|s) from/.test(tip) && tip.indexOf('generation ' + target.gen) >= 0,
        'hover over a pause: ' + JSON.stringify(tip));
  // hover over the middle of the run: the heap lines' values there
  const mid = await page.$eval('#tl-svg polyline.heap-size', p => {
    const b = p.getBoundingClientRect(); return { x: b.left + b.width / 2, y: b.top + b.height / 2 };
  });
  await page.mouse.move(mid.x, mid.y);
  const tip2 = await page.$eval('#tl-tip', t => t.textContent);
  check(/heap size [0-9.]+ [kMGT]?B\b/.test(tip2) && /live data [0-9.]+ [kMGT]?B\b/.test(tip2),   // sizes as the pages write them
        'hover over the heap lines: ' + JSON.stringify(tip2));
  await page.mouse.move(target.x, target.y);
  check(await shot(page, 'eventlog-timeline.png') > 0.02, 'the timeline screenshot is blank');
  // zoom: twice in, the view narrower, the axis's first label no longer 0
  const before = await page.$eval('#tl-svg svg.tl-plot', s => s.getAttribute('viewBox'));
  await page.click('#timeline button[data-zoom="in"]');
  await page.click('#timeline button[data-zoom="in"]');
  const after = await page.$eval('#tl-svg svg.tl-plot', s => s.getAttribute('viewBox'));
  const w0 = Number(before.split(' ')[2]), w1 = Number(after.split(' ')[2]);
  check(Math.abs(w1 - w0 / 4) < 0.01 * w0, 'zoom in twice: viewBox ' + before + ' -> ' + after);
  const ticks = await page.$$eval('#tl-svg g.tl-axis text', t => t.map(e => Number(e.textContent)));
  check(ticks.length >= 3 && ticks[0] > 0, 'the axis after zooming: ' + JSON.stringify(ticks));
  check(await shot(page, 'eventlog-timeline-zoomed.png') > 0.02, 'the zoomed screenshot is blank');
  await page.click('#timeline button[data-zoom="reset"]');
  const reset = await page.$eval('#tl-svg svg.tl-plot', s => s.getAttribute('viewBox'));
  check(reset === before, 'reset: ' + reset + ', want ' + before);
  await page.close();

  // --- a live run: the pauses grow with no reload -----------------------------------------
  if (liveRun !== '-') {
    page = await open('/runs/' + liveRun);
    const count = () => page.evaluate(() => {
      const s = document.getElementById('timeline');
      return s && s.getAttribute('data-pauses') !== null ? Number(s.getAttribute('data-pauses')) : -1;
    });
    const follows = await page.evaluate(() => !!document.querySelector('#timeline[data-follow]'));
    check(follows, 'the live page does not follow its timeline');
    const seen = [], samples = [];
    const heapSamples = () => page.evaluate(() => {
      const s = document.getElementById('heap-svg');
      return s && s.getAttribute('data-samples') !== null ? Number(s.getAttribute('data-samples')) : -1;
    });
    const grew = await until(async () => {
      const n = await count(), h = await heapSamples();
      if (!seen.length || seen[seen.length - 1] !== n) seen.push(n);
      if (h > 0 && (!samples.length || samples[samples.length - 1] !== h)) samples.push(h);
      return seen.filter(v => v >= 0).length >= 3 && samples.length >= 2;
    }, 30000);
    // the run has no .hp: its heap bands are the eventlog's samples, live too
    check(samples.length >= 2 && samples.every((v, i) => i === 0 || v > samples[i - 1]),
          'heap samples on the live page (from the eventlog): ' + JSON.stringify(samples));
    check(grew, 'pauses on the live page: ' + JSON.stringify(seen) + ' (want three increasing counts)');
    check(seen.every((v, i) => i === 0 || v > seen[i - 1]), 'pause counts not increasing: ' + JSON.stringify(seen));
    // the redraws came from the stream's eventlog events (no timer)
    const by = await page.evaluate(() => [document.body.getAttribute('data-tl-by'),
      Number(document.body.getAttribute('data-tl-redraws')), Number(document.body.getAttribute('data-tl-bytes'))]);
    check(by[0] === 'eventlog' && by[1] >= 2 && by[2] > 0, 'the live timeline\'s redraws (by, count, bytes): ' +
          JSON.stringify(by));
    // a zoomed view outlives the next redraw.  The live page replaces the
    // section at each redraw, so the button is found and clicked in one
    // turn of the page, one evaluate: a mouse click found its button
    // detached once, and so did $eval (a query, then a call: a redraw came
    // between them, and the click zoomed the section just replaced).  The
    // finished run's buttons above take real mouse clicks.
    const press = z => page.evaluate(z => document.querySelector('#timeline button[data-zoom="' + z + '"]').click(), z);
    // the page's redraws, and its timeline's wiring and view (what a failure says)
    const state = () => page.evaluate(() => {
      const s = document.getElementById('tl-svg');
      return [document.body.getAttribute('data-tl-redraws'), s && s.getAttribute('data-wired'), s && s.getAttribute('data-view')];
    });
    const before = await state();
    await press('in');
    const after = await state(), zoomed = after[2];
    const redrawn = await until(async () => Number(await page.evaluate(() =>
      document.body.getAttribute('data-tl-redraws'))) > by[1] + 1, 30000);
    const kept = await page.$eval('#tl-svg', s => s.getAttribute('data-view'));
    check(redrawn && zoomed && kept === zoomed, 'the zoom across a live redraw: ' + zoomed + ' -> ' + kept +
          (redrawn ? '' : ' (no redraw came)') + '; [redraws, wired, view] before the click ' + JSON.stringify(before) +
          ', after ' + JSON.stringify(after));
    await press('reset');
    const wired = await page.evaluate(() => document.getElementById('tl-svg') &&
      document.getElementById('tl-svg').getAttribute('data-wired') === '1');
    check(wired, 'the redrawn live timeline is not wired');
    check(await page.evaluate(() => window.__loaded) === 1, 'the live page reloaded while the run lasted');
    check(await shot(page, 'eventlog-timeline-live.png') > 0.02, 'the live screenshot is blank');
    await page.close();
  }
  check(errors.length === 0, 'page errors: ' + errors.join(' | '));
  await browser.close();
  console.log(t.line('browser'));
  process.exit(t.failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
