from django.urls import path
from rest_framework.routers import SimpleRouter

from apps.accounts.api import oidc_views, views

router = SimpleRouter()
router.register("tokens", views.ApiTokenViewSet, basename="apitoken")

urlpatterns = [
    path("me/", views.MeView.as_view(), name="me"),
    path("auth/login/", views.LoginView.as_view(), name="login"),
    path("auth/logout/", views.LogoutView.as_view(), name="logout"),
    path("auth/config/", oidc_views.AuthConfigView.as_view(), name="auth-config"),
    path("auth/oidc/login/", oidc_views.OidcLoginView.as_view(), name="oidc-login"),
    path(
        "auth/oidc/callback/",
        oidc_views.OidcCallbackView.as_view(),
        name="oidc-callback",
    ),
    *router.urls,
]
