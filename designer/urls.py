"""Pages of the designer canvas, mounted at /designer/ by kionga/urls.py."""

from django.urls import path

from designer import views

app_name = "designer"
urlpatterns = [
    path("", views.home, name="home"),
    path("login/", views.login, name="login"),
    path("designs/<uuid:design_id>/", views.design, name="design"),
]
