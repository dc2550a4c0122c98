from __future__ import annotations

from django.apps import AppConfig

from ledger.signals import ledger_changed


class LedgerConfig(AppConfig):
    name = "ledger"
    verbose_name = "Ledger"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The export task listens to the ledger's writes; the ledger never imports the layers above it.
        from ledger import tasks

        ledger_changed.connect(tasks.request_export, dispatch_uid="canon.request_export")
