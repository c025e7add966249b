"""The approver web UI under /approvals/ (server-rendered pages, the Django session).

Mounted by the platform's root URLconf like every app's ``web_urls`` module
(``kionga.app_urls.app_url_includes("web_urls")``).
"""

from django.contrib.auth import views as auth_views
from django.urls import path

from approvals import invitation_views, web_views

app_name = "approver"

urlpatterns = [
    path("approvals/", web_views.approval_list, name="list"),
    path("approvals/<uuid:approval_id>/", web_views.approval_detail, name="detail"),
    path("approvals/<uuid:approval_id>/decision", web_views.approval_decision,
         name="decision"),
    path("approvals/invitations/<uuid:invitation_id>", invitation_views.invitation_answer,
         name="invitation"),
    # Our own sign-in: the admin's refuses people who are not ops staff. django-axes
    # counts and locks its failures like the admin's (it sits in the authentication).
    path("approvals/sign-in/", auth_views.LoginView.as_view(
        template_name="approvals/sign_in.html", redirect_authenticated_user=True,
        next_page="approver:list"), name="sign-in"),
    path("approvals/sign-out", auth_views.LogoutView.as_view(next_page="approver:sign-in"),
         name="sign-out"),
]
