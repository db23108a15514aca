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
'use strict';
const [nm, base, liveRun, evilRun, out] = process.argv.slice(2);
const puppeteer = require(nm + '/puppeteer-core');
const fs = require('fs');
let checks = 0, failed = 0;
function check(ok, what) { checks++; if (!ok) { failed++; console.log('FAIL: ' + what); } }
const sleep = ms => new Promise(r => setTimeout(r, ms));
async function until(fn, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (await fn()) return true; await sleep(100); }
  return false;
}

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-proxy-server'],
  });
  const errors = [];
  async function open(path) {
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 900 });
    page.on('console', m => { if (m.type() === 'error') errors.push(path + ': ' + m.text()); });
    page.on('pageerror', e => errors.push(path + ': ' + e.message));
    await page.goto(base + path, { waitUntil: 'domcontentloaded' });
    await page.evaluate(() => { window.__loaded = (window.__loaded || 0) + 1; });
    return page;
  }
  // The share of a screenshot's pixels that are neither white nor the
  // page's flat background: a drawn chart or table has plenty.
  async function drawn(page, file) {
    const png = await page.screenshot({ path: out + '/' + file, fullPage: false });
    return page.evaluate(async b64 => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data, seen = new Set();
      let inked = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235) inked++;
        seen.add((d[i] >> 4) << 8 | (d[i + 1] >> 4) << 4 | d[i + 2] >> 4);
      }
      return { inked: inked / (d.length / 4), colours: seen.size };
    }, Buffer.from(png).toString('base64'));
  }

  // --- the catalogue: the live run marked live, its .hp growing ----------------
  const cat = await open('/');
  const hpCell = () => cat.$eval(`tr[data-run="${liveRun}"] td.hp`, e => +e.textContent || 0).catch(() => -1);
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
  console.log(`browser: ${checks} checks, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch(e => { console.log('FAIL: ' + (e && e.stack || e)); process.exit(1); });
