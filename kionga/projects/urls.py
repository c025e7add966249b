"""Routes of projects' self-administration, included under /api/v1/."""

from django.urls import URLPattern, path

from kionga.projects import notice_views, resource_views, views
from kionga.projects.resources import KINDS

PROJECT = "projects/<int:project_id>/"
RESOURCE = PROJECT + "resources/{kind}/<slug:resource_id>"

urlpatterns: list[URLPattern] = [
    path("me/tokens", views.my_tokens, name="my-tokens"),
    path("me/tokens/<int:token_id>", views.my_token, name="my-token"),
    path("me/invitations", views.my_invitations, name="my-invitations"),
    path("me/invitations/<uuid:invitation_id>/accept", views.accept_invitation,
         name="accept-invitation"),
    path("me/invitations/<uuid:invitation_id>/decline", views.decline_invitation,
         name="decline-invitation"),
    path(PROJECT + "notices", notice_views.notices, name="project-notices"),
    path(PROJECT + "members", views.members, name="project-members"),
    path(PROJECT + "members/<int:user_id>", views.member, name="project-member"),
    path(PROJECT + "invitations", views.project_invitations, name="project-invitations"),
    path(PROJECT + "invitations/<uuid:invitation_id>", views.project_invitation,
         name="project-invitation"),
    path(PROJECT + "tokens", views.project_tokens, name="project-tokens"),
    path(PROJECT + "tokens/<int:token_id>", views.project_token, name="project-token"),
    path(PROJECT + "resources", resource_views.resources, name="project-resources"),
    path(RESOURCE.format(kind="knowledge_base") + "/documents", resource_views.documents,
         name="knowledge-documents"),
    path(RESOURCE.format(kind="knowledge_base") + "/documents/<int:document_id>",
         resource_views.document, name="knowledge-document"),
    path(RESOURCE.format(kind="dataset") + "/objects", resource_views.objects,
         name="dataset-objects"),
    path(RESOURCE.format(kind="mcp_server") + "/tools", resource_views.mcp_tools,
         name="mcp-server-tools"),
]
for _kind in KINDS.values():
    _create, _detail = resource_views.kind_views(_kind)
    urlpatterns += [
        path(PROJECT + f"resources/{_kind.name}", _create, name=f"create-{_kind.name}"),
        path(RESOURCE.format(kind=_kind.name), _detail, name=f"{_kind.name}-detail"),
    ]
