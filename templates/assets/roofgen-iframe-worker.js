/* roofgen iframe worker (classic script).
 * Browsers refuse to start web workers from file:// pages.  On such pages this
 * replaces window.Worker with IFrameWorker, which runs the worker script in a
 * hidden same-origin iframe (on the main thread) and relays messages.  It
 * provides postMessage, addEventListener("message"), onmessage, onerror,
 * terminate, and inside the worker postMessage, close and a Promise-returning
 * importScripts.  Material for MkDocs' search worker knows this interface
 * (it checks for window.IFrameWorker). */
(function () {
  "use strict";
  if (typeof window.IFrameWorker === "function") return;

  function copy(data) {
    if (typeof structuredClone === "function") return structuredClone(data);
    return data === undefined ? data : JSON.parse(JSON.stringify(data));
  }

  function loadScript(doc, src) {
    return new Promise(function (resolve, reject) {
      var script = doc.createElement("script");
      script.src = src;
      script.onload = function () { resolve(); };
      script.onerror = function () { reject(new Error("cannot load worker script " + src)); };
      (doc.body || doc.documentElement).appendChild(script);
    });
  }

  class IFrameWorker extends EventTarget {
    constructor(url, options) {
      super();
      if (options && options.type === "module") {
        throw new TypeError("IFrameWorker: module workers are not supported");
      }
      this.onmessage = null;
      this.onerror = null;
      this.onmessageerror = null;
      var src = new URL(String(url), document.baseURI).href;
      var frame = document.createElement("iframe");
      frame.hidden = true;
      frame.tabIndex = -1;
      frame.setAttribute("aria-hidden", "true");
      frame.title = "worker";
      (document.body || document.documentElement).appendChild(frame);
      this._frame = frame;
      this._url = src;

      var win = frame.contentWindow;
      var doc = win.document;
      doc.open();
      doc.write("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body></body></html>");
      doc.close();

      var worker = this;
      win.postMessage = function (data) { worker._deliver(data); };
      win.close = function () { worker.terminate(); };
      win.importScripts = function () {
        var urls = Array.prototype.slice.call(arguments);
        return urls.reduce(function (done, next) {
          return done.then(function () { return loadScript(doc, new URL(next, src).href); });
        }, Promise.resolve());
      };
      win.addEventListener("error", function (ev) {
        worker._fail(ev.message, ev.filename, ev.lineno, ev.colno, ev.error);
      });
      this._ready = loadScript(doc, src).then(
        function () { return true; },
        function (err) { worker._fail(err.message, src, 0, 0, err); return false; }
      );
    }

    postMessage(data) {
      var worker = this;
      var payload = copy(data);
      this._ready.then(function (ok) {
        if (!ok || !worker._frame) return;
        var win = worker._frame.contentWindow;
        win.dispatchEvent(new win.MessageEvent("message", { data: payload }));
      });
    }

    terminate() {
      if (this._frame) {
        this._frame.remove();
        this._frame = null;
      }
    }

    _deliver(data) {
      var worker = this;
      var payload = copy(data);
      setTimeout(function () {
        if (!worker._frame) return;
        var ev = new MessageEvent("message", { data: payload });
        worker.dispatchEvent(ev);
        if (typeof worker.onmessage === "function") worker.onmessage(ev);
      }, 0);
    }

    _fail(message, filename, lineno, colno, error) {
      var ev = new ErrorEvent("error", {
        message: message, filename: filename, lineno: lineno, colno: colno, error: error
      });
      this.dispatchEvent(ev);
      if (typeof this.onerror === "function") this.onerror(ev);
    }
  }

  window.IFrameWorker = IFrameWorker;
  if (location.protocol === "file:") window.Worker = IFrameWorker;
})();
