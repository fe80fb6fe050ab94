from django.apps import AppConfig
from django.core import checks


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "Accounts and API tokens"

    def ready(self) -> None:
        # Imported for its side effect (the extension registers itself), once
        # the app registry is ready, as Django advises for registrations.
        from apps.accounts import schema  # noqa: F401 - registers the OpenAPI extension
        from apps.accounts.oidc_config import check_oidc_settings

        # An incomplete OIDC_* set is said at start-up (manage.py check,
        # migrate, the server), not at the first person's sign-in.
        checks.register(check_oidc_settings, checks.Tags.security)
