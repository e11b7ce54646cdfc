/* The helpers report.html and diff.html share, in their script's function
 * scope ('use strict'). Assembled into each page in place of its
 * PRELUDE marker line when the binary is built (cmake/embed_page.cmake). */
var SVGNS = 'http://www.w3.org/2000/svg';
function $(id) { return document.getElementById(id); }
function el(tag, attrs, text) {
	var e = document.createElement(tag);
	for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
	if (text !== undefined && text !== null) e.textContent = String(text);
	return e;
}
function sv(tag, attrs, text) {
	var e = document.createElementNS(SVGNS, tag);
	for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
	if (text !== undefined && text !== null) e.textContent = String(text);
	return e;
}
function arr(x) { return Array.isArray(x) ? x : []; }
function isnum(x) { return typeof x === 'number' && isFinite(x); }
function num(x) { return isnum(x) ? x : 0; }
