from django.urls import path

from apps.metering.api import views

urlpatterns = [
    path("usage/chips/", views.ChipUsageView.as_view(), name="usage-chips"),
    path(
        "usage/chips/<int:pk>/history/",
        views.ChipHistoryView.as_view(),
        name="usage-chip-history",
    ),
    path("usage/slices/", views.SliceUsageView.as_view(), name="usage-slices"),
    path(
        "usage/slices/<int:pk>/history/",
        views.SliceHistoryView.as_view(),
        name="usage-slice-history",
    ),
    path("usage/report/", views.UsageReportView.as_view(), name="usage-report"),
    path("chip-prices/", views.ChipPriceListView.as_view(), name="chip-prices"),
    path(
        "chip-prices/<str:common_word>/",
        views.ChipPriceView.as_view(),
        name="chip-price",
    ),
]
