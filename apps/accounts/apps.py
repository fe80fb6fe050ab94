from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"
    verbose_name = "Accounts and API tokens"

    def ready(self) -> None:
        # Imported for its side effect (the extension registers itself), once
        # the app registry is ready, as Django advises for registrations.
        from apps.accounts import schema  # noqa: F401 - registers the OpenAPI extension
