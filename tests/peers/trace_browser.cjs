// trace_browser.cjs - a MirageOS trace's thread timeline in a real browser
// (headless Chromium driven by puppeteer-core, from tests/peers): run by
// tests/test_trace_timeline.sh.
//
//   node trace_browser.cjs NODE_MODULES BASE_URL RUN LIVE_RUN OUT_DIR REPORT_HTML
//
// RUN is a finished trace run; LIVE_RUN one whose guest is still tracing
// (or "-").  At 1400x1000 and at 390x844 (a phone, touch): the timeline is
// drawn (threads, arrows, GC marks, run slices, a counter axis each);
// the wheel zooms in around the pointer, '+' and '-' zoom, a drag and
// the arrow keys pan; a click on a thread lists its events; a hostile
// label is text, never markup; no heap section on a trace run's page; no
// page error; the saved report (REPORT_HTML, `profdb report`, opened as a
// file: no server) draws the same timeline from its inlined model and a
// click there lists a thread's events too; the live page's timeline grows with no reload, redrawn on
// the event stream's "trace" events.  Prints one line per failure and
// "browser: N checks, M failed".  Screenshots go to OUT_DIR.
// What every browser check shares (the tally, Chromium, errors, ink) is
// tests/peers/browser_lib.cjs.
'use strict';
const [nm, base, run, liveRun, out, report] = process.argv.slice(2);
const puppeteer = require(nm + '/puppeteer-core');
const lib = require('./browser_lib.cjs');
const t = lib.tally(), check = t.check;
const { sleep, until } = lib;

(async () => {
  const browser = await lib.launch(puppeteer, ['--no-proxy-server']);
  const errors = [];
  async function open(path, phone) {
    const page = await browser.newPage();
    if (phone) await page.emulate({ viewport: { width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
                                    userAgent: 'Mozilla/5.0 (iPhone) Mobile' });
    else await page.setViewport({ width: 1400, height: 1000 });
    lib.collectErrors(page, path, errors);
    await page.goto(path.startsWith('file:') ? path : base + path, { waitUntil: 'load' });
    await page.evaluate(() => { window.__loaded = (window.__loaded || 0) + 1; });
    return page;
  }
  const view = page => page.$eval('#trace-tl svg', s => s.getAttribute('data-view').split(' ').map(Number));
  const attr = (page, a) => page.$eval('#trace-tl svg', (s, a) => Number(s.getAttribute(a)), a);
  async function shot(page, file) {
    const box = await page.evaluate(() => {
      const e = document.getElementById('trace-tl');
      e.scrollIntoView();
      const r = e.getBoundingClientRect();
      return { x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: Math.min(r.height, 1400) };
    });
    await page.screenshot({ path: out + '/' + file, clip: box, captureBeyondViewport: true });
  }

  // --- a live run: the timeline grows with no reload -------------------------------------------
  if (liveRun !== '-') {
    const page = await open('/runs/' + liveRun, false);
    check(await page.$('#heap') === null, 'live: an empty heap chart on a trace run');
    const grew = await until(() => page.evaluate(() => Number(document.body.getAttribute('data-trace-redraws') || 0) >= 2), 30000);
    check(grew, 'live: the timeline was not redrawn on the stream\'s trace events');
    const e1 = await attr(page, 'data-events'), n1 = await attr(page, 'data-threads-drawn');
    const r1 = await page.evaluate(() => Number(document.body.getAttribute('data-trace-redraws')));
    await until(() => page.evaluate(r => Number(document.body.getAttribute('data-trace-redraws') || 0) >= r + 2, r1), 20000);
    const e2 = await attr(page, 'data-events'), n2 = await attr(page, 'data-threads-drawn');
    check(e2 > e1 && n2 >= n1, 'live: events ' + e1 + ' -> ' + e2 + ', threads drawn ' + n1 + ' -> ' + n2);
    const live = await page.$eval('#live', e => e.textContent);
    check(!/waiting for the guest/.test(live), 'live: still says ' + live);
    check(await page.evaluate(() => window.__loaded) === 1, 'live: the page reloaded');
    await shot(page, 'trace-live.png');
    await page.close();
  }
  for (const phone of [false, true]) {
    const tag = phone ? '390' : '1400';
    const page = await open('/runs/' + run, phone);
    check(await until(() => page.evaluate(() => {
      const b = document.getElementById('trace-tl');
      return b && b.getAttribute('data-wired') === '1';
    }), 5000), tag + ': the timeline was never drawn');
    check(await page.$('#heap') === null, tag + ': a heap section on a trace run');
    const threads = await attr(page, 'data-threads-drawn'), arrows = await attr(page, 'data-arrows-drawn');
    const gcs = await attr(page, 'data-gc-drawn');
    check(threads > 10 && arrows > 10 && gcs > 10, tag + ': drawn ' + threads + ' threads, ' + arrows + ' arrows, ' + gcs + ' GC marks');
    check(await page.$$eval('#trace-tl g.tt-counter', g => g.length) >= 2, tag + ': no counter axes');
    check(await page.$$eval('#trace-tl g.tt-run rect', r => r.length) > 10, tag + ': no run slices');
    // labels are text: the hostile one shows as itself, no element made of it
    check(await page.$$eval('script', s => s.every(e => !e.textContent.startsWith('x'))), tag + ': a label became a script');
    const labels = await page.$$eval('#trace-tl text.tt-label, #trace-tl line.th title', t => t.map(e => e.textContent));
    check(labels.some(l => l.indexOf('<script>x</script>') >= 0), tag + ': the hostile label is not shown as text');
    // the page fits the screen
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    check(wide <= (phone ? 390 : 1400) + 1, tag + ': the page is ' + wide + ' px wide');
    const v0 = await view(page);
    if (phone) await shot(page, 'trace-390.png'); else await shot(page, 'trace-1400.png');
    // zoom: the wheel over the plot, then '+' and '-' with the plot focused
    const box = await page.$eval('#trace-tl svg', s => { const r = s.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
    if (!phone) {
      await page.mouse.move(box.x + box.w / 2, box.y + 30);
      for (let i = 0; i < 4; i++) { await page.mouse.wheel({ deltaY: -200 }); await sleep(50); }
    } else {
      await page.click('#trace-tl button[data-tt="in"]');
      await page.click('#trace-tl button[data-tt="in"]');
    }
    let v1 = await view(page);
    check(v1[1] - v1[0] < (v0[1] - v0[0]) * 0.5, tag + ': zoom in did not narrow the view: ' + v0 + ' -> ' + v1);
    await page.evaluate(() => document.querySelector('#trace-tl svg').focus());
    await page.keyboard.press('+');
    let v2 = await view(page);
    check(Math.abs((v2[1] - v2[0]) * 2 - (v1[1] - v1[0])) < 4, tag + ': "+" did not halve the view: ' + v1 + ' -> ' + v2);
    await page.keyboard.press('-');
    v2 = await view(page);
    check(Math.abs((v2[1] - v2[0]) - (v1[1] - v1[0])) < 4, tag + ': "-" did not double the view: ' + v1 + ' -> ' + v2);
    // pan: a drag to the right shows earlier times; ArrowRight later ones
    if (!phone) {
      await page.mouse.move(box.x + box.w / 2, box.y + 30);
      await page.mouse.down();
      await page.mouse.move(box.x + box.w / 2 + 200, box.y + 30, { steps: 5 });
      await page.mouse.up();
    } else {
      await page.click('#trace-tl button[data-tt="left"]');
    }
    let v3 = await view(page);
    check(v3[0] < v2[0] && Math.abs((v3[1] - v3[0]) - (v2[1] - v2[0])) < 4, tag + ': the pan did not move the view back: ' + v2 + ' -> ' + v3);
    await page.evaluate(() => document.querySelector('#trace-tl svg').focus());
    await page.keyboard.press('ArrowRight');
    const v4 = await view(page);
    check(v4[0] > v3[0], tag + ': ArrowRight did not pan: ' + v3 + ' -> ' + v4);
    // wait for the window's detail (when the whole run's model was thinned) to settle
    await sleep(600);
    if (!phone) await shot(page, 'trace-1400-zoomed.png');
    // a click on a thread lists its events
    const target = await page.evaluate(() => {
      // a point of a thread's line where the line (or its label) is on top
      const ls = Array.from(document.querySelectorAll('#trace-tl line.th'));
      for (const l of ls) {
        l.scrollIntoView({ block: 'center' });
        const b = l.getBoundingClientRect();
        for (let x = Math.max(b.left, 0) + 2; x < Math.min(b.right, window.innerWidth) - 2; x += 3) {
          const e = document.elementFromPoint(x, b.top + b.height / 2);
          if (e && e.getAttribute('data-thread') === l.getAttribute('data-thread'))
            return { id: l.getAttribute('data-thread'), x: x, y: b.top + b.height / 2 };
        }
      }
      return null;
    });
    check(target !== null, tag + ': no thread line to click');
    if (target) {
      if (phone) await page.touchscreen.tap(target.x, target.y); else await page.mouse.click(target.x, target.y);
      const listed = await until(() => page.evaluate(id => {
        const l = document.getElementById('trace-tl-events');
        return l.getAttribute('data-thread') === id && l.querySelectorAll('li').length > 0;
      }, target.id), 5000);
      check(listed, tag + ': a click on thread ' + target.id + ' listed no events');
      if (phone) await shot(page, 'trace-390-thread.png');
    }
    await page.close();
  }

  // --- the saved report, offline ----------------------------------------------------------------
  if (report) {
    const page = await open('file://' + report, false);
    check(await until(() => page.evaluate(() => {
      const b = document.getElementById('trace-tl');
      return b && b.getAttribute('data-wired') === '1' && !b.getAttribute('data-api');
    }), 5000), 'report: the timeline was never drawn (or asks a server)');
    check(await attr(page, 'data-threads-drawn') > 10, 'report: no threads drawn');
    const t = await page.evaluate(() => {
      const l = Array.from(document.querySelectorAll('#trace-tl line.th')).find(x => x.getAttribute('data-thread') === '100');
      return l ? l.getAttribute('data-thread') : null;
    });
    if (t) await page.evaluate(() => window.profsvcTraceTimeline.pick(100));
    const n = await until(() => page.evaluate(() => document.querySelectorAll('#trace-tl-events li').length > 0), 3000);
    check(t && n, 'report: thread 100 listed no events offline');
    await page.close();
  }
  check(errors.length === 0, 'page errors: ' + errors.join(' | '));
  await browser.close();
  console.log(t.line('browser'));
  process.exit(t.failed ? 1 : 0);
})().catch(e => { console.log('browser: ' + e.stack); process.exit(2); });
