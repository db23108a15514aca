// safe_text.js - a guest's text as a person should see it in a page, by
// util/safe_text.h's rules: the JSON a page reads carries the exact text,
// so here a control, a bidi override or a byte that was not UTF-8
// (U+DC80..U+DCFF) becomes the visible \xNN or \uNNNN, as in the
// terminal; a backslash stays itself.  What is shown still reaches the
// page only as textContent or an attribute value, never as markup.
//
// make compiles it in before each script that shows guest text
// (report.js, trace_timeline.js, web/catalogue.js), so each stands alone
// in a page or a saved report.  Defines profsvcText; calls nothing.
var profsvcText = (function () {
  'use strict';
  var UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  function shown(s) {
    return s.replace(UNSAFE, function (c) {
      var n = c.charCodeAt(0);
      if (n >= 0xdc80 && n <= 0xdcff) return '\\x' + (n - 0xdc00).toString(16); // the byte
      if (n < 0x20 || n === 0x7f) return '\\x' + ('0' + n.toString(16)).slice(-2);
      return '\\u' + ('000' + n.toString(16)).slice(-4);
    });
  }
  // JSON.parse's reviver: every string as shown
  function revive(k, v) { return typeof v === 'string' ? shown(v) : v; }
  return { shown: shown, revive: revive };
})();
