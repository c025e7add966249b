"""Public listener (:8000): API, admin, the apps' web pages, schema/docs, health."""

from django.conf import settings
from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView

from kionga import oidc_views, pages, views, welcome
from kionga.api_docs import SwaggerView
from kionga.app_urls import app_url_includes

urlpatterns = [
    # The API first: the busiest paths, tried against fewer patterns (kionga.api_urls).
    path("api/v1/", include("kionga.api_urls")),
    # The landing page (the sign-in for people who are not signed in), and signing out.
    path("", pages.home, name="home"),
    path("sign-out", pages.sign_out, name="sign-out"),
    # Sign-in through the OpenID Connect provider (404 while none is configured); the
    # names are mozilla-django-oidc's, which it reverses itself.
    path("oidc/authenticate/", oidc_views.start, name="oidc_authentication_init"),
    path("oidc/callback/", oidc_views.callback, name="oidc_authentication_callback"),
    # An invited person's one-time set-password link (kionga.invitation_links).
    path("welcome/<uuid:invitation_id>/<str:token>", welcome.welcome, name="welcome"),
    path("admin/", admin.site.urls),
    path("designer/", include("designer.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Our template: ReDoc from the sidecar's static files, no inline script, no CDN.
    path("api/docs/", SpectacularRedocView.as_view(url_name="schema",
                                                   template_name="kionga/redoc.html"),
         name="docs"),
    # "Try it": Swagger UI, also from the sidecar's files, with our start script.
    path("api/docs/swagger/", SwaggerView.as_view(url_name="schema"), name="docs-swagger"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    # The apps' web pages (approvals/web_urls.py: the approver UI under /approvals/).
    *app_url_includes("web_urls"),
]

if settings.KIONGA_SERVE_STATIC:
    # insecure=True serves files without DEBUG; only for the demo (no proxy in front).
    urlpatterns.append(re_path(r"^static/(?P<path>.*)$", serve_static, {"insecure": True}))
