"use strict";
// Starts Swagger UI on /api/docs/swagger/ (kionga/templates/kionga/swagger_ui.html). A
// static file rather than drf-spectacular's inline script, so the CSP stays
// "script-src 'self'"; its settings come from the page's data attributes.
(() => {
  const root = document.getElementById("swagger-ui");
  const { schemaUrl, settings, csrfHeader, csrfCookie, csrfToken } = root.dataset;
  const SAFE_METHODS = ["GET", "HEAD", "OPTIONS", "TRACE"];

  const cookie = (name) => {
    const found = document.cookie.split("; ").find((pair) => pair.startsWith(`${name}=`));
    return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
  };
  const sameOrigin = (url) => new URL(url, document.baseURI).origin === window.location.origin;

  // "Try it out" sends the browser's session cookie when the person is signed in; Django
  // then wants the CSRF token on writes. The cookie's current token first: signing in
  // (in another tab) rotates it after this page was rendered.
  const requestInterceptor = (request) => {
    const method = (request.method || "GET").toUpperCase();
    if (!SAFE_METHODS.includes(method) && sameOrigin(request.url)) {
      request.headers[csrfHeader] = cookie(csrfCookie) || csrfToken;
    }
    return request;
  };

  window.ui = SwaggerUIBundle({
    url: schemaUrl,
    dom_id: "#swagger-ui",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    requestInterceptor,
    ...JSON.parse(settings),
  });
})();
