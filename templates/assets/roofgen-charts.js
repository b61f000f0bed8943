/* roofgen chart boot script (classic script, needs window.vegaEmbed).
 * Renders every <div class="roofgen-chart" data-spec-id="ID"> from the JSON in
 * <template id="ID"> (or <script type="application/json" id="ID">), then sets
 * document.documentElement.dataset.roofgenCharts to "ready", or to "error" with
 * the reason in dataset.roofgenChartsError. */
(function () {
  "use strict";
  if (window.roofgenCharts) return;

  var root = document.documentElement;
  /* ast: Vega evaluates expressions with its interpreter (bundled with vega-embed)
   * instead of compiling them with Function, so the site's Content-Security-Policy
   * needs no 'unsafe-eval'. */
  var EMBED_OPTIONS = {
    actions: { export: true, source: false, compiled: false, editor: false },
    renderer: "svg",
    ast: true
  };
  var generation = 0;
  var results = [];
  var current = [];

  function setState(state, message) {
    root.dataset.roofgenCharts = state;
    if (message) {
      root.dataset.roofgenChartsError = message;
    } else {
      delete root.dataset.roofgenChartsError;
    }
  }

  /* The spec lives in <template id="ID"> (what chart_html_block writes) or in
   * <script type="application/json" id="ID">.  Scan instead of getElementById so
   * that a heading with the same id does not hide it. */
  function specText(id) {
    var holders = document.querySelectorAll('template[id], script[type="application/json"][id]');
    for (var i = 0; i < holders.length; i++) {
      var holder = holders[i];
      if (holder.id !== id) continue;
      return holder.tagName === "TEMPLATE" ? holder.content.textContent : holder.textContent;
    }
    return null;
  }

  function describe(err) {
    return err && err.message ? err.message : String(err);
  }

  function renderOne(el) {
    var id = el.getAttribute("data-spec-id") || "";
    return new Promise(function (resolve) {
      var text = specText(id);
      if (text === null) throw new Error("no spec element <template id=\"" + id + "\">");
      var spec = JSON.parse(text);
      var options = Object.assign({ downloadFileName: id }, EMBED_OPTIONS);
      resolve(window.vegaEmbed(el, spec, options));
    }).then(
      function (result) {
        el.setAttribute("data-roofgen-chart", "ready");
        return result;
      },
      function (err) {
        el.setAttribute("data-roofgen-chart", "error");
        el.setAttribute("role", "alert");
        el.textContent = "Chart could not be drawn: " + describe(err);
        throw new Error("chart " + id + ": " + describe(err));
      }
    );
  }

  function finalize(list) {
    list.forEach(function (result) {
      try {
        result.finalize();
      } catch (err) {
        /* the view is already gone */
      }
    });
  }

  function chartElements() {
    return Array.prototype.slice.call(document.querySelectorAll("div.roofgen-chart[data-spec-id]"));
  }

  function render() {
    var mine = ++generation;
    finalize(results);
    results = [];
    var charts = chartElements();
    current = charts;
    if (charts.length === 0) {
      setState("ready");
      return Promise.resolve();
    }
    if (typeof window.vegaEmbed !== "function") {
      var missing = "vegaEmbed is not loaded (roofgen-vega.js missing or failed)";
      console.error("roofgen: " + missing);
      setState("error", missing);
      return Promise.resolve();
    }
    setState("pending");
    return Promise.allSettled(charts.map(renderOne)).then(function (outcomes) {
      var done = [];
      var errors = [];
      outcomes.forEach(function (outcome) {
        if (outcome.status === "fulfilled") {
          done.push(outcome.value);
        } else {
          errors.push(describe(outcome.reason));
        }
      });
      if (mine !== generation) {
        finalize(done); /* the page was replaced while these charts rendered */
        return;
      }
      results = done;
      if (errors.length) {
        console.error("roofgen: " + errors.join("; "));
        setState("error", errors.join("; "));
      } else {
        setState("ready");
      }
    });
  }

  /* Material's instant navigation swaps the page content and emits on document$;
   * render again when the set of chart elements changed.  (document$ also replays
   * the first page, which is already rendered; on file:// pages with instant
   * navigation it completes without emitting, hence the render in start.) */
  function refresh() {
    var charts = chartElements();
    var same = charts.length === current.length && charts.every(function (el, i) {
      return el === current[i];
    });
    if (!same) render();
  }

  function start() {
    render();
    var docs = window.document$;
    if (docs && typeof docs.subscribe === "function") {
      docs.subscribe({ next: refresh, error: function () {} });
    }
  }

  window.roofgenCharts = { render: render };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start, { once: true });
  } else {
    start();
  }
})();
