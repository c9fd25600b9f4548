// SPDX-License-Identifier: GPL-2.0-or-later
// jobtrace report --format html: draws the timeline and the usage chart
// from the page's JSON (report_html.c writes it; no network, no library).
(function () {
'use strict';
var D = JSON.parse(document.getElementById('jt-data').textContent);
var LW = 220; // label column of the timeline and the chart
var RH = 10; // a row of bars
var TOP = 20; // the axis
var KNOWN = { oom_kill: 1, spot_interruption: 1, node_idle: 1, stall: 1,
	io_bound: 1, slower_than_usual: 1, memory_near_limit: 1 };
var open = {}; // lanes whose processes are shown
var hit = []; // what each data-h index of the timeline stands for

function esc(s) {
	return String(s).replace(/[&<>"']/g, function (c) {
		return '&#' + c.charCodeAt(0) + ';';
	});
}
function hash(s) {
	var h = 0;
	for (var i = 0; i < s.length; i++)
		h = (h * 31 + s.charCodeAt(i)) | 0;
	return Math.abs(h) % 12;
}
function dur(s) {
	if (s < 1)
		return (s * 1000).toFixed(0) + ' ms';
	if (s < 60)
		return s.toFixed(s < 10 ? 2 : 1) + ' s';
	var m = Math.floor(s / 60), h = Math.floor(m / 60);
	if (h)
		return h + 'h' + String(m % 60).padStart(2, '0') + 'm';
	return m + 'm' + String(Math.floor(s % 60)).padStart(2, '0') + 's';
}
function bytes(v) {
	var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = 0;
	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	return (i ? v.toFixed(1) : v) + ' ' + u[i];
}
function clock(t) {
	return new Date((D.t0 + t) * 1000).toISOString().substr(11, 12);
}
function cut(s, n) {
	return s.length > n ? s.substr(0, n - 1) + '\u2026' : s;
}
// a step between axis labels at least px pixels apart
function step(span, width, px) {
	var want = span * px / width;
	var nice = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2,
		5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200,
		10800, 21600, 43200, 86400];
	for (var i = 0; i < nice.length; i++)
		if (nice[i] >= want)
			return nice[i];
	return Math.ceil(want / 86400) * 86400;
}
function flagClass(f) {
	return (f & 1 ? ' fail' : '') + (f & 2 ? ' oom' : '');
}
function outcome(f) {
	return f & 2 ? 'OOM-killed' : f & 1 ? 'failed' : f & 4 ? 'running' :
		'ok';
}
function laneHeight(l) {
	return l.r ? l.r * RH + 6 : 26;
}

// The timeline: an axis, a lane per task or tool, bars or density,
// failure marks, signals; an open lane shows its processes below it.
function draw() {
	var box = document.getElementById('timeline');
	if (!D.lanes.length) {
		box.innerHTML = '<p class="note">No processes recorded.</p>';
		return;
	}
	var W = Math.max(760, box.clientWidth), PW = W - LW - 14;
	var span = D.span > 0 ? D.span : 1;
	var X = function (t) {
		return LW + Math.max(0, Math.min(span, t)) / span * PW;
	};
	var o = [], y = TOP, k, i, l, top = [], hgt = [];
	hit = [];
	for (k = 0; k < D.lanes.length; k++) {
		l = D.lanes[k];
		top.push(y);
		hgt.push(laneHeight(l));
		y += laneHeight(l);
		if (open[k])
			y += (l.x.length + (l.xn > l.x.length ? 1 : 0)) * RH + 6;
	}
	var H = y + 4;
	// lanes: background, label
	for (k = 0; k < D.lanes.length; k++) {
		l = D.lanes[k];
		hit.push(['l', k]);
		o.push('<rect class="lane-bg' + (k % 2 ? ' odd' : '') +
			'" data-h="' + (hit.length - 1) + '" x="0" y="' + top[k] +
			'" width="' + W + '" height="' + (hgt[k] + (open[k] ?
			(l.x.length + (l.xn > l.x.length ? 1 : 0)) * RH + 6 :
			0)) + '"/>');
		o.push('<text class="lane-label' + (open[k] ? ' open' : '') +
			'" data-l="' + k + '" data-h="' + (hit.length - 1) +
			'" x="4" y="' +
			(top[k] + Math.min(hgt[k], 26) / 2 + 4) + '">' +
			(l.x.length ? (open[k] ? '\u25be ' : '\u25b8 ') : '') +
			esc(cut(l.n, 24)) + ' (' + l.i + ')</text>');
	}
	// the axis and its grid
	var st = step(span, PW, 90);
	o.push('<g class="axis">');
	for (var t = 0; t <= span + 1e-9; t += st) {
		o.push('<line class="grid" x1="' + X(t) + '" x2="' + X(t) +
			'" y1="' + (TOP - 4) + '" y2="' + H + '"/>');
		if (X(t) < W - 60)
			o.push('<text x="' + (X(t) + 2) + '" y="' + (TOP - 8) +
				'">' + (t ? '+' + dur(t) : clock(0) + ' UTC') +
				'</text>');
	}
	o.push('</g>');
	for (k = 0; k < D.lanes.length; k++) {
		l = D.lanes[k];
		if (l.r)
			drawBars(o, l, k, top[k], X);
		else
			drawDensity(o, l, k, top[k], X);
		if (open[k])
			drawDetail(o, l, k, top[k] + hgt[k] + 3, X);
	}
	drawSignals(o, top, hgt, H, X);
	box.innerHTML = '<svg width="' + W +
		'" height="' + H + '">' + o.join('') + '</svg>';
	legend();
}
function drawBars(o, l, k, y0, X) {
	var marks = '';
	for (var i = 0; i < l.b.length; i++) {
		var b = l.b[i], x = X(b[0]), w = Math.max(1, X(b[1]) - x);
		hit.push(['b', k, i]);
		o.push('<rect class="bar c' + l.c + flagClass(b[3]) +
			'" data-l="' + k + '" data-h="' + (hit.length - 1) +
			'" x="' + x.toFixed(1) +
			'" y="' + (y0 + 3 + b[4] * RH) + '" width="' +
			w.toFixed(1) + '" height="' + (RH - 2) + '"/>');
		if (b[3] & 3)
			marks += cross(X(b[1]), y0 + 3 + b[4] * RH + RH / 2 - 1);
	}
	if (marks)
		o.push('<path class="fail-mark" d="' + marks + '"/>');
}
function cross(x, y) {
	return 'M' + (x - 3) + ' ' + (y - 3) + 'l6 6m0 -6l-6 6';
}
function drawDensity(o, l, k, y0, X) {
	var max = 0, i, n = l.d.length, w = D.span / n, h = 20;
	for (i = 0; i < n; i++)
		max = Math.max(max, l.d[i]);
	var d = 'M' + X(0) + ' ' + (y0 + 3 + h);
	for (i = 0; i < n; i++) {
		var v = max > 0 ? l.d[i] / max * h : 0;
		d += 'L' + X(i * w).toFixed(1) + ' ' + (y0 + 3 + h - v).toFixed(1) +
			'L' + X((i + 1) * w).toFixed(1) + ' ' +
			(y0 + 3 + h - v).toFixed(1);
	}
	d += 'L' + X(D.span) + ' ' + (y0 + 3 + h) + 'Z';
	hit.push(['d', k, max]);
	o.push('<path class="dens c' + l.c + '" data-h="' + (hit.length - 1) +
		'" d="' + d + '"/>');
	var marks = '';
	for (i = 0; i < l.m.length; i++)
		marks += cross(X(l.m[i][0]), y0 + 3 + h / 2);
	if (marks)
		o.push('<path class="fail-mark" d="' + marks + '"/>');
}
function drawDetail(o, l, k, y0, X) {
	for (var i = 0; i < l.x.length; i++) {
		var p = l.x[i], x = X(p[0]), w = Math.max(1, X(p[1]) - x);
		var y = y0 + i * RH, tool = D.tools[p[3]];
		hit.push(['x', k, i]);
		o.push('<text class="plabel" x="' + (LW - 6) + '" y="' +
			(y + RH - 2) + '" text-anchor="end">' + p[2] + ' ' +
			esc(cut(tool, 18)) + '</text><rect class="pbar c' +
			hash(tool) + flagClass(p[4]) + '" data-h="' +
			(hit.length - 1) + '" x="' + x.toFixed(1) + '" y="' +
			(y + 1) + '" width="' + w.toFixed(1) + '" height="' +
			(RH - 3) + '"/>');
	}
	if (l.xn > l.x.length)
		o.push('<text class="more" x="' + (LW + 4) + '" y="' +
			(y0 + l.x.length * RH + RH - 2) + '">showing ' +
			l.x.length + ' of ' + l.xn + ' processes: failed' +
			' first, then the longest</text>');
}
function drawSignals(o, top, hgt, H, X) {
	for (var i = 0; i < D.sig.length; i++) {
		var s = D.sig[i], x = X(s[0]).toFixed(1);
		var y0 = s[3] >= 0 ? top[s[3]] : TOP;
		var y1 = s[3] >= 0 ? top[s[3]] + hgt[s[3]] : H;
		var cls = KNOWN[s[1]] ? 'k-' + s[1] : 'c' + hash(s[1]);
		hit.push(['s', i]);
		o.push('<path class="sig ' + cls + '" data-h="' +
			(hit.length - 1) + '" d="M' + x + ' ' + y0 + 'V' + y1 +
			'M' + (x - 4) + ' ' + y0 + 'l4 7l4 -7z"/>');
	}
}
function legend() {
	var kinds = {}, s = [], bars = 0, dense = 0, k;
	for (k = 0; k < D.lanes.length; k++) {
		if (D.lanes[k].r)
			bars += D.lanes[k].b.length;
		else
			dense++;
	}
	for (k = 0; k < D.sig.length; k++)
		kinds[D.sig[k][1]] = (kinds[D.sig[k][1]] || 0) + 1;
	s.push(D.lanes.length + ' lanes (a task, or a tool outside tasks), ' +
		bars + ' instance bars');
	if (dense)
		s.push(dense + ' lane' + (dense > 1 ? 's' : '') +
			' too busy for bars: shaded by how many instances run at' +
			' once');
	s.push('\u2715 failed or OOM-killed');
	for (k in kinds)
		s.push('<svg width="10" height="10"><path class="sig-key ' +
			(KNOWN[k] ? 'k-' + k : 'c' + hash(k)) +
			'" d="M1 1l4 7l4 -7z"/></svg> ' + esc(k) + ' \u00d7' +
			kinds[k]);
	if (D.sign > D.sig.length)
		s.push('the first ' + D.sig.length + ' of ' + D.sign +
			' signals drawn');
	s.push('click a lane to show its processes');
	document.getElementById('legend').innerHTML = s.join(' \u00b7 ');
}

// CPU (cores) and memory over time, on the timeline's time axis.
function drawUsage() {
	var box = document.getElementById('usage'), u = D.use;
	if (!u || (!u.samples && !D.n)) {
		box.innerHTML = '<p class="note">No samples recorded.</p>';
		return;
	}
	var W = Math.max(760, box.clientWidth), PW = W - LW - 14, H = 90;
	var span = D.span > 0 ? D.span : 1, n = u.cores.length, w = span / n;
	var X = function (t) { return LW + t / span * PW; };
	var o = [], y0 = 10;
	panel('CPU (cores)', u.cores, 'cpu-line', function (v) {
		return v.toFixed(v < 10 ? 1 : 0);
	});
	y0 += H + 24;
	panel('memory (RSS)', u.mem, 'mem-line', bytes);
	function panel(title, v, cls, fmt) {
		var max = 0, i, d = '', pen = false;
		for (i = 0; i < n; i++)
			if (v[i] !== null)
				max = Math.max(max, v[i]);
		o.push('<text x="4" y="' + (y0 + 12) + '">' + title + '</text>');
		o.push('<g class="axis">');
		for (i = 0; i <= 2; i++) {
			var yy = y0 + H - H * i / 2;
			o.push('<line class="grid" x1="' + LW + '" x2="' + (LW + PW) +
				'" y1="' + yy + '" y2="' + yy + '"/><text x="' +
				(LW - 6) + '" y="' + (yy + 3) + '" text-anchor="end">' +
				fmt(max * i / 2) + '</text>');
		}
		o.push('</g>');
		var Y = function (x) {
			return (y0 + H - (max > 0 ? x / max * H : 0)).toFixed(1);
		};
		if (cls === 'cpu-line') {
			d = 'M' + X(0) + ' ' + (y0 + H);
			for (i = 0; i < n; i++)
				d += 'L' + X((i + 0.5) * w).toFixed(1) + ' ' + Y(v[i]);
			d += 'L' + X(span) + ' ' + (y0 + H) + 'Z';
		} else {
			for (i = 0; i < n; i++) {
				if (v[i] === null)
					continue;
				d += (pen ? 'L' : 'M') + X((i + 0.5) * w).toFixed(1) +
					' ' + Y(v[i]);
				pen = true;
			}
		}
		if (d)
			o.push('<path class="' + cls + '" d="' + d + '"/>');
		else
			o.push('<text class="more" x="' + (LW + 4) + '" y="' +
				(y0 + H / 2) + '">no sample</text>');
	}
	box.innerHTML = '<svg width="' + W +
		'" height="' + (y0 + H + 6) + '">' + o.join('') + '</svg>';
}

// What the pointer is over, in words.
function describe(h) {
	var l, b, p;
	if (h[0] === 'l') {
		l = D.lanes[h[1]];
		return l.k + ' ' + l.n + '\n' + l.i + ' instances, ' + l.p +
			' processes, CPU ' + dur(l.cpu) + (l.f ? ', ' + l.f +
			' failed' : '') + (l.o ? ', ' + l.o + ' OOM-killed' : '') +
			(l.x.length ? '\nclick: ' + (open[h[1]] ? 'hide' : 'show') +
			' its processes' : '');
	}
	if (h[0] === 'b') {
		l = D.lanes[h[1]];
		b = l.b[h[2]];
		return l.n + ': an instance of ' + b[2] + ' process' +
			(b[2] > 1 ? 'es' : '') + ', ' + outcome(b[3]) + '\n' +
			clock(b[0]) + ' to ' + clock(b[1]) + ' UTC (' +
			dur(b[1] - b[0]) + ')';
	}
	if (h[0] === 'd') {
		l = D.lanes[h[1]];
		return l.n + ': ' + l.i + ' instances, up to ' +
			h[2].toFixed(1) + ' at once on average over a bin';
	}
	if (h[0] === 'x') {
		l = D.lanes[h[1]];
		p = l.x[h[2]];
		return 'pid ' + p[2] + ' ' + D.tools[p[3]] + ' on ' +
			D.hosts[p[9]] + ', exit ' + p[7] + '\n' + clock(p[0]) +
			' to ' + clock(p[1]) + ' UTC (' + dur(p[1] - p[0]) +
			'), CPU ' + dur(p[5]) + ', peak RSS ' + bytes(p[6]) +
			(p[8] ? '\n' + p[8] : '');
	}
	if (h[0] === 's') {
		var s = D.sig[h[1]];
		return s[1] + ' at ' + clock(s[0]) + ' UTC on ' + s[4] +
			(s[2] >= 0 ? ', pid ' + s[2] + ' ' + s[5] : '') +
			(s[6] && s[6] !== 'null' ? '\n' + s[6] : '');
	}
	return '';
}
function tipAt(e) {
	var tip = document.getElementById('tip');
	var a = e.target.getAttribute && e.target.getAttribute('data-h');
	if (a === null || a === undefined || !hit[a]) {
		tip.style.display = 'none';
		return;
	}
	tip.textContent = describe(hit[a]);
	tip.style.display = 'block';
	tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 530) + 'px';
	tip.style.top = (e.clientY + 14) + 'px';
}
function toggle(e) {
	var a = e.target.getAttribute && e.target.getAttribute('data-h');
	var h = a !== null && a !== undefined ? hit[a] : null;
	if (!h)
		return;
	var k = h[0] === 'l' || h[0] === 'b' || h[0] === 'd' ? h[1] : -1;
	if (k < 0 || !D.lanes[k].x.length)
		return;
	open[k] = !open[k];
	draw();
}

var tl = document.getElementById('timeline');
tl.addEventListener('mousemove', tipAt);
tl.addEventListener('mouseleave', function () {
	document.getElementById('tip').style.display = 'none';
});
tl.addEventListener('click', toggle);
var resized = 0;
window.addEventListener('resize', function () {
	clearTimeout(resized);
	resized = setTimeout(function () { draw(); drawUsage(); }, 100);
});
// #open=all or #open=0,3 in the address: those lanes open at first
var want = /open=([a-z0-9,]+)/.exec(location.hash);
if (want)
	want[1].split(',').forEach(function (v) {
		for (var k = 0; k < D.lanes.length; k++)
			if ((v === 'all' || +v === k) && D.lanes[k].x.length)
				open[k] = true;
	});
draw();
drawUsage();
// for tests: the time from navigation to the drawn, laid out page
void document.body.offsetHeight;
document.documentElement.setAttribute('data-render-ms',
	performance.now().toFixed(0));
})();
