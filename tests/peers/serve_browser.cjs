// serve_browser.cjs - profdb serve in a real browser (headless Chromium
// driven by puppeteer-core, from tests/peers): run by tests/test_serve.sh
// while a simulated HaLVM guest writes its heap profile at a GHC-like pace.
//
//   node serve_browser.cjs NODE_MODULES BASE_URL LIVE_RUN EVIL_RUN OUT_DIR
//
// Checks, printing one line per failure and "browser: N checks, M failed":
// the catalogue marks the live run live and its .hp size grows with no
// reload; the run page's chart gains samples with no reload; when the
// domain is destroyed the page says so and shows the final report with
// its cost centres; a filtered catalogue stays filtered while it is rebuilt;
// the compare page draws its comparison; hostile names run no script in any page, and show as
// spelled (one backslash) with controls and bad bytes as visible escapes; no page logs
// an error; every screenshot has a drawn chart or table (not one flat
// colour), counted pixel by pixel in the browser.
// What every browser check shares (the tally, Chromium, errors, ink) is
// tests/peers/browser_lib.cjs.
'use strict';
//   node serve_browser.cjs NODE_MODULES BASE_URL compare OUT_DIR SAME_A SAME_B SAME2_A SAME2_B KIND_A KIND_B
//
// The compare page at 1400x1000 and, emulating a phone, at 390x844: from
// the top, what was compared, the differential flame graph, both heaps,
// the biggest movers, nothing wider than the screen; a band one colour in
// both heap panels (the pairs SAME and SAME2, -hd both); the warning that
// the heap profiles are of different kinds for KIND (-hc against -hd) and
// not for the others; and the catalogue's links: every run with an
// earlier run of its guest offers /compare?a=EARLIER&b=IT, and no other.
// Screenshots compare-*.png in OUT_DIR.
const [nm, base, liveRun, evilRun, out] = process.argv.slice(2);
const compareMode = liveRun === 'compare';
const puppeteer = require(nm + '/puppeteer-core');
const fs = require('fs');
const lib = require('./browser_lib.cjs');
const t = lib.tally(), check = t.check;
const { sleep, until } = lib;

async function comparePages(browser, errors, check) {
  const [sameA, sameB, same2A, same2B, kindA, kindB] = process.argv.slice(6).map(Number);
  const sizes = [
    { tag: 'desktop', vp: { width: 1400, height: 1000 } },
    { tag: 'mobile', vp: { width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true } },
  ];
  const openAt = (path, vp, tag) => lib.openPage(browser, base + path, vp, tag + ' ' + path, errors);
  for (const { tag, vp } of sizes) {
    for (const [a, b, kinds] of [[sameA, sameB, false], [same2A, same2B, false], [kindA, kindB, true]]) {
      const path = `/compare?a=${a}&b=${b}`, what = `${tag} ${path}`;
      const p = await openAt(path, vp, tag);
      // the sections in order, from the top, the first on the first screen
      const order = await p.evaluate(() => ['compared', 'flame-diff', 'heap-compare', 'changes'].map(id => {
        const e = document.getElementById(id);
        return e ? { id, top: e.getBoundingClientRect().top + scrollY, h: e.offsetHeight } : { id, top: -1, h: 0 };
      }));
      check(order.every(o => o.top >= 0 && o.h > 0), what + ': a section is missing: ' + JSON.stringify(order));
      check(order.every((o, i) => i === 0 || o.top > order[i - 1].top),
            what + ': the sections are not in order (compared, flame-diff, heap-compare, changes): ' + JSON.stringify(order));
      check(order[0].top < vp.height / 2, what + ': what was compared is not at the top: ' + order[0].top);
      const heads = await p.$$eval('#compared thead th', ths => ths.map(t => t.textContent));
      check(heads.join('|') === `|before: run ${a}|after: run ${b}`, what + ': the compared runs: ' + JSON.stringify(heads));
      const facts = await p.$$eval('#compared tbody th', ths => ths.map(t => t.textContent));
      for (const f of ['guest', 'host', 'state', 'started (UTC)', 'ended (UTC)', 'profiles'])
        check(facts.includes(f), what + ': the comparison does not say ' + f);
      // nothing wider than the screen
      const wide = await p.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      check(wide <= 1, what + ': the page is ' + wide + ' px wider than the screen');
      // both heaps, one colour per band in both
      const fills = await p.evaluate(() => ['heap-a', 'heap-b'].map(id => {
        const m = {};
        document.querySelectorAll('#' + id + ' path.band').forEach(e => { m[e.getAttribute('data-key')] = e.getAttribute('fill'); });
        return m;
      }));
      const na = Object.keys(fills[0]).length, nb = Object.keys(fills[1]).length;
      check(na > 2 && nb > 2, what + `: heap panels with ${na} and ${nb} bands`);
      const common = Object.keys(fills[0]).filter(k => k in fills[1]);
      const differ = common.filter(k => fills[0][k] !== fills[1][k]);
      if (!kinds) check(common.length >= 3, what + ': only ' + common.length + ' bands in both heaps');
      check(differ.length === 0, what + ': bands coloured differently in the two heaps: ' +
            differ.map(k => k + ' ' + fills[0][k] + '/' + fills[1][k]).join(', '));
      const [pa, pb] = await p.evaluate(() => ['heap-a', 'heap-b'].map(id => {
        const e = document.getElementById(id), r = e ? e.getBoundingClientRect() : { top: -1, left: -1, width: 0 };
        return { top: r.top, left: r.left, width: r.width };
      }));
      if (vp.isMobile) check(pb.top > pa.top && pa.width <= vp.width, what + ': the heaps are not one above the other: ' + JSON.stringify([pa, pb]));
      else check(Math.abs(pb.top - pa.top) < 2 && pb.left > pa.left, what + ': the heaps are not side by side: ' + JSON.stringify([pa, pb]));
      // the warning for profiles of different kinds, visible at the top, and only then
      const warn = await p.$eval('#kind-warning', e => ({ text: e.textContent, h: e.offsetHeight,
                                                          top: e.getBoundingClientRect().top })).catch(() => null);
      if (kinds)
        check(warn && warn.h > 0 && warn.top < vp.height && /-hc/.test(warn.text) && /-hd/.test(warn.text),
              what + ': no visible warning that the heap profiles are of different kinds: ' + JSON.stringify(warn));
      else
        check(warn === null, what + ': a kind warning for two profiles of the same kind: ' + JSON.stringify(warn));
      const movers = await p.$$eval('#changes table.changes tbody tr', t => t.length);
      check(movers > 0, what + ': no biggest movers');
      const name = `compare-${kinds ? 'kinds' : a === sameA ? 'same' : 'same2'}-${tag}.png`;
      await p.screenshot({ path: process.argv[5] + '/' + name, fullPage: true });
      await p.close();
    }
  }
  // the catalogue: a = the earlier run, b = the later, for every run with an earlier run of its guest
  const cat = await openAt('/', { width: 1400, height: 1000 }, 'catalogue');
  check(await until(async () => +(await cat.evaluate(() => document.body.getAttribute('data-updates') || 0)) >= 1, 8000),
        'catalogue: not rebuilt from the event stream');
  const rows = await cat.$$eval('#runs tbody tr', trs => trs.map(tr => ({
    run: +tr.getAttribute('data-run'), name: tr.querySelector('td.name').textContent,
    href: (tr.querySelector('a[href^="/compare"]') || { getAttribute: () => null }).getAttribute('href') })));
  const last = {};
  rows.slice().sort((x, y) => x.run - y.run).forEach(r => {
    const want = last[r.name] ? `/compare?a=${last[r.name]}&b=${r.run}` : null;
    check(r.href === want, `catalogue: run ${r.run} (${r.name}) links ${r.href}, want ${want}`);
    last[r.name] = r.run;
  });
  check(rows.some(r => r.run === kindB && r.href === `/compare?a=${kindA}&b=${kindB}`) &&
        rows.some(r => r.run === sameB && r.href), 'catalogue: the runs compared offer no comparison: ' + JSON.stringify(rows));
  await cat.close();
}

(async () => {
  const browser = await lib.launch(puppeteer, ['--no-proxy-server']);
  const errors = [];
  async function open(path) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 900 });
    lib.collectErrors(page, path, errors);
    await page.goto(base + path, { waitUntil: 'domcontentloaded' });
    await page.evaluate(() => { window.__loaded = (window.__loaded || 0) + 1; });
    return page;
  }
  // The share of a screenshot's pixels that are neither white nor the
  // page's flat background: a drawn chart or table has plenty.
  async function drawn(page, file) {
    const png = await page.screenshot({ path: out + '/' + file, fullPage: false });
    return lib.inkOf(page, png);
  }

  if (compareMode) {
    await comparePages(browser, errors, check);
    const bad = errors.filter(e => !/favicon/.test(e));
    check(bad.length === 0, 'pages logged errors: ' + bad.join(' | '));
    await browser.close();
    console.log(t.line('browser'));
    process.exit(t.failed ? 1 : 0);
  }

  // --- the catalogue: the live run marked live, its .hp growing ----------------
  const cat = await open('/');
  // the size shown is humanised ("12 kB"): its exact bytes are in data-bytes
  const hpCell = () => cat.$eval(`tr[data-run="${liveRun}"] td.hp`, e => +e.getAttribute('data-bytes') || 0).catch(() => -1);
  check(await until(async () => (await cat.$eval(`tr[data-run="${liveRun}"] .badge`, e => e.textContent).catch(() => '')) === 'live', 5000),
        'catalogue: run ' + liveRun + ' is not marked live');
  const hp0 = await hpCell();
  check(await until(async () => (await hpCell()) > hp0, 8000), 'catalogue: the live run\'s .hp size did not grow (' + hp0 + ')');
  check(await cat.evaluate(() => window.__loaded) === 1, 'catalogue: the page reloaded');
  const catShot = await drawn(cat, 'catalogue.png');
  check(catShot.inked > 0.02, 'catalogue screenshot is blank: ' + JSON.stringify(catShot));
  // a filtered catalogue stays filtered as the live table is rebuilt
  const filtered = await open('/?name=live-*&state=running');
  check(await until(async () => +(await filtered.evaluate(() => document.body.getAttribute('data-updates') || 0)) >= 2, 8000),
        'filtered catalogue: not rebuilt from the event stream');
  const shown = await filtered.$$eval('#runs tbody tr', rows => rows.map(r => r.getAttribute('data-run')));
  check(shown.length === 1 && shown[0] === String(liveRun), 'filtered catalogue shows runs ' + JSON.stringify(shown));
  check(await filtered.$eval('input[name=name]', e => e.value) === 'live-*', 'filtered catalogue: the form lost the filter');
  await drawn(filtered, 'catalogue-filtered.png');
  await filtered.close();

  // --- the run page: samples appear as the guest writes them -----------------
  const run = await open('/runs/' + liveRun);
  const samples = () => run.$eval('#heap-svg', e => +(e.getAttribute('data-samples') || 0)).catch(() => 0);
  check(await until(async () => (await samples()) > 0, 5000), 'run page: no sample drawn');
  const s0 = await samples();
  check(await until(async () => (await samples()) >= s0 + 5, 8000),
        'run page: drawn samples did not grow (' + s0 + ' -> ' + (await samples()) + ')');
  check(await run.evaluate(() => window.__loaded) === 1, 'run page: it reloaded while the run was live');
  check(/live: \d+ samples/.test(await run.$eval('#live', e => e.textContent)), 'run page: no live status line');
  const liveShot = await drawn(run, 'run-live.png');
  check(liveShot.inked > 0.05 && liveShot.colours > 20, 'live run screenshot has no chart: ' + JSON.stringify(liveShot));
  check(await run.$('#cost-centres') === null, 'run page: cost centres before the guest exited');
  // its duration counted on while it runs, by the rule every view has (web/duration.js)
  const durFact = () => run.$$eval('#facts table.facts tr', trs => (trs.find(tr => tr.cells[0].textContent === 'duration') || { cells: [0, { textContent: '' }] }).cells[1].textContent);
  const d0 = await durFact();
  check(/^(\d+ms|\d+\.\ds|\d+m\d\ds) \(still running\)$/.test(d0), 'run page: the live duration reads ' + JSON.stringify(d0));
  check(await until(async () => (await durFact()) !== d0, 3000), 'run page: the live duration does not count on: ' + JSON.stringify(d0));

  // --- the domain dies (the test destroys it when the guest is done) --------------
  let ended = '';
  const endWait = until(async () => {
    ended = await run.evaluate(() => document.body && document.body.getAttribute('data-ended') || '').catch(() => ended);
    return ended !== '';
  }, 60000);
  check(await endWait, 'run page: the run never ended');
  check(ended === 'complete', 'run page: the run ended ' + ended);
  check(await until(async () => (await run.$('#cost-centres').catch(() => null)) !== null, 10000),
        'run page: no cost centres in the final report');
  const finalShot = await drawn(run, 'run-final.png');
  check(finalShot.inked > 0.05, 'final report screenshot is blank: ' + JSON.stringify(finalShot));
  check(await run.$eval('#facts', e => /complete/.test(e.textContent)).catch(() => false), 'final report: state is not complete');

  // --- a crafted link: a malformed escape in the hash ("#q=%") stops no script ---
  const crafted = await open('/runs/' + liveRun + '#q=%25%&mode=line');
  await sleep(500);
  check(await crafted.$('#cost-centres') !== null, 'a #q=% link: no cost centres');
  const q = await crafted.$eval('#tree-search', e => e.value).catch(() => null);
  check(q === '%25%', 'a #q=% link: the search box holds ' + JSON.stringify(q) + ', want the text as written');
  await crafted.close();

  // --- hostile names: inert in the catalogue, the report, the compare page -------
  for (const path of ['/?name=*', '/runs/' + evilRun, '/compare?a=' + liveRun + '&b=' + evilRun]) {
    const p = await open(path);
    await sleep(500);
    const pwned = await p.evaluate(() => window.__xss === 1 || document.title === 'pwned' ||
                                         document.querySelectorAll('img, iframe, object, embed').length > 0);
    check(!pwned, path + ': a hostile name ran or made markup');
    // names as the profile spells them (one backslash), controls and a
    // byte that is not UTF-8 shown as escapes, never raw (the pages parse
    // the exact JSON through report.js's and catalogue.js's shown)
    const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e\ufffd]|[\ud800-\udfff]/;
    if (path.startsWith('/runs/')) {
      const tree = await p.$eval('#cost-centres', e => e.textContent).catch(() => '');
      check(tree.includes('lambda.\\') && !tree.includes('lambda.\\\\') && tree.includes('Bad\\xffMod') && !raw.test(tree),
            path + ': the tree does not show the names as spelled: ' + JSON.stringify(tree.slice(0, 400)));
    }
    if (path.startsWith('/?')) {
      check(await until(async () => +(await p.evaluate(() => document.body.getAttribute('data-updates') || 0)) >= 1, 8000),
            path + ': the catalogue was not rebuilt from the event stream');
      const names = await p.$$eval('#runs tbody td.name', tds => tds.map(td => td.textContent));
      check(names.some(n => n.includes('\\x1b]0;pwned\\x07')) && !names.some(n => raw.test(n)),
            path + ': the hostile run name not shown with visible escapes: ' + JSON.stringify(names));
    }
    if (path.startsWith('/runs/')) {
      const shot = await drawn(p, 'evil.png');
      check(shot.inked > 0.05, 'hostile run screenshot is blank');
    }
    if (path.startsWith('/compare')) {
      const shot = await drawn(p, 'compare.png');
      check(shot.inked > 0.05 && shot.colours > 20, 'compare screenshot has no chart: ' + JSON.stringify(shot));
      check(await p.$('#changes') !== null, 'compare page: no comparison section');
    }
    await p.close();
  }
  const ok = errors.filter(e => !/favicon/.test(e));
  check(ok.length === 0, 'pages logged errors: ' + ok.join(' | '));
  await browser.close();
  console.log(t.line('browser'));
  process.exit(t.failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
