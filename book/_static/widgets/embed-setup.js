// Set-up for the widget embedder (embed-amd.js), loaded after require.js and before the
// embedder (book/_ext/offline_scripts.py). Three things the embedder expects of a page:
(function () {
  "use strict";
  // 1. Its font files lie beside it in _static/widgets; it looks for them next to its
  //    AMD module names (@jupyter-widgets/...), relative to the page (404s otherwise).
  var root = document.documentElement.dataset.content_root || "";
  window.require.config({
    paths: {
      "@jupyter-widgets/html-manager/dist": root + "_static/widgets",
      "@jupyter-widgets": root + "_static/widgets",
    },
  });

  // 2. It typesets HTMLMath widgets with MathJax 2's MathJax.Hub.Queue(["Typeset", ...]);
  //    the book has MathJax 3, whose typesetPromise does the same. MathJax 3 may load
  //    after this file (deferred) and then replaces window.MathJax, so the Hub is added
  //    to whatever window.MathJax becomes; elements queued before MathJax 3 is ready
  //    are typeset once it is.
  var pending = [];
  function typeset(element) {
    var mathjax = window.MathJax;
    if (mathjax && mathjax.startup && mathjax.startup.promise) {
      mathjax.startup.promise.then(function () {
        return mathjax.typesetPromise(element ? [element] : undefined);
      });
    } else {
      pending.push(element);
    }
  }
  function flush() {
    var waiting = pending;
    pending = [];
    waiting.forEach(typeset);
  }
  var hub = {
    Queue: function () {
      Array.prototype.forEach.call(arguments, function (job) {
        typeset(Array.isArray(job) ? job[2] : undefined);
      });
    },
  };
  var current = window.MathJax || {};
  current.Hub = current.Hub || hub;
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    enumerable: true,
    get: function () {
      return current;
    },
    set: function (value) {
      current = value;
      if (value && !value.Hub) value.Hub = hub;
      if (value && value.version) setTimeout(flush, 0); // its startup exists by then
    },
  });
})();

// 3. The theme's Font Awesome (JS) replaces <i class="fa ..."> with <svg>; the Play
//    widget finds its icon as an <i> to switch it. "nest" keeps the <i>.
window.FontAwesomeConfig = Object.assign(window.FontAwesomeConfig || {}, {
  autoReplaceSvg: "nest",
});
