// eventlog_page.cjs - make bench's live eventlog page (bench/live_bench.py):
// a run page of profdb serve open in headless Chromium (puppeteer-core, from
// tests/peers) while its guest writes GHC's eventlog.
//
//   node eventlog_page.cjs NODE_MODULES
//
// It says "launched" once the browser runs, then opens the URL of the
// first line of stdin and says "ready".
// Each time the page puts a fetched timeline section in place (web/live.js
// sets the body's data-tl-bytes: the eventlog's size the section has at
// least), the frame that shows it is awaited and this process notes the
// CLOCK_MONOTONIC time (process.hrtime, the clock frontend-stub's
// --flush-log uses).  When stdin closes it prints one line per redraw,
// "BYTES NS", then "errors N" (what the page logged as errors), and exits.
'use strict';
const nm = process.argv[2];
const readline = require('readline');
const puppeteer = require(nm + '/puppeteer-core');

(async () => {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-proxy-server'],
  });
  const drawn = [];
  let errors = 0;
  const page = await browser.newPage();
  page.on('console', m => { if (m.type() === 'error') errors++; });
  page.on('pageerror', () => { errors++; });
  await page.exposeFunction('__benchDrawn', b => { drawn.push([b, process.hrtime.bigint()]); });
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('DOMContentLoaded', () => {
      new MutationObserver(() => {
        const b = document.body.getAttribute('data-tl-bytes');
        // the frame that shows it: after its paint
        requestAnimationFrame(() => setTimeout(() => window.__benchDrawn(b), 0));
      }).observe(document.body, { attributes: true, attributeFilter: ['data-tl-bytes'] });
    });
  });
  const lines = readline.createInterface({ input: process.stdin });
  const closed = new Promise(r => lines.on('close', r));
  process.stdout.write('launched\n');
  const url = await new Promise(r => lines.once('line', r));
  await page.goto(url, { waitUntil: 'load' });
  process.stdout.write('ready\n');
  await closed;
  for (const [b, t] of drawn) process.stdout.write(b + ' ' + t + '\n');
  process.stdout.write('errors ' + errors + '\n');
  await browser.close();
})().catch(e => { console.error(String(e && e.stack || e)); process.exit(1); });
