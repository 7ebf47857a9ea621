// Headway dashboard: live regions fed by server-sent events, and AnalysisRun charts.
// No polling: a region is fetched again only when the server says one of its topics changed.
(function () {
  "use strict";

  // Let htmx show refusals (401/403/409) in the flash area instead of dropping them.
  htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[2345]..", swap: true },
  ];

  // One request per region at a time; a change that arrives meanwhile fetches the region
  // once more after the swap, so the last change is always the one shown.
  var inflight = {}, again = {};

  function fetchRegion(id) {
    var region = document.getElementById(id);
    if (!region) return;
    if (inflight[id]) { again[id] = true; return; }
    inflight[id] = true;
    var done = function () {
      inflight[id] = false;
      if (again[id]) { again[id] = false; fetchRegion(id); }
    };
    htmx.ajax("GET", region.dataset.src, { target: region, swap: "outerHTML" })
      .then(done, done);
  }

  function refresh(topics) {
    document.querySelectorAll("[data-topics]").forEach(function (region) {
      var wanted = region.dataset.topics.split(" ");
      if (wanted.some(function (t) { return topics.indexOf(t) >= 0; })) fetchRegion(region.id);
    });
  }

  function connect() {
    if (!window.EventSource) return;
    var stream = new EventSource("/events");
    stream.onopen = function () { document.body.dataset.stream = "open"; };
    stream.onerror = function () { document.body.dataset.stream = "reconnecting"; };
    stream.addEventListener("changed", function (event) {
      refresh(JSON.parse(event.data));
    });
  }

  var colours = { Successful: "#2e7d32", Failed: "#c62828", Error: "#6a1b9a",
                  Inconclusive: "#ef6c00" };

  function markers(u, data) {
    var ctx = u.ctx;
    (data.markers || []).forEach(function (m) {
      var x = u.valToPos(m.at, "x", true);
      if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
      ctx.save();
      ctx.strokeStyle = "#c62828";
      ctx.setLineDash([4, 3]);
      ctx.beginPath();
      ctx.moveTo(x, u.bbox.top);
      ctx.lineTo(x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.fillStyle = "#c62828";
      ctx.font = (12 * devicePixelRatio) + "px sans-serif";
      ctx.fillText(m.label, x + 4, u.bbox.top + 14 * devicePixelRatio);
      ctx.restore();
    });
  }

  function chart(el) {
    if (el.dataset.drawn) return;
    el.dataset.drawn = "1";
    var data = JSON.parse(el.dataset.chart);
    var xs = data.points.map(function (p) { return p[0]; });
    var times = xs.concat((data.markers || []).map(function (m) { return m.at; }));
    var series = [{}];
    var columns = [xs];
    Object.keys(colours).forEach(function (phase) {
      var ys = data.points.map(function (p) { return p[2] === phase ? p[1] : null; });
      if (ys.every(function (y) { return y === null; })) return;
      series.push({ label: phase, stroke: colours[phase], width: 0,
                    points: { show: true, size: 8, fill: colours[phase] } });
      columns.push(ys);
    });
    [["success", "success threshold", "#2e7d32"], ["failure", "failure threshold", "#c62828"]]
      .forEach(function (t) {
        if (data[t[0]] === null || data[t[0]] === undefined) return;
        series.push({ label: t[1], stroke: t[2], dash: [6, 4], width: 1, points: { show: false } });
        columns.push(xs.map(function () { return data[t[0]]; }));
      });
    var lo = Math.min.apply(null, times), hi = Math.max.apply(null, times);
    new uPlot({
      width: Math.max(320, el.clientWidth || 480), height: 200,
      scales: { x: { time: true, range: function () { return [lo - 5, hi + 5]; } } },
      series: series,
      hooks: { draw: [function (u) { markers(u, data); }] },
    }, columns, el);
  }

  function drawCharts(root) {
    (root || document).querySelectorAll("[data-chart]").forEach(function (el) {
      if (JSON.parse(el.dataset.chart).points.length) chart(el);
    });
  }

  htmx.onLoad(function (el) { drawCharts(el); });
  document.addEventListener("DOMContentLoaded", function () { connect(); });
})();
