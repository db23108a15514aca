// trace_browser.cjs - a MirageOS trace's thread timeline in a real browser
// (headless Chromium driven by puppeteer-core, from tests/peers): run by
// tests/test_trace_timeline.sh.
//
//   node trace_browser.cjs NODE_MODULES BASE_URL RUN LIVE_RUN OUT_DIR REPORT_HTML [BIG_RUN]
//
// RUN is a finished trace run; LIVE_RUN one whose guest is still tracing
// (or "-"); BIG_RUN a trace of 300,000 events (175,017 threads, 16,667
// updates a counter).  On BIG_RUN at 1400x1000 and 390x844: each counter
// drawn with a point per column that has updates (at least 100; the whole
// run's were one point each), the threads in a group per label, a click
// (a tap) on a group's header folding it to one lane and again unfolding
// it, "fold all" and "unfold all", taller rows growing the lanes, which
// then scroll in their own box (the down arrow).  At 1400x1000 and at
// 390x844 (a phone, touch) on RUN: the timeline is
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
const [nm, base, run, liveRun, out, report, bigRun] = process.argv.slice(2);
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

  // --- a big run: counters per column, threads in groups that fold -------------------------------
  if (bigRun && bigRun !== '-') {
    for (const phone of [false, true]) {
      const tag = 'big ' + (phone ? '390' : '1400');
      const page = await open('/runs/' + bigRun, phone);
      check(await until(() => page.evaluate(() => {
        const b = document.getElementById('trace-tl');
        return b && b.getAttribute('data-wired') === '1';
      }), 5000), tag + ': the timeline was never drawn');
      const pts = (await page.$eval('#trace-tl svg', s => s.getAttribute('data-counter-points') || '')).split(' ').map(Number);
      check(pts.length >= 3 && pts.every(n => n >= 100), tag + ': the counters drawn with ' + pts.join(', ') + ' points');
      const ranges = await page.$$eval('#trace-tl g.tt-counter polyline', p => p.map(e => e.getAttribute('points').split(' ').length));
      check(ranges.every(n => n >= 100), tag + ': counter lines of ' + ranges.join(', ') + ' points');
      const g0 = await attr(page, 'data-groups'), c0 = await attr(page, 'data-groups-collapsed'), l0 = await attr(page, 'data-lanes');
      const heads = await page.$$eval('#trace-tl g.tt-group text', t => t.map(e => e.textContent));
      check(g0 >= 5 && heads.length === g0, tag + ': ' + g0 + ' groups, headers ' + JSON.stringify(heads));
      check(heads.some(h => h.indexOf('<script>x</script> \u00b7 5 threads') >= 0) && heads.some(h => h.indexOf('(no label) \u00b7 175000 threads') >= 0),
            tag + ': the groups\' headers: ' + JSON.stringify(heads));
      check(l0 <= 40 + g0, tag + ': ' + l0 + ' lanes at first (a budget of 40)');
      if (!phone) await shot(page, 'trace-big-1400.png'); else await shot(page, 'trace-big-390.png');
      // a click on an expanded group of several lanes folds it to one, and back
      const where = () => page.evaluate(() => {
        const g = Array.from(document.querySelectorAll('#trace-tl g.tt-group')).find(x => /\u00b7 [2-9][0-9]* lanes$/.test(x.textContent) ||
          x.getAttribute('aria-expanded') === 'false');
        if (!g) return null;
        g.scrollIntoView({ block: 'center' });
        const r = g.getBoundingClientRect();
        return { x: r.left + 60, y: r.top + r.height / 2, text: g.textContent };
      });
      const tap = async p => { if (phone) await page.touchscreen.tap(p.x, p.y); else await page.mouse.click(p.x, p.y); };
      let hd = await where();
      check(hd !== null, tag + ': no group of several lanes to fold');
      if (hd) {
        await tap(hd);
        const c1 = await attr(page, 'data-groups-collapsed'), l1 = await attr(page, 'data-lanes');
        check(c1 === c0 + 1 && l1 < l0, tag + ': a click on "' + hd.text + '": ' + c0 + ' -> ' + c1 + ' groups folded, ' + l0 + ' -> ' + l1 + ' lanes');
        if (!phone) await shot(page, 'trace-big-folded.png');
        hd = await where();
        if (hd) await tap(hd);
        check(await attr(page, 'data-groups-collapsed') === c0 && await attr(page, 'data-lanes') === l0, tag + ': a second click did not unfold it');
      }
      await page.click('#trace-tl button[data-tt="fold"]');
      check(await attr(page, 'data-groups-collapsed') === g0 && await attr(page, 'data-lanes') === g0, tag + ': "fold all" left ' +
            await attr(page, 'data-lanes') + ' lanes');
      await page.click('#trace-tl button[data-tt="unfold"]');
      const l3 = await attr(page, 'data-lanes');
      check(await attr(page, 'data-groups-collapsed') === 0 && l3 >= l0, tag + ': "unfold all": ' + l3 + ' lanes');
      // taller rows: the lanes grow, and scroll in their own box
      const h0 = await page.$eval('#trace-tl svg.tt-threads', s => s.getBoundingClientRect().height);
      for (let i = 0; i < 3; i++) await page.click('#trace-tl button[data-tt="taller"]');
      const h1 = await page.$eval('#trace-tl svg.tt-threads', s => s.getBoundingClientRect().height);
      const box = await page.$eval('#trace-tl .tt-lanes', b => ({ sh: b.scrollHeight, ch: b.clientHeight }));
      check(h1 > h0 * 2 && box.sh > box.ch, tag + ': taller rows: the lanes ' + h0 + ' -> ' + h1 + ' px, their box ' + box.ch + ' of ' + box.sh);
      await page.evaluate(() => document.querySelector('#trace-tl svg').focus());
      await page.keyboard.press('ArrowDown');
      check(await page.$eval('#trace-tl .tt-lanes', b => b.scrollTop) > 0, tag + ': the down arrow did not scroll the lanes');
      await page.close();
    }
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
