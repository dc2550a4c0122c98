from __future__ import annotations

from django.apps import AppConfig

from ledger.signals import ledger_changed


class LedgerConfig(AppConfig):
    name = "ledger"
    verbose_name = "Ledger"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The mirror listens to the ledger's writes; the ledger never imports the mirror.
        from ledger.mirror import runs

        ledger_changed.connect(runs.export_after_write, dispatch_uid="canon.export_after_write")
