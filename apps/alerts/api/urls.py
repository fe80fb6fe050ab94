from django.urls import path

from apps.alerts.api import views

urlpatterns = [
    path("alerts/", views.AlertListView.as_view(), name="alerts"),
    path("alerts/silences/", views.SilenceCreateView.as_view(), name="alert-silences"),
]
