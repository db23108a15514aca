// browser_lib.cjs - what the browser checks (tests/peers/*_browser.cjs)
// share: the tally of their checks, waiting for a condition, Debian's
// Chromium launched headless, a page's errors collected, a page opened on
// a desktop's or a phone's screen, and how much of a screenshot is drawn.
// Test-only, never installed.
//
// May call: nothing but what its caller hands it (puppeteer-core, a page).
'use strict';

// check(ok, what) counts a check and prints "FAIL: what" when it failed;
// line(label) is the script's last line, "label: N checks, M failed".
function tally() {
  const t = { checks: 0, failed: 0 };
  t.check = (ok, what) => { t.checks++; if (!ok) { t.failed++; console.log('FAIL: ' + what); } };
  t.line = label => `${label}: ${t.checks} checks, ${t.failed} failed`;
  return t;
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

// Whether fn() came true within ms (asked every 100 ms).
async function until(fn, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (await fn()) return true; await sleep(100); }
  return false;
}

// Chromium ($CHROMIUM, else Debian's), headless, without the sandbox (CI
// runs as root) or a GPU; extra flags after those.
function launch(puppeteer, extra) {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', ...(extra || [])],
  });
}

// Every console error and uncaught exception of page into errors, each
// after "tag: ".
function collectErrors(page, tag, errors) {
  page.on('console', m => { if (m.type() === 'error') errors.push(tag + ': ' + m.text()); });
  page.on('pageerror', e => errors.push(tag + ': ' + e.message));
}

const PHONE_UA = 'Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) ' +
                 'Chrome/120.0 Mobile Safari/537.36';

// A new page of browser at url on a screen like vp (a phone's user agent
// when vp.isMobile), its errors collected into errors under tag, once
// loaded and ready: ready(page) when given, else until the page's body
// says data-ready="1" (10 s at most).
async function openPage(browser, url, vp, tag, errors, ready) {
  const page = await browser.newPage();
  if (vp.isMobile)
    await page.setUserAgent(PHONE_UA);
  await page.setViewport(vp);
  collectErrors(page, tag, errors);
  await page.goto(url, { waitUntil: 'load' });
  if (ready)
    await ready(page);
  else
    await until(() => page.evaluate(() => document.body.getAttribute('data-ready') === '1'), 10000);
  return page;
}

// A screenshot (its PNG bytes) measured by the page's own canvas:
// { inked: the share of its pixels that are not near white, colours:
// how many colours it has at 4 bits a channel }.  A drawn chart or table
// has plenty of both; a blank or failed page has neither.
function inkOf(page, png) {
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

module.exports = { tally, sleep, until, launch, collectErrors, openPage, inkOf };
