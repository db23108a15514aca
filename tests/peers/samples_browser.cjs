// samples_browser.cjs - a sampled run's Samples section in a real browser
// (headless Chromium driven by puppeteer-core, from tests/peers): run by
// tests/test_samples_ui.sh.
//
//   node samples_browser.cjs NODE_MODULES BASE_URL RUN OUT_DIR REPORT_HTML
//
// RUN is tests/samples_gen.c's known_stream (1000 samples, sample i at
// i x 10 ms on vCPU i % 2; by i % 10: 0-3 memmove <- msort x3 <- main,
// 10 ms each; 4-5 by_key <- msort x2 <- main, 10 ms; 6-8 work <- main,
// 20 ms; 9 [idle], 10 ms).  At 1400x1000: the section is the page's first,
// says how the run was sampled, its first row is work (46.2% self); a drag
// across the strip selects exactly the samples whose time is in the
// brushed range (counted here from i x 10 ms, not from the page), and the
// table's self counts sum to them; focus by_key keeps exactly 200 (and in
// the range, those of i % 10 in 4-5), ignore 'idle|work' 600, vCPU 1 500;
// a bad expression marked and no page error; msort clicked in the flame
// graph: its sandwich (callers main 600, callees memmove 400, by_key 200);
// the URL keeps the view: a reload shows the same; the hostile module
// text is text, never markup.  At 390x844 (a phone): nothing wider than
// the screen.  The saved report (a file, no server) draws the same.
// Prints one line per failure and "samples browser: N checks, M failed";
// screenshots go to OUT_DIR.
'use strict';
const [nm, base, run, out, report] = process.argv.slice(2);
const puppeteer = require(nm + '/puppeteer-core');
const lib = require('./browser_lib.cjs');
const t = lib.tally(), check = t.check;

// known_stream's samples i whose time (us) is in [from, to), and of those
// whose class (i % 10) is in cls (all when not given)
function expected(from, to, cls, vcpu) {
  let n = 0;
  for (let i = 0; i < 1000; i++) {
    const us = i * 10000;
    if (from !== null && (us < from || us >= to)) continue;
    if (cls && !cls.includes(i % 10)) continue;
    if (vcpu !== undefined && i % 2 !== vcpu) continue;
    n++;
  }
  return n;
}

(async () => {
  const browser = await lib.launch(puppeteer, ['--no-proxy-server']);
  const errors = [];
  const ready = p => lib.until(() => p.evaluate(() => !!document.querySelector('#samples[data-kept]')), 10000);
  const desk = { width: 1400, height: 1000 };
  const url = base + '/runs/' + run;
  const page = await lib.openPage(browser, url, desk, 'run page', errors, ready);
  const figures = () => page.evaluate(() => {
    const s = document.getElementById('samples');
    return { kept: +s.getAttribute('data-kept'), scope: +s.getAttribute('data-scope'),
             from: window.profsvcSamples.state.from, to: window.profsvcSamples.state.to,
             selfSum: [...document.querySelectorAll('#samples-table tbody tr')].reduce((a, r) => a + +r.cells[2].textContent, 0),
             first: [...(document.querySelector('#samples-table tbody tr') || { cells: [] }).cells].map(c => c.textContent) };
  });

  // --- the section, the header, the table ----------------------------------------------------------
  const first = await page.evaluate(() => document.querySelector('main section').id);
  check(first === 'samples', 'the first section is ' + first + ', not the samples');
  const how = await page.$eval('#samples-how', e => e.textContent);
  check(/100 Hz asked, 50 Hz kept/.test(how) && /1000 samples taken, 7 lost, 2 vCPUs/.test(how) && /by CPU time/.test(how),
        'how it was sampled: ' + how);
  let f = await figures();
  check(f.scope === 1000 && f.kept === 1000 && f.selfSum === 1000, 'the whole run: ' + JSON.stringify(f));
  check(f.first[0] === 'work' && f.first[2] === '300' && f.first[4] === '46.2' && f.first[5] === '46.2',
        'the first row: ' + JSON.stringify(f.first));
  const msortRow = await page.evaluate(() => [...document.querySelectorAll('#samples-table tbody tr')]
    .map(r => [...r.cells].map(c => c.textContent)).find(c => c[0] === 'msort'));
  check(msortRow && msortRow[2] === '0' && msortRow[3] === '600' && msortRow[5] === '46.2', 'msort\'s row (total under recursion): ' + JSON.stringify(msortRow));
  const mod = await page.evaluate(() => {
    const td = [...document.querySelectorAll('#samples-table tbody tr')].find(r => r.cells[0].textContent === 'work').cells[1];
    return { text: td.textContent, markup: td.children.length };
  });
  check(mod.text === 'known<b>&\\x1b[1m' && mod.markup === 0, 'the hostile module: ' + JSON.stringify(mod));
  const buckets = await page.$$eval('#samples-strip rect.bucket', r => r.length);
  check(buckets > 50, 'the strip has ' + buckets + ' bars');
  await page.screenshot({ path: out + '/samples-1400.png', fullPage: true });

  // --- a brushed range: exactly the samples in it -----------------------------------------------------
  const box = await page.$eval('#samples-strip svg', s => { const r = s.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
  await page.mouse.move(box.x + box.w * 0.2, box.y + 20);
  await page.mouse.down();
  await page.mouse.move(box.x + box.w * 0.3, box.y + 20, { steps: 5 });
  await page.mouse.move(box.x + box.w * 0.4, box.y + 20, { steps: 5 });
  await page.mouse.up();
  f = await figures();
  check(f.from !== null && Math.abs(f.from - 2e6) < 1e5 && Math.abs(f.to - 4e6) < 1e5, 'the range brushed: ' + f.from + ' to ' + f.to);
  const inRange = expected(f.from, f.to);
  check(f.scope === inRange && f.kept === inRange && f.selfSum === inRange,
        'the brushed range: ' + JSON.stringify(f) + ', want ' + inRange);
  const flameInRange = await page.$$eval('#samples-flame g.sframe', g => g.length);
  check(flameInRange >= 6, 'the flame graph of the range has ' + flameInRange + ' frames');

  // --- focus, ignore, vCPU -----------------------------------------------------------------------------
  await page.type('#samples-focus', 'by_key');
  f = await figures();
  check(f.kept === expected(f.from, f.to, [4, 5]) && f.scope === inRange, 'focus by_key in the range: ' + JSON.stringify(f));
  await page.click('#samples-all');
  f = await figures();
  check(f.kept === 200 && f.scope === 1000 && f.from === null, 'focus by_key, the whole run: ' + JSON.stringify(f));
  const flameFocus = await page.$$eval('#samples-flame g.sframe title', ts => ts.map(x => x.textContent.split('\n')[0]).sort());
  check(JSON.stringify(flameFocus) === JSON.stringify(['by_key', 'main', 'msort', 'msort']), 'the flame graph under focus: ' + JSON.stringify(flameFocus));
  await page.$eval('#samples-focus', e => { e.value = ''; e.dispatchEvent(new Event('input')); });
  await page.type('#samples-ignore', 'idle|work');
  f = await figures();
  check(f.kept === 600, 'ignore idle|work: ' + JSON.stringify(f));
  await page.$eval('#samples-ignore', e => { e.value = ''; e.dispatchEvent(new Event('input')); });
  await page.select('#samples-vcpu', '1');
  f = await figures();
  check(f.scope === expected(null, null, null, 1) && f.kept === 500, 'vCPU 1: ' + JSON.stringify(f));
  await page.select('#samples-vcpu', '-1');
  await page.type('#samples-focus', '(');
  const bad = await page.$eval('#samples-focus', e => e.classList.contains('bad'));
  f = await figures();
  check(bad && f.kept === 1000, 'a bad expression: marked ' + bad + ', ' + JSON.stringify(f));
  await page.$eval('#samples-focus', e => { e.value = ''; e.dispatchEvent(new Event('input')); });

  // --- the sandwich of a function clicked in the flame graph --------------------------------------------
  const clicked = await page.evaluate(() => {
    const g = [...document.querySelectorAll('#samples-flame g.sframe')].find(x => x.querySelector('title').textContent.startsWith('msort\n'));
    if (!g) return false;
    g.querySelector('rect').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    return true;
  });
  check(clicked, 'no msort frame to click');
  const sw = await page.evaluate(() => {
    const rows = id => [...document.querySelectorAll('#' + id + ' tbody tr')].map(r => [r.cells[0].textContent, r.cells[2].textContent, r.cells[4].textContent]);
    return { me: (document.getElementById('sandwich-me') || {}).textContent, callers: rows('sandwich-callers'), callees: rows('sandwich-callees') };
  });
  check(JSON.stringify(sw.callers) === JSON.stringify([['main', '600', '100.0']]) &&
        JSON.stringify(sw.callees) === JSON.stringify([['memmove', '400', '66.7'], ['by_key', '200', '33.3']]) &&
        /total 600 samples \(46\.2%\)/.test(sw.me || ''), 'msort\'s sandwich: ' + JSON.stringify(sw));
  await page.screenshot({ path: out + '/samples-sandwich-1400.png', fullPage: true });

  // --- the URL keeps the view: a range, a focus and the sandwich, reloaded -----------------------------
  await page.evaluate(() => { const s = window.profsvcSamples.state; s.from = 2000000; s.to = 4000000; s.focus = 'msort'; window.profsvcSamples.update(); });
  const hash = await page.evaluate(() => location.hash);
  check(/sfrom=2&sto=4/.test(hash) && /sfocus=msort/.test(hash) && /sfn=msort/.test(hash), 'the URL: ' + hash);
  const page2 = await lib.openPage(browser, url + hash, desk, 'run page reloaded', errors, ready);
  const f2 = await page2.evaluate(() => { const s = document.getElementById('samples'); return { kept: +s.getAttribute('data-kept'), focus: document.getElementById('samples-focus').value, sandwich: !!document.getElementById('sandwich-callers') }; });
  check(f2.kept === expected(2e6, 4e6, [0, 1, 2, 3, 4, 5]) && f2.focus === 'msort' && f2.sandwich, 'the shared link: ' + JSON.stringify(f2));
  await page2.close();

  // --- a phone ------------------------------------------------------------------------------------------
  const phone = await lib.openPage(browser, url + '#sfn=msort', { width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
                                   'run page on a phone', errors, ready);
  const wide = await phone.evaluate(() => document.scrollingElement.scrollWidth);
  check(wide <= 391, 'on a phone the page is ' + wide + ' px wide');
  const stripW = await phone.$eval('#samples-strip svg', s => s.getBoundingClientRect().width);
  check(stripW > 300 && stripW <= 390, 'on a phone the strip is ' + stripW + ' px wide');
  await phone.evaluate(() => document.getElementById('samples').scrollIntoView());
  await phone.screenshot({ path: out + '/samples-390.png' });
  await phone.close();

  // --- the saved report, a file ---------------------------------------------------------------------------
  const rep = await lib.openPage(browser, 'file://' + report, desk, 'report file', errors, ready);
  const rk = await rep.evaluate(() => +document.getElementById('samples').getAttribute('data-kept'));
  check(rk === 1000, 'the report file: ' + rk + ' samples kept');
  await rep.close();

  check(errors.length === 0, 'page errors: ' + errors.join(' | '));
  await browser.close();
  console.log(t.line('samples browser'));
  process.exit(t.failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + (e && e.stack || e)); console.log(t.line('samples browser')); process.exit(1); });
