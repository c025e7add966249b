// The admin's runs list reads itself again when a run starts or ends: it follows the
// notices (kionga.notices) of the signed-in person's projects, and polls every 30 s as
// well (a missed notice, or runs of projects it does not follow). Never while someone
// is typing in the list or has ticked a row.
(function () {
  "use strict";

  var script = document.currentScript;
  var urls = ((script && script.getAttribute("data-notices")) || "").split(/\s+/).filter(Boolean);
  var POLL_SECONDS = 30;
  var timer = null;

  function busy(form) {
    return form.contains(document.activeElement) || !!form.querySelector("input[type=checkbox]:checked");
  }

  function schedule(seconds) {
    window.clearTimeout(timer);
    timer = window.setTimeout(load, seconds * 1000);
  }

  function load() {
    var current = document.getElementById("changelist-form");
    if (!current || document.hidden || busy(current)) { schedule(POLL_SECONDS); return; }
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        var fresh = html && new DOMParser().parseFromString(html, "text/html").getElementById("changelist-form");
        var now = document.getElementById("changelist-form");
        if (fresh && now && !busy(now) && fresh.innerHTML !== now.innerHTML) {
          now.replaceWith(document.importNode(fresh, true));
        }
      })
      .catch(function () { /* the next notice or poll tries again */ })
      .then(function () { schedule(POLL_SECONDS); });
  }

  urls.forEach(function (url) {
    if (!window.EventSource) { return; }
    var source = new EventSource(url);
    var opened = false;
    source.onmessage = function (message) {
      var kind = "";
      try { kind = String(JSON.parse(message.data).kind || ""); } catch (e) { return; }
      if (kind.indexOf("run.") === 0) { schedule(0.5); }  // a burst of notices: one load
    };
    source.onopen = function () {
      document.documentElement.setAttribute("data-notices", "open");
      if (opened) { schedule(0.5); }  // notices may have been missed meanwhile
      opened = true;
    };
  });
  schedule(POLL_SECONDS);
})();
