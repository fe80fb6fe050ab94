from django.urls import path
from rest_framework.routers import SimpleRouter

from apps.accounts.api import views

router = SimpleRouter()
router.register("tokens", views.ApiTokenViewSet, basename="apitoken")

urlpatterns = [
    path("me/", views.MeView.as_view(), name="me"),
    path("auth/login/", views.LoginView.as_view(), name="login"),
    path("auth/logout/", views.LogoutView.as_view(), name="logout"),
    *router.urls,
]
