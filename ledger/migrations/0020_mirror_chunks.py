"""What the manifest knows of a big file is stored in chunks (`MirrorChunk`, `ledger.mirror.chunks`): a
write stores the chunks that changed. Rows written before keep their whole values in their columns,
which stay readable; the next write of such a file stores them in chunks."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0019_mirror_changes"),
    ]

    operations = [
        migrations.CreateModel(
            name="MirrorChunk",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("digest", models.CharField(max_length=32)),
                ("text", models.TextField()),
                (
                    "file",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="chunks",
                        to="ledger.mirrorfile",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("file", "digest"), name="ledger_mirrorchunk_unique_digest"
                    )
                ],
            },
        ),
    ]
