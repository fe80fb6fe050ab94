from rest_framework.routers import SimpleRouter

from apps.audit.api import views

router = SimpleRouter()
router.register("audit-events", views.AuditEventViewSet, basename="auditevent")
urlpatterns = router.urls
