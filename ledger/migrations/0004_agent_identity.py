"""Agent identity that look-alike letters cannot spoof.

`key` becomes casefold(NFKC(name)) (fullwidth `Alice` is `alice`), and the new `skeleton` column holds
the key's UTS #39 confusable skeleton, which services.agent_get_or_create compares new names against.

Two agents of one project can share a key once NFKC applies (fullwidth `Alice` and `alice` were two
agents before). Neither is renamed or merged: the one whose key already is the normalised form keeps it, or else
the earliest; the other keeps its old key, stays with its history, and is no longer reachable by name
(a new token for that spelling acts as the first). Both get the same skeleton, which is the truth.
A name too long once normalised keeps its old key and a blank skeleton.

The rules are written out here rather than imported from ledger.values, so this migration keeps doing
what it did when the functions there change.
"""

import unicodedata

from django.db import migrations, models
from homoglyph._skeleton import skeleton as tr39_skeleton

KEY_MAX_LENGTH = 192
SKELETON_MAX_LENGTH = 384


def _key(name):
    return unicodedata.normalize("NFKC", name.strip()).casefold()


def _skeleton(key):
    skeleton = tr39_skeleton(key)
    return skeleton if len(skeleton) <= SKELETON_MAX_LENGTH else ""


def identities(agents):
    """{agent id: (key, skeleton)} for one project's agents (each with `id`, `key`, `name`)."""
    old_keys = {agent.key for agent in agents}
    taken = set()
    result = {}
    for agent in sorted(agents, key=lambda a: a.id):
        normal = _key(agent.name)
        fits = bool(normal) and len(normal) <= KEY_MAX_LENGTH
        key = normal if fits else agent.key
        # A key some row holds, or an earlier row just took, is left alone: no update ever meets the
        # unique constraint half-way, and the row keeps its old key.
        if key != agent.key and (key in old_keys or key in taken):
            key = agent.key
        taken.add(key)
        result[agent.id] = (key, _skeleton(normal) if fits else "")
    return result


def fill_identity(apps, schema_editor):
    Agent = apps.get_model("ledger", "Agent")
    project_ids = Agent.objects.values_list("project_id", flat=True).distinct().order_by("project_id")
    for project_id in project_ids:
        agents = list(Agent.objects.filter(project_id=project_id).only("id", "key", "name"))
        for agent_id, (key, skeleton) in identities(agents).items():
            Agent.objects.filter(pk=agent_id).update(key=key, skeleton=skeleton)


class Migration(migrations.Migration):
    dependencies = [
        ("ledger", "0003_squad_adoption"),
    ]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="skeleton",
            field=models.CharField(blank=True, default="", max_length=384),
        ),
        migrations.RunPython(fill_identity, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="agent",
            index=models.Index(fields=["project", "skeleton"], name="ledger_agent_skeleton"),
        ),
    ]
