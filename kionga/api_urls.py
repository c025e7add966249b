"""Public API routes under /api/v1/.

Apps add their routes by appending an ``include`` below (see README "Adding routes").
"""

from django.urls import path

from kionga import views

urlpatterns = [
    path("me", views.me, name="me"),
]
