// Progressive enhancement of the approver UI: the pages work without this file.
// - Counts each request's time left down every second (the server rendered the start).
// - Refreshes the live parts of a page (elements with data-live-refresh="<seconds>"):
//   new requests in the list, a pending request's state, a waiting run's events; never
//   while focus is inside one or a comment is being written in it. The request list
//   also follows its projects' notices (data-notices): a notice reloads it at once,
//   and it then polls only every 30 s, in case a notice was missed.
(function () {
  "use strict";

  var serverNow = Date.parse(document.body.getAttribute("data-server-now") || "");
  // The server's clock decides deadlines: correct for a skewed device clock.
  var skew = isNaN(serverNow) ? 0 : serverNow - Date.now();

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function timeLeft(ms) {
    var seconds = Math.floor(ms / 1000);
    if (seconds <= 0) { return "time is up"; }
    var minutes = Math.floor(seconds / 60);
    var hours = Math.floor(minutes / 60);
    seconds = seconds % 60;
    minutes = minutes % 60;
    if (hours) { return hours + " h " + pad(minutes) + " min left"; }
    if (minutes) { return minutes + " min " + pad(seconds) + " s left"; }
    return seconds + " s left";
  }

  function tick() {
    var now = Date.now() + skew;
    var clocks = document.querySelectorAll("[data-expires-at]");
    for (var i = 0; i < clocks.length; i++) {
      var deadline = Date.parse(clocks[i].getAttribute("data-expires-at"));
      if (!isNaN(deadline)) { clocks[i].textContent = timeLeft(deadline - now); }
    }
  }

  // A region's content without the clocks (they tick here and differ from the server's)
  // and without CSRF tokens (masked afresh on every page).
  function signature(element) {
    var copy = element.cloneNode(true);
    var clocks = copy.querySelectorAll("[data-expires-at]");
    for (var i = 0; i < clocks.length; i++) { clocks[i].textContent = ""; }
    var tokens = copy.querySelectorAll("input[name=csrfmiddlewaretoken]");
    for (var j = 0; j < tokens.length; j++) { tokens[j].removeAttribute("value"); }
    return copy.innerHTML;
  }

  // Someone wrote into a field of the region: never swap their words away.
  function hasDraft(element) {
    var fields = element.querySelectorAll("textarea");
    for (var i = 0; i < fields.length; i++) { if (fields[i].value) { return true; } }
    return false;
  }

  // Regions with data-notices="<url> …" follow those project notice streams
  // (kionga.notices): a notice reloads the region at once, and polling slows to this.
  var SLOW_POLL_SECONDS = 30;
  var timers = {};
  var sources = {};

  function following(id) {
    return (sources[id] || []).some(function (source) { return source.readyState === 1; });
  }

  function schedule(id, seconds) {
    window.clearTimeout(timers[id]);
    timers[id] = window.setTimeout(function () { load(id); }, seconds * 1000);
  }

  function refresh(region) {
    var seconds = parseFloat(region.getAttribute("data-live-refresh"));
    if (!(seconds > 0)) { return; }
    schedule(region.id, following(region.id) ? Math.max(seconds, SLOW_POLL_SECONDS) : seconds);
  }

  function load(id) {
    var current = document.getElementById(id);
    if (!current || !current.hasAttribute("data-live-refresh")) { return; }
    if (document.hidden || current.contains(document.activeElement) || hasDraft(current)) {
      // Not now: try again soon (a notice may be waiting), at the region's own pace.
      schedule(id, parseFloat(current.getAttribute("data-live-refresh")) || 5);
      return;
    }
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { refresh(current); return; }
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(id);
        if (!fresh) { return; }
        if (signature(fresh) !== signature(current)
            || fresh.hasAttribute("data-live-refresh") !== current.hasAttribute("data-live-refresh")) {
          var adopted = document.importNode(fresh, true);
          current.replaceWith(adopted);
          tick();
          refresh(adopted);
        } else {
          refresh(current);
        }
      })
      .catch(function () { refresh(current); });
  }

  function words(element, name) {
    return (element.getAttribute(name) || "").split(/\s+/).filter(Boolean);
  }

  function follow(region) {
    var urls = words(region, "data-notices");
    if (!urls.length || !window.EventSource) { return; }
    var id = region.id;
    // The kinds that concern the region, by prefix ("approval."); none: every kind.
    var kinds = words(region, "data-notice-kinds");
    function now() { window.clearTimeout(timers[id]); schedule(id, 0.2); }  // a burst: one load
    function pace() {
      var current = document.getElementById(id);
      if (current) { refresh(current); }
    }
    sources[id] = urls.map(function (url) {
      var source = new EventSource(url);
      var opened = false;
      source.onmessage = function (message) {
        var kind = "";
        try { kind = String(JSON.parse(message.data).kind || ""); } catch (e) { return; }
        if (!kinds.length || kinds.some(function (k) { return kind.indexOf(k) === 0; })) { now(); }
      };
      source.onopen = function () {
        document.documentElement.setAttribute("data-notices", "open");
        // After a reconnect, notices may have been missed: read again; else poll slowly.
        if (opened) { now(); } else { pace(); }
        opened = true;
      };
      source.onerror = function () {
        // The browser reconnects by itself; meanwhile poll at the region's own pace.
        if (!following(id)) { document.documentElement.removeAttribute("data-notices"); pace(); }
      };
      return source;
    });
  }

  // A form came back with errors: take keyboard and screen-reader users to them.
  var problem = document.querySelector("[data-focus-on-load]");
  if (problem) { problem.focus(); }

  tick();
  window.setInterval(tick, 1000);
  var regions = document.querySelectorAll("[data-live-refresh][id]");
  for (var i = 0; i < regions.length; i++) { follow(regions[i]); refresh(regions[i]); }
})();
