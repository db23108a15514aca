/*
 * web_assets.h - the server's own style and scripts (web.css, live.js,
 * catalogue.js), compiled in as C strings by make (web_assets.c): pages
 * need no files at run time and no network.
 *
 * May call: nothing (data).
 */
#ifndef PROFSVC_WEB_ASSETS_H
#define PROFSVC_WEB_ASSETS_H

extern const char web_css[];
extern const char web_live_js[];
extern const char web_catalogue_js[];

#endif
