/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The HTML report's script: draws the data block (output/html_json.c
   writes it) as a chart of the heap over time, the tree and flame graph
   of one snapshot (the peak first, then any clicked), and the per-site
   tables. No library, no network: the page must open offline. Large
   profiles are thinned when drawn (points per pixel column, nodes too
   narrow to see), never in what hovering and the tables show. */
(function () {
  'use strict';

  /* A failure must be visible, on the page and to the tests that load it
     headless (they look for data-js-error on <body>). */
  function showError(message) {
    document.body.dataset.jsError = String(message);
    var box = document.getElementById('js-error');
    if (box) {
      box.hidden = false;
      box.textContent = 'The report could not be drawn: ' + message;
    }
  }
  window.addEventListener('error', function (ev) {
    showError(ev.message || 'script error');
  });

  /* SVG's namespace as the HTML parser gives it: the page holds no URL,
     not even a namespace name, so that checking it for network
     references is a plain search. */
  var SVGNS = (function () {
    var holder = document.createElement('div');
    holder.innerHTML = '<svg></svg>';
    return holder.firstChild.namespaceURI;
  })();
  var CHART_TOP_ENTRIES = 10;   /* stacked layers, as massif-visualizer */
  var FLAME_MIN_FRACTION = 0.001; /* narrower nodes are not drawn */
  var FLAME_MAX_NODES = 6000;
  var TREE_EAGER_DEPTH = 2;     /* deeper levels are built when opened */
  var PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2',
    '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac', '#86bcb6'];

  /* ---- small helpers ---- */

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    return e;
  }
  function setAttrs(e, attrs) {
    for (var k in attrs || {}) {
      if (k === 'text') e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
  }
  function append(e, children) {
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
  }
  function escapeHtml(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c];
    });
  }
  function grouped(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }
  function bytes(n) {
    var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    var u = 0;
    while (n >= 1024 && u < units.length - 1) { n /= 1024; u++; }
    return (u ? n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) : String(n)) + ' ' + units[u];
  }
  function count(n) {
    var units = ['', 'k', 'M', 'G', 'T', 'P'];
    var u = 0;
    while (n >= 1000 && u < units.length - 1) { n /= 1000; u++; }
    return (u ? n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0) : String(n)) + units[u];
  }
  function percent(part, whole) {
    return whole ? (100 * part / whole).toFixed(2) + '%' : '-';
  }
  /* The function of a Massif label: "f (t.c:6)" and "f (in /lib/x.so)"
     without their place. */
  function functionOf(label) {
    var at = label.lastIndexOf(' (');
    return at > 0 && label.charAt(label.length - 1) === ')' ? label.slice(0, at) : label;
  }
  /* One key for an entry across snapshots: "in 3 places, all below..."
     and "in 5 places, ..." are the same below-threshold entry. */
  function entryKey(label) {
    return /^in \d+ places?,/.test(label) ? '(entries below the threshold)' : label;
  }
  function colorOf(name) {
    var h = 0;
    for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
    var hue = 10 + Math.abs(h) % 50;  /* warm, as flame graphs are */
    return 'hsl(' + hue + ',' + (70 + Math.abs(h >> 8) % 25) + '%,' + (58 + Math.abs(h >> 16) % 15) + '%)';
  }

  /* Tree nodes are [bytes, label] or [bytes, label, children]. */
  function nodeBytes(n) { return n[0]; }
  function nodeLabel(n) { return n[1]; }
  function nodeChildren(n) { return n[2] || []; }

  var TIME_UNITS = { i: 'instructions executed', ms: 'milliseconds', B: 'bytes allocated and freed' };

  /* ---- the data ---- */

  var D = JSON.parse(document.getElementById('heaptrace-data').textContent);
  /* snapshots as objects, in file order */
  var snaps = D.snaps.map(function (s, i) {
    return { i: i, number: s[0], time: s[1], heap: s[2], extra: s[3], stacks: s[4],
      kind: ['empty', 'detailed', 'peak'][s[5]], tree: D.trees[i],
      total: s[2] + s[3] + s[4] };
  });
  var peakIndex = D.peak >= 0 ? D.peak : -1;
  var tip = el('div', { id: 'tip', hidden: '' });
  var app = document.getElementById('app');
  var views = {};         /* redrawn on selection: chart cursor, tree, flame */

  /* ---- header ---- */

  function header() {
    var peak = peakIndex >= 0 ? snaps[peakIndex] : null;
    var facts = el('dl', { class: 'facts' });
    function fact(name, value) {
      append(facts, [el('dt', { text: name }), el('dd', {}, [value])]);
    }
    fact('profile', el('code', { text: D.path }));
    if (D.cmd !== null) fact('command', el('code', { text: D.cmd }));
    if (D.desc !== null && D.desc !== '(none)') fact('options', el('code', { text: D.desc }));
    fact('time unit', (D.time_unit || '?') + ' (' + (TIME_UNITS[D.time_unit] || 'unknown unit') + ')');
    var detailed = snaps.filter(function (s) { return s.tree; }).length;
    fact('snapshots', snaps.length + ' (' + detailed + ' detailed)');
    var measure = D.pages_as_heap ? ' pages mapped (--pages-as-heap)' : ' heap';
    var withStacks = peak && peak.stacks ? ' + ' + bytes(peak.stacks) + ' stacks (' + grouped(peak.stacks) + ' B)' : '';
    fact('peak', peak ? bytes(peak.heap) + measure + ' (' + grouped(peak.heap) + ' B)' + withStacks + ' at time ' +
      grouped(peak.time) + ', snapshot ' + peak.number : 'none (no detailed snapshot)');
    if (D.sampling) fact('sampling', el('strong', { class: 'sampling-note', text: D.sampling.text }));
    var title = el('h1', { text: 'heaptrace report' });
    if (D.pages_as_heap) append(title, [el('span', { class: 'badge', text: 'pages as heap' })]);
    if (D.sampling) append(title, [el('span', { class: 'badge', text: 'estimated' })]);
    append(app, [title, facts]);
  }

  /* ---- the chart ---- */

  /* The largest top-level entries over the detailed snapshots: the
     layers drawn, largest first; the rest is one "other" layer. */
  function chartLayers(detailed) {
    var best = {};
    detailed.forEach(function (s) {
      nodeChildren(s.tree).forEach(function (c) {
        var k = entryKey(nodeLabel(c));
        best[k] = Math.max(best[k] || 0, nodeBytes(c));
      });
    });
    var keys = Object.keys(best).sort(function (a, b) { return best[b] - best[a]; });
    return keys.slice(0, CHART_TOP_ENTRIES);
  }

  /* Per-snapshot layer values: layer k's bytes in detailed snapshot s. */
  function layerValues(detailed, layers) {
    var index = {};
    layers.forEach(function (k, i) { index[k] = i; });
    return detailed.map(function (s) {
      var v = layers.map(function () { return 0; });
      var other = nodeBytes(s.tree);
      nodeChildren(s.tree).forEach(function (c) {
        var i = index[entryKey(nodeLabel(c))];
        if (i !== undefined) { v[i] += nodeBytes(c); other -= nodeBytes(c); }
      });
      v.push(Math.max(other, 0));
      return v;
    });
  }

  /* At most one point per pixel column, the highest: the drawing of a
     long series stays light, and no peak is lost from it. */
  function thin(items, xOf, valueOf) {
    var out = [], column = null, best = null;
    items.forEach(function (it) {
      var c = Math.round(xOf(it));
      if (c !== column) {
        if (best) out.push(best);
        column = c; best = it;
      } else if (valueOf(it) > valueOf(best)) {
        best = it;
      }
    });
    if (best) out.push(best);
    return out;
  }

  /* Round tick values for 0..MAX. */
  function ticks(min, max, n) {
    var span = max - min || 1;
    var step = Math.pow(10, Math.floor(Math.log10(span / n)));
    [1, 2, 5, 10].some(function (m) {
      if (span / (step * m) <= n) { step *= m; return true; }
      return false;
    });
    var out = [];
    for (var v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) out.push(v);
    return out;
  }
  /* Ticks of a byte axis fall on round KiB, MiB...: 256 KiB, not 262 kB. */
  function byteTicks(min, max, n) {
    var unit = 1;
    while (max - min >= 1024 * unit * 2) unit *= 1024;
    return ticks(min / unit, max / unit, n).map(function (v) { return v * unit; });
  }
  function timeText(t) {
    return D.time_unit === 'B' ? bytes(t) : D.time_unit === 'ms' ? count(t) + ' ms' : count(t);
  }

  function chart() {
    var W = 1100, H = 360, L = 80, R = 20, T = 16, B = 46;
    var times = snaps.map(function (s) { return s.time; });
    var tmin = Math.min.apply(null, times.concat([0])), tmax = Math.max.apply(null, times.concat([1]));
    if (tmax === tmin) tmax = tmin + 1;
    var ymax = Math.max.apply(null, snaps.map(function (s) { return s.total; }).concat([1]));
    function x(t) { return L + (t - tmin) / (tmax - tmin) * (W - L - R); }
    function y(b) { return H - B - b / ymax * (H - T - B); }

    var root = svg('svg', { id: 'chart', viewBox: '0 0 ' + W + ' ' + H, role: 'img',
      'aria-label': 'heap over time' });
    /* grid and axes */
    var axis = svg('g', { class: 'axis' });
    byteTicks(0, ymax, 6).forEach(function (v) {
      root.appendChild(svg('line', { class: 'grid', x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      axis.appendChild(svg('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', text: bytes(v) }));
    });
    (D.time_unit === 'B' ? byteTicks : ticks)(tmin, tmax, 8).forEach(function (v) {
      axis.appendChild(svg('line', { x1: x(v), x2: x(v), y1: H - B, y2: H - B + 4 }));
      axis.appendChild(svg('text', { x: x(v), y: H - B + 16, 'text-anchor': 'middle', text: timeText(v) }));
    });
    axis.appendChild(svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B }));
    axis.appendChild(svg('line', { x1: L, x2: L, y1: T, y2: H - B }));
    axis.appendChild(svg('text', { class: 'unit', x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle',
      text: 'time (' + (D.time_unit || '?') + ': ' + (TIME_UNITS[D.time_unit] || 'unknown unit') + ')' }));
    axis.appendChild(svg('text', { x: 14, y: T + (H - T - B) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 14 ' + (T + (H - T - B) / 2) + ')',
      text: D.pages_as_heap ? 'pages mapped (heap + extra + stacks)' : 'heap + extra + stacks' }));

    /* total memory, every snapshot, as an area */
    var series = thin(snaps, function (s) { return x(s.time); }, function (s) { return s.total; });
    if (series.length) {
      var d = 'M' + x(series[0].time) + ',' + y(0);
      series.forEach(function (s) { d += 'L' + x(s.time).toFixed(1) + ',' + y(s.total).toFixed(1); });
      d += 'L' + x(series[series.length - 1].time) + ',' + y(0) + 'Z';
      root.appendChild(svg('path', { class: 'total', d: d }));
    }

    /* stacked layers of the largest entries, over the detailed snapshots */
    var detailed = snaps.filter(function (s) { return s.tree; });
    var layers = chartLayers(detailed);
    var legend = el('div', { class: 'legend' });
    if (detailed.length) {
      var values = layerValues(detailed, layers);
      var rows = detailed.map(function (s, k) { return { s: s, v: values[k] }; });
      rows = thin(rows, function (r) { return x(r.s.time); }, function (r) { return r.s.heap; });
      var names = layers.concat(['(other entries)']);
      var base = rows.map(function () { return 0; });
      names.forEach(function (name, li) {
        var top = rows.map(function (r, k) { return base[k] + r.v[li]; });
        var d = '';
        rows.forEach(function (r, k) { d += (k ? 'L' : 'M') + x(r.s.time).toFixed(1) + ',' + y(top[k]).toFixed(1); });
        for (var k = rows.length - 1; k >= 0; k--) d += 'L' + x(rows[k].s.time).toFixed(1) + ',' + y(base[k]).toFixed(1);
        var color = li < layers.length ? PALETTE[li % PALETTE.length] : '#c7c7c7';
        var path = svg('path', { class: 'layer', d: d + 'Z', fill: color });
        append(path, [svg('title', { text: name })]);
        root.appendChild(path);
        base = top;
        append(legend, [el('span', {}, [el('span', { class: 'sw', style: 'background:' + color }), functionOf(name)])]);
      });
    }
    root.appendChild(axis);

    /* one mark per snapshot: the data, never thinned */
    var cursor = svg('line', { class: 'cursor', y1: T, y2: H - B, x1: -10, x2: -10 });
    root.appendChild(cursor);
    var marks = svg('g', { class: 'marks' });
    snaps.forEach(function (s) {
      var cls = 'snap' + (s.tree ? ' detailed' : '') + (s.i === peakIndex ? ' peak' : '');
      marks.appendChild(svg('circle', { class: cls, 'data-n': s.number, 'data-i': s.i,
        cx: x(s.time).toFixed(1), cy: y(s.total).toFixed(1), r: s.i === peakIndex ? 6 : s.tree ? 3.5 : 2.2 }));
    });
    root.appendChild(marks);
    marks.addEventListener('mouseover', function (ev) { hover(ev, ev.target); });
    marks.addEventListener('mousemove', function (ev) { placeTip(ev); });
    marks.addEventListener('mouseout', function () { tip.hidden = true; });
    marks.addEventListener('click', function (ev) {
      var i = ev.target.getAttribute('data-i');
      if (i !== null) select(snaps[+i]);
    });
    views.cursor = function (s) {
      cursor.setAttribute('x1', x(s.time)); cursor.setAttribute('x2', x(s.time));
    };

    var keyNote = el('div', { class: 'legend' }, [
      el('span', {}, [el('span', { class: 'sw', style: 'background:#555;border-radius:6px' }), 'snapshot']),
      el('span', {}, [el('span', { class: 'sw', style: 'background:#1f5fbf;border-radius:6px' }), 'detailed (has a tree: click it)']),
      el('span', {}, [el('span', { class: 'sw', style: 'background:#d62728;border-radius:6px' }), 'peak']),
      el('span', {}, [el('span', { class: 'sw', style: 'background:#d9d9d9' }), 'heap + extra + stacks'])]);
    append(app, [el('h2', { text: 'Heap over time' }), root, keyNote,
      layers.length ? el('div', { class: 'note', text: 'Layers: the ' + layers.length +
        ' largest top-level entries of the detailed snapshots\u2019 trees, stacked as in massif-visualizer.' }) : null,
      legend]);
  }

  function hover(ev, mark) {
    var i = mark.getAttribute && mark.getAttribute('data-i');
    if (i === null || i === undefined) return;
    var s = snaps[+i];
    tip.innerHTML = '';
    append(tip, [el('b', { text: 'snapshot ' + s.number + (s.i === peakIndex ? ' (peak)' : s.tree ? ' (detailed)' : '') }),
      el('div', { text: 'time ' + grouped(s.time) + ' ' + (D.time_unit || '') }),
      el('div', { text: 'heap ' + bytes(s.heap) + ', extra ' + bytes(s.extra) + ', stacks ' + bytes(s.stacks) })]);
    if (s.tree) {
      nodeChildren(s.tree).slice(0, 8).forEach(function (c) {
        append(tip, [el('span', { class: 'fn', text: percent(nodeBytes(c), s.heap) + '  ' + nodeLabel(c) })]);
      });
      append(tip, [el('i', { text: 'click to show its tree' })]);
    }
    tip.hidden = false;
    placeTip(ev);
  }
  function placeTip(ev) {
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 540) + 'px';
    tip.style.top = (ev.clientY + 14) + 'px';
  }

  /* ---- the tree of one snapshot ---- */

  function treeRow(node, total, depth) {
    var kids = nodeChildren(node);
    var line = [el('span', { class: 'bytes', text: bytes(nodeBytes(node)), title: grouped(nodeBytes(node)) + ' B' }),
      el('span', { class: 'pct', text: percent(nodeBytes(node), total) }),
      el('span', { class: 'bar', style: 'width:' + Math.round(60 * nodeBytes(node) / (total || 1)) + 'px' }),
      el('span', { class: 'fn', text: nodeLabel(node) })];
    if (!kids.length) return el('div', { class: 'leaf' }, line);
    var d = el('details', {}, [el('summary', {}, line)]);
    function fill() {
      if (d.dataset.filled) return;
      d.dataset.filled = '1';
      kids.forEach(function (c) { d.appendChild(treeRow(c, total, depth + 1)); });
    }
    if (depth < TREE_EAGER_DEPTH) { d.open = true; fill(); }
    else d.addEventListener('toggle', function () { if (d.open) fill(); });
    return d;
  }

  function treeView() {
    var title = el('h2', { text: 'Allocation tree' });
    var box = el('div', { id: 'tree' });
    append(app, [title, el('div', { class: 'note', text: 'Bytes and share of the snapshot\u2019s ' + (D.pages_as_heap ? 'pages mapped' : 'heap') + '; click an entry to open or close it.' }), box]);
    views.tree = function (s) {
      title.textContent = 'Allocation tree of snapshot ' + s.number + (s.i === peakIndex ? ' (the peak)' : '');
      box.innerHTML = '';
      if (!s.tree) {
        append(box, [el('p', { class: 'note', text: 'Snapshot ' + s.number + ' is not detailed: Massif keeps no tree for it.' })]);
        return;
      }
      box.appendChild(treeRow(s.tree, nodeBytes(s.tree), 0));
    };
  }

  /* ---- the flame graph (icicle) of one snapshot ---- */

  function flameView() {
    var title = el('h2', { text: 'Flame graph' });
    var crumbs = el('div', { class: 'crumbs' });
    var box = el('div', { id: 'flame' });
    append(app, [title, el('div', { class: 'note', text: 'Callers above their callees, width by bytes; click to zoom in, on a crumb to zoom out. Entries under ' +
      (FLAME_MIN_FRACTION * 100) + '% of the view are not drawn.' }), crumbs, box]);
    var ROW = 17;

    function draw(s, path) {
      var focus = path[path.length - 1];
      var whole = nodeBytes(focus) || 1;
      box.innerHTML = '';
      crumbs.innerHTML = '';
      path.forEach(function (n, k) {
        if (k) append(crumbs, [' \u203a ']);
        var a = el('a', { text: k ? functionOf(nodeLabel(n)) : 'all (' + bytes(nodeBytes(n)) + ')' });
        a.addEventListener('click', function () { draw(s, path.slice(0, k + 1)); });
        crumbs.appendChild(a);
      });
      var drawn = 0, depthMax = 0;
      var frag = document.createDocumentFragment();
      (function place(node, left, depth) {
        var w = nodeBytes(node) / whole;
        if (w < FLAME_MIN_FRACTION || drawn >= FLAME_MAX_NODES) return;
        drawn++;
        depthMax = Math.max(depthMax, depth);
        var label = depth ? functionOf(nodeLabel(node)) : 'all: ' + bytes(nodeBytes(node));
        var div = el('div', { class: 'fr', text: label,
          title: nodeLabel(node) + '\n' + grouped(nodeBytes(node)) + ' B, ' + percent(nodeBytes(node), nodeBytes(path[0])),
          style: 'left:' + (100 * left).toFixed(4) + '%;width:' + (100 * w).toFixed(4) + '%;top:' + depth * ROW + 'px;background:' +
            (depth ? colorOf(functionOf(nodeLabel(node))) : '#ddd') });
        if (depth) div.addEventListener('click', function () { draw(s, pathTo(node)); });
        frag.appendChild(div);
        var at = left;
        nodeChildren(node).forEach(function (c) {
          place(c, at, depth + 1);
          at += nodeBytes(c) / whole;
        });
      })(focus, 0, 0);
      box.appendChild(frag);
      box.style.height = (depthMax + 1) * ROW + 'px';
      /* the path from the snapshot's root to a node under FOCUS */
      function pathTo(target) {
        var found = null;
        (function walk(n, trail) {
          if (found) return;
          if (n === target) { found = trail.concat([n]); return; }
          nodeChildren(n).forEach(function (c) { walk(c, trail.concat([n])); });
        })(focus, path.slice(0, -1));
        return found || path;
      }
    }
    views.flame = function (s) {
      title.textContent = 'Flame graph of snapshot ' + s.number + (s.i === peakIndex ? ' (the peak)' : '');
      if (!s.tree || !nodeBytes(s.tree)) {
        box.innerHTML = '';
        crumbs.innerHTML = '';
        box.style.height = 'auto';
        append(box, [el('p', { class: 'note', text: s.tree ? 'The heap is empty at this snapshot: nothing to draw.' :
          'No tree for this snapshot.' })]);
        return;
      }
      draw(s, [s.tree]);
    };
  }

  function select(s) {
    views.cursor(s);
    views.tree(s);
    views.flame(s);
  }

  /* ---- the per-site tables ---- */

  function frameText(f) {
    return f[0] + (f[1] ? ' (' + f[1] + ')' : '');
  }

  function leakSummary(S) {
    if (!S.leak_check) return null;
    var rows = [['definitely lost', 'definite'], ['indirectly lost', 'indirect'],
      ['possibly lost', 'possible'], ['still reachable', 'reachable']];
    var table = el('table', { class: 'leaks', id: 'leak-summary' }, [
      el('tr', {}, [el('th', { text: 'LEAK SUMMARY (--leak-check=' + S.leak_check.mode + ')' }),
        el('th', { text: 'bytes' }), el('th', { text: 'blocks' })])]);
    rows.forEach(function (r) {
      var v = S.leak_check[r[1]];
      append(table, [el('tr', {}, [el('td', { text: r[0] }), el('td', { text: grouped(v[0]) }), el('td', { text: grouped(v[1]) })])]);
    });
    return table;
  }

  function totalsLine(S) {
    if (!S.totals) return null;
    var t = S.totals;
    return el('p', { text: grouped(t.sites) + ' sites, ' + grouped(t.calls) + ' calls to allocation functions, ' +
      bytes(t.allocated) + ' allocated, ' + grouped(t.temporary) + ' temporary allocations (' +
      percent(t.temporary, t.calls) + '), ' + bytes(t.leaked) + ' leaked in ' + grouped(t.leaked_blocks) + ' blocks.' });
  }

  var COLUMNS = [
    { name: 'site', key: 8, text: true, cls: 'site' },
    { name: 'peak', key: 1, fmt: bytes },
    { name: 'allocated', key: 2, fmt: bytes },
    { name: 'calls', key: 3, fmt: grouped },
    { name: 'temporary', key: 4, fmt: grouped },
    { name: 'leaked', key: 5, fmt: bytes },
    { name: 'leaked blocks', key: 6, fmt: grouped },
    { name: 'id', key: 0, fmt: String }];

  function sitesTable(S) {
    /* r[8], the site's name, is chosen by heaptrace (output/site_name.c) */
    var rows = S.rows.slice();
    var head = el('tr');
    var body = el('tbody');
    var table = el('table', { class: 'sites', id: 'sites' }, [el('thead', {}, [head]), body]);
    var sortBy = COLUMNS[1], ascending = false;
    COLUMNS.forEach(function (c) {
      var th = el('th', { class: c.cls || '', text: c.name, 'data-key': c.key, title: 'sort by ' + c.name });
      th.addEventListener('click', function () {
        ascending = sortBy === c ? !ascending : !!c.text;
        sortBy = c;
        render();
      });
      c.th = th;
      head.appendChild(th);
    });
    function render() {
      var k = sortBy.key;
      rows.sort(function (a, b) {
        var d = sortBy.text ? (a[k] < b[k] ? -1 : a[k] > b[k] ? 1 : 0) : a[k] - b[k];
        return (ascending ? d : -d) || a[0] - b[0];
      });
      COLUMNS.forEach(function (c) {
        c.th.className = (c.cls || '') + (c === sortBy ? ' sorted' + (ascending ? ' asc' : '') : '');
      });
      /* one string: thousands of rows are built in a few milliseconds */
      body.innerHTML = rows.map(function (r, n) {
        return '<tr class="row" data-n="' + n + '">' + COLUMNS.map(function (c) {
          var v = r[c.key];
          return '<td class="' + (c.cls || '') + '"' + (c.text ? '' : ' title="' + grouped(v) + '"') + '>' +
            escapeHtml(c.text ? v : c.fmt(v)) + '</td>';
        }).join('') + '</tr>';
      }).join('');
    }
    body.addEventListener('click', function (ev) {
      var tr = ev.target.closest('tr.row');
      if (!tr) return;
      var next = tr.nextElementSibling;
      if (next && next.classList.contains('stack')) { next.remove(); return; }
      var r = rows[+tr.dataset.n];
      var stack = el('tr', { class: 'stack' }, [el('td', { colspan: COLUMNS.length, class: 'mono',
        text: r[7].map(frameText).join('\n') || '(no frames)' })]);
      tr.after(stack);
    });
    render();
    return table;
  }

  function sitesView() {
    append(app, [el('h2', { text: 'Allocation sites' })]);
    var S = D.sites;
    if (!S && D.pages_as_heap) {
      append(app, [el('p', { class: 'note', id: 'no-sites', text: 'No per-site statistics: with --pages-as-heap only ' +
        'pages mapped are counted (mmap, mremap, brk), not allocator calls. ' +
        'The chart, trees and flame graph above show where the pages went.' })]);
      return;
    }
    if (!S) {
      append(app, [el('p', { class: 'note', id: 'no-sites', text: 'No per-site statistics: there is no ' + D.path +
        '.sites file beside this profile (real Massif writes none; heaptrace writes it at the end of each run). ' +
        'The chart, trees and flame graph above come from the Massif file alone.' })]);
      return;
    }
    append(app, [totalsLine(S), leakSummary(S)]);
    var shown = S.kept < S.count ? 'Showing ' + grouped(S.kept) + ' of ' + grouped(S.count) +
      ' sites: the ' + grouped(S.per_column) + ' largest by each column (the whole list is in `heaptrace report --format=json`). ' : '';
    /* the wrappers heaptrace found in the stacks (output/site_wrappers.c) */
    if (S.wrappers && S.wrappers.length)
      append(app, [el('p', { class: 'note', id: 'wrappers', text: 'Sites are named by the callers of the ' +
        'allocation wrappers ' + S.wrappers.join(', ') + ' (found in the stacks; ' +
        '`heaptrace report --find-wrappers=no` names them).' })]);
    append(app, [el('p', { class: 'note', text: shown + 'Peak: bytes live at the peak snapshot. Temporary: freed by the very next ' +
      'allocator call. Leaked: still live at the end. Click a header to sort, a row to see its stack.' }),
      el('div', { class: 'tablewrap' }, [sitesTable(S)])]);
  }

  /* ---- the page ---- */

  function main() {
    document.body.appendChild(tip);
    header();
    chart();
    /* a peak without a tree (no peak snapshot: the largest one) opens the
       largest detailed snapshot's */
    var detailed = snaps.filter(function (s) { return s.tree; });
    var start = peakIndex >= 0 && snaps[peakIndex].tree ? snaps[peakIndex] :
      detailed.reduce(function (m, s) { return !m || s.heap + s.stacks > m.heap + m.stacks ? s : m; }, null);
    treeView();
    flameView();
    if (start) select(start);
    else if (snaps.length) select(snaps[snaps.length - 1]);
    sitesView();
    document.body.dataset.rendered = 'yes';
    /* since navigation started: parsing, data and drawing (tests read it) */
    document.body.dataset.renderMs = String(Math.round(performance.now()));
  }

  try {
    main();
  } catch (e) {
    showError(e && e.stack ? e.stack : e);
    throw e;
  }
})();
