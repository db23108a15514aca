// catalogue_browser.cjs - the run catalogue of profdb serve as a newcomer
// meets it, on the demo's store: run by tests/test_demo.sh.
//
//   node catalogue_browser.cjs NODE_MODULES BASE_URL OUT_DIR CLI_JSON TICKED A B -- RUN...
//
// CLI_JSON is {"RUN": [duration, holds], ...}: what `profdb query runs`
// shows of every finished run (the test reads its table); TICKED a file
// this script makes once it has ticked runs A and B, after which the test
// adds a run (the catalogue's script then draws its table again); RUN...
// are run pages to look at.  Checks, printing one line per failure and
// "catalogue: N checks, M failed":
//  - every finished run's duration and holds are the same in the page as
//    the server wrote it (read with the script off), after the script drew
//    the table again, and in query runs;
//  - ticking runs A and B makes the link /compare?a=A&b=B (the earlier as
//    a), kept when the table is drawn again for a new run; a third tick
//    lets the first go; the link leads to the comparison of A and B;
//  - the run pages (and the catalogue on a phone) are drawn; no page
//    logs an error.
// Screenshots catalogue-*.png, run-N.png, compare.png in OUT_DIR.
// What every browser check shares (the tally, Chromium, errors, ink) is
// tests/peers/browser_lib.cjs.
'use strict';
const fs = require('fs');
const args = process.argv.slice(2);
const [nm, base, out, cliJson, tickedFile, A, B] = args;
const runs = args.slice(args.indexOf('--') + 1).map(Number);
const cli = JSON.parse(cliJson);
const puppeteer = require(nm + '/puppeteer-core');
const lib = require('./browser_lib.cjs');
const t = lib.tally(), check = t.check;
const { until } = lib;

// every row of the catalogue: run, state, duration, holds, the sizes
function rowsOf() {
  return [...document.querySelectorAll('#runs tbody tr')].map(tr => ({
    run: tr.getAttribute('data-run'), state: tr.className.split(' ')[0],
    dur: tr.querySelector('td.dur').textContent, holds: (tr.querySelector('td.holds') || {}).textContent,
    prof: tr.querySelector('td.prof').textContent, hp: tr.querySelector('td.hp').textContent,
  }));
}

(async () => {
  const browser = await lib.launch(puppeteer, ['--no-proxy-server']);
  const errors = [];
  const desk = { width: 1400, height: 1000 };
  const updates = p => p.evaluate(() => +(document.body.getAttribute('data-updates') || 0));
  // a box ticked (or unticked) as a reader's click does, found and clicked in
  // one turn of the page: the script may draw the table again between a
  // query and a click of its own (puppeteer's click), and that box is gone
  const tick = (p, run) => p.evaluate(r => document.querySelector(`tr[data-run="${r}"] input.pick`).click(), String(run));

  // --- the table as the server wrote it (no script), and as the script draws it
  const plain = await browser.newPage();
  await plain.setJavaScriptEnabled(false);
  await plain.goto(base + '/', { waitUntil: 'load' });
  const before = await plain.evaluate(rowsOf);
  await plain.close();
  const cat = await lib.openPage(browser, base + '/', desk, 'catalogue', errors,
                                 p => until(async () => (await updates(p)) >= 1, 10000));
  const after = await cat.evaluate(rowsOf);
  check(before.length > 0 && before.length === after.length, `rows: ${before.length} from the server, ${after.length} drawn`);
  for (const r of before) {
    const a = after.find(x => x.run === r.run);
    if (r.state === 'running' || !a) continue;
    for (const k of ['dur', 'holds', 'prof', 'hp'])
      check(a[k] === r[k], `run ${r.run}: ${k} ${JSON.stringify(r[k])} from the server, ${JSON.stringify(a[k])} drawn by the script`);
    const c = cli[r.run];
    check(c && c[0] === r.dur && c[1] === r.holds,
          `run ${r.run}: the page says ${JSON.stringify([r.dur, r.holds])}, query runs ${JSON.stringify(c)}`);
  }
  await cat.screenshot({ path: `${out}/catalogue-desktop.png`, fullPage: true });

  // --- any two runs ticked: their comparison, kept across the script's redraws
  const link = () => cat.$eval('#compare-picked', a => [a.getAttribute('href'), a.getAttribute('aria-disabled'),
                                                       document.getElementById('picked').textContent]);
  let l = await link();
  check(l[0] === null && l[1] === 'true', 'nothing ticked, yet a link: ' + JSON.stringify(l));
  await tick(cat, B);
  l = await link();
  check(l[0] === null && /tick one more/.test(l[2]), 'one run ticked, yet a link: ' + JSON.stringify(l));
  await tick(cat, A);
  const lo = Math.min(A, B), hi = Math.max(A, B), want = `/compare?a=${lo}&b=${hi}`;
  l = await link();
  check(l[0] === want && l[1] === 'false' && l[2] === `run ${hi} against run ${lo}`, `two ticked: ${JSON.stringify(l)}, want ${want}`);
  const seen = await updates(cat);
  fs.writeFileSync(tickedFile, 'ticked\n'); // the test adds a run now
  check(await until(async () => (await updates(cat)) > seen, 20000), 'the table was not drawn again for the new run');
  check(await until(async () => (await cat.$$eval('#runs tbody tr', t => t.length)) === after.length + 1, 5000),
        'the new run is not in the table');
  // the new run's import and its end may be two redraws: until it is still
  let last = await updates(cat);
  await until(async () => { await lib.sleep(700); const u = await updates(cat); const still = u === last; last = u; return still; }, 8000);
  l = await link();
  const boxes = await cat.$$eval('#runs input.pick:checked', bs => bs.map(b => b.value).sort());
  check(l[0] === want && JSON.stringify(boxes) === JSON.stringify([String(lo), String(hi)].sort()),
        `after the redraw: ticked ${JSON.stringify(boxes)}, link ${JSON.stringify(l)}`);
  await cat.screenshot({ path: `${out}/catalogue-ticked.png`, fullPage: true });
  // a third tick lets the first one go
  const third = after.map(r => r.run).find(r => r !== String(A) && r !== String(B));
  await tick(cat, third);
  const now = await cat.$$eval('#runs input.pick:checked', bs => bs.map(b => b.value).sort());
  check(JSON.stringify(now) === JSON.stringify([String(A), third].sort()), `a third tick: ${JSON.stringify(now)} ticked`);
  // back to A and B (the third unticked), and the comparison it leads to
  await tick(cat, third);
  check((await link())[0] === null, 'one run left ticked, yet a link: ' + JSON.stringify(await link()));
  await tick(cat, B);
  check((await link())[0] === want, 'ticked again: ' + JSON.stringify(await link()));
  await Promise.all([cat.waitForNavigation({ waitUntil: 'load' }), cat.click('#compare-picked')]);
  check(cat.url() === base + want, 'the link went to ' + cat.url());
  const compared = await cat.$$eval('#compared thead th', ths => ths.map(th => th.textContent));
  check(compared.includes(`before: run ${lo}`) && compared.includes(`after: run ${hi}`),
        'the compare page: ' + JSON.stringify(compared));
  await cat.screenshot({ path: `${out}/compare.png`, fullPage: true });
  await cat.close();

  // --- on a phone, and the run pages
  const phone = { width: 390, height: 844, deviceScaleFactor: 3, isMobile: true, hasTouch: true };
  const small = await lib.openPage(browser, base + '/', phone, 'catalogue phone', errors,
                                   p => until(async () => (await updates(p)) >= 1, 10000));
  const wide = await small.evaluate(() => document.documentElement.scrollWidth);
  check(wide <= 390, 'the catalogue is ' + wide + ' px wide on a 390 px phone');
  await small.screenshot({ path: `${out}/catalogue-phone.png`, fullPage: true });
  await small.close();
  for (const run of runs) {
    const p = await lib.openPage(browser, base + '/runs/' + run, desk, 'run ' + run, errors, () => lib.sleep(1500));
    const png = await p.screenshot({ path: `${out}/run-${run}.png`, fullPage: true });
    const ink = await lib.inkOf(p, png);
    check(ink.inked > 0.02 && ink.colours > 8, `run ${run}: its page is blank: ${JSON.stringify(ink)}`);
    await p.close();
  }
  const bad = errors.filter(e => !/favicon/.test(e));
  check(bad.length === 0, 'pages logged errors: ' + bad.join(' | '));
  await browser.close();
  console.log(t.line('catalogue'));
  process.exit(t.failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
